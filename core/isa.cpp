#include "core/isa.h"

#include <cstdlib>
#include <cstring>

#include "problem/error.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace attnv::core {

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::best: return "best";
    case Isa::portable: return "portable";
    case Isa::avx2: return "avx2";
    case Isa::avx512: return "avx512";
    case Isa::avx512_bf16: return "avx512_bf16";
  }
  return "?";
}

const char* isa_features(Isa isa) {
  switch (isa) {
    case Isa::best: return "best";
    case Isa::portable: return "portable";
    case Isa::avx2: return "avx2+fma+f16c";
    case Isa::avx512: return "avx512f+avx512bw+avx512vl+avx512dq+fma+f16c";
    case Isa::avx512_bf16: return "avx512f+avx512bw+avx512vl+avx512dq+avx512bf16+fma+f16c";
  }
  return "?";
}

std::optional<Isa> parse_isa(std::string_view name) {
  for (Isa i : {Isa::portable, Isa::avx2, Isa::avx512, Isa::avx512_bf16})
    if (name == isa_name(i)) return i;
  return std::nullopt;
}

namespace {

#if defined(__x86_64__)
// XCR0 through xgetbv (only called when cpuid says OSXSAVE): which register state the OS saves.
std::uint64_t xcr0() {
  unsigned lo = 0, hi = 0;
  __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (std::uint64_t{hi} << 32) | lo;
}

CpuFeatures detect() {
  CpuFeatures f;
  f.x86_64 = true;
  unsigned a = 0, b = 0, c = 0, d = 0;
  // Leaf 0: the vendor string in EBX, EDX, ECX ("AuthenticAMD"; Hygon's Zen parts say "HygonGenuine").
  if (__get_cpuid(0, &a, &b, &c, &d)) {
    char v[13] = {};
    std::memcpy(v, &b, 4);
    std::memcpy(v + 4, &d, 4);
    std::memcpy(v + 8, &c, 4);
    f.amd = std::strcmp(v, "AuthenticAMD") == 0 || std::strcmp(v, "HygonGenuine") == 0;
  }
  if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
  const bool osxsave = (c & bit_OSXSAVE) != 0;
  const std::uint64_t x = osxsave ? xcr0() : 0;
  // SSE + AVX state (bits 1, 2); AVX-512 adds opmask, upper ZMM0-15 and ZMM16-31 (bits 5, 6, 7).
  const bool ymm_state = (x & 0x6) == 0x6;
  const bool zmm_state = ymm_state && (x & 0xe0) == 0xe0;
  f.fma = ymm_state && (c & bit_FMA) != 0;
  f.f16c = ymm_state && (c & bit_F16C) != 0;
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
    f.avx2 = ymm_state && (b & bit_AVX2) != 0;
    f.avx512f = zmm_state && (b & bit_AVX512F) != 0;
    f.avx512bw = zmm_state && (b & bit_AVX512BW) != 0;
    f.avx512vl = zmm_state && (b & bit_AVX512VL) != 0;
    f.avx512dq = zmm_state && (b & bit_AVX512DQ) != 0;
  }
  // Leaf 7 subleaf 1, EAX bit 5: AVX512_BF16.
  if (__get_cpuid_count(7, 1, &a, &b, &c, &d)) f.avx512bf16 = zmm_state && (a & (1u << 5)) != 0;
  return f;
}
#else
CpuFeatures detect() { return {}; }
#endif

void add(std::string& list, bool has, const char* name) {
  if (has) return;
  if (!list.empty()) list += ", ";
  list += name;
}

}  // namespace

const CpuFeatures& cpu_features() {
  static const CpuFeatures f = detect();
  return f;
}

std::string missing_features(Isa isa, const CpuFeatures& cpu) {
  std::string m;
  if (isa == Isa::portable || isa == Isa::best) return m;
  if (!cpu.x86_64) return "x86-64 (this build has only the portable path)";
  if (isa == Isa::avx512 || isa == Isa::avx512_bf16) {
    add(m, cpu.avx512f, "avx512f");
    add(m, cpu.avx512bw, "avx512bw");
    add(m, cpu.avx512vl, "avx512vl");
    add(m, cpu.avx512dq, "avx512dq");
    if (isa == Isa::avx512_bf16) add(m, cpu.avx512bf16, "avx512bf16");
  } else {
    add(m, cpu.avx2, "avx2");
  }
  add(m, cpu.fma, "fma");
  add(m, cpu.f16c, "f16c");
  return m;
}

Isa widest_isa(const CpuFeatures& cpu) {
  for (Isa i : {Isa::avx512, Isa::avx2})
    if (missing_features(i, cpu).empty()) return i;
  return Isa::portable;
}

Isa resolve_isa(Isa requested, const char* env, const CpuFeatures& cpu) {
  std::string origin = "ForwardOptions::isa";
  if (requested == Isa::best) {
    if (env == nullptr || *env == '\0') return widest_isa(cpu);
    const std::optional<Isa> e = parse_isa(env);
    if (!e)
      throw InputError(std::string("ATTNV_CORE_ISA=") + env +
                       ": unknown ISA path (the paths are portable, avx2, avx512 and avx512_bf16)");
    requested = *e;
    origin = std::string("ATTNV_CORE_ISA=") + env;
  }
  const std::string missing = missing_features(requested, cpu);
  if (!missing.empty())
    throw InputError("core: " + origin + " asks for the " + isa_name(requested) + " path, but this CPU lacks " +
                     missing + " (it runs " + isa_name(widest_isa(cpu)) + ")");
  return requested;
}

Isa resolve_isa(Isa requested) { return resolve_isa(requested, std::getenv("ATTNV_CORE_ISA"), cpu_features()); }

}  // namespace attnv::core
