#include "reference/fast/dd_kernels.h"

#include <atomic>
#include <stdexcept>

namespace attnv::reference::dd {
namespace {

Isa detect() { return cpu_has_avx2_fma() ? Isa::avx2 : Isa::portable; }

std::atomic<Isa>& chosen() {
  static std::atomic<Isa> isa{detect()};
  return isa;
}

}  // namespace

bool cpu_has_avx2_fma() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

Isa active_isa() { return chosen().load(); }

void force_isa(Isa isa) {
  if (isa == Isa::avx2 && !cpu_has_avx2_fma())
    throw std::runtime_error("force_isa: this CPU has no AVX2+FMA");
  chosen().store(isa);
}

const Kernels& active_kernels() {
  static const Kernels portable = portable_kernels();
  static const Kernels avx2 = cpu_has_avx2_fma() ? avx2_kernels() : portable_kernels();
  return active_isa() == Isa::avx2 ? avx2 : portable;
}

}  // namespace attnv::reference::dd
