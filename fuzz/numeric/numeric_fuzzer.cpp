// Differential numeric fuzz target: any attnv::Kernel (kernel_choice.h) against the fast
// reference, judged by the error bound of the kernel's declared precision model.
//
// Per input: bytes -> Case (case_genome.h) -> exact outputs (ref::fast_forward) and bounds
// (bound::forward_bound) -> the kernel through strided buffers in the genome's layout, with
// floating-point exceptions trapped -> findings:
//   * an element outside its bound (bound::compare; fully masked rows must be exactly O = 0,
//     LSE = -inf, so this covers them too);
//   * NaN anywhere in the kernel's O (also in fully masked rows);
//   * an input buffer written (CaseBuffers::inputs_unchanged);
//   * a second call on the same inputs returning different bits (determinism);
//   * a floating-point exception inside the kernel (SIGFPE, see fp_trap.h).
// A finding prints the case and the comparison and calls __builtin_trap(), so libFuzzer saves
// the input as crash-<sha1>; replay it with the same binary and ATTNV_FUZZ_KERNEL.
// ATTNV_FUZZ_DTYPE=f32|f16|bf16|f64 keeps every case in one storage dtype (per-dtype campaigns).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fuzz/numeric/case_genome.h"
#include "fuzz/numeric/fp_trap.h"
#include "fuzz/numeric/kernel_choice.h"
#include "fuzz/numeric/numeric_signal.h"
#include "problem/buffers.h"
#include "problem/error.h"
#include "problem/validate.h"
#include "reference/bound/bound.h"
#include "reference/fast/fast.h"

namespace {

using namespace attnv;

Kernel& kernel_under_test() {
  static const std::unique_ptr<Kernel> k = fuzz::make_kernel_under_test(fuzz::kernel_under_test_name());
  return *k;
}

// The kernel's claims, narrowed to one storage dtype when ATTNV_FUZZ_DTYPE is set (a campaign
// per dtype: every input then decodes to a case in that dtype).
const Capabilities& fuzzed_claims() {
  static const Capabilities caps = [] {
    Capabilities c = kernel_under_test().capabilities();
    if (const char* env = std::getenv("ATTNV_FUZZ_DTYPE"); env && *env) {
      const std::optional<DType> d = parse_dtype(env);
      if (!d || std::find(c.dtypes.begin(), c.dtypes.end(), *d) == c.dtypes.end()) {
        std::fprintf(stderr, "fuzz_numeric: ATTNV_FUZZ_DTYPE=%s is not a dtype the kernel claims\n", env);
        std::exit(2);
      }
      c.dtypes = {*d};
    }
    return c;
  }();
  return caps;
}

// The first values of a tensor, exactly ("%a" keeps every bit).
void print_values(const char* name, const std::vector<double>& v) {
  if (v.empty()) return;
  std::fprintf(stderr, "  %s[%zu]:", name, v.size());
  for (std::size_t i = 0; i < v.size() && i < 12; ++i) std::fprintf(stderr, " %a", v[i]);
  std::fprintf(stderr, v.size() > 12 ? " ...\n" : "\n");
}

// Determinism (the property suite's "determinism"): a second call with the same inputs and
// layout must return the same bits. ATTNV_FUZZ_TWICE=0 skips it (half the kernel time).
bool run_twice() {
  static const bool on = [] {
    const char* env = std::getenv("ATTNV_FUZZ_TWICE");
    return !(env && env[0] == '0');
  }();
  return on;
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}
bool same_bits(const Outputs& a, const Outputs& b) { return same_bits(a.out, b.out) && same_bits(a.lse, b.lse); }

[[noreturn]] void finding(const Case& c, const std::string& what) {
  std::fprintf(stderr, "\nfuzz finding (%s): %s\n  case: %s\n", kernel_under_test().name().c_str(), what.c_str(),
               describe(c.problem).c_str());
  print_values("q", c.q);
  print_values("k", c.k);
  print_values("v", c.v);
  print_values("bias", c.bias);
  for (std::size_t b = 0; b < c.kv_len.size(); ++b) std::fprintf(stderr, "  kv_len[%zu] = %lld\n", b, static_cast<long long>(c.kv_len[b]));
  __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  std::fprintf(stderr, "fuzz_numeric: kernel under test '%s', dtypes", kernel_under_test().name().c_str());
  for (DType d : fuzzed_claims().dtypes) std::fprintf(stderr, " %s", dtype_name(d).data());
  std::fprintf(stderr, "\n");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Kernel& kernel = kernel_under_test();
  const fuzz::Genome g = fuzz::decode(data, size);
  const Case c = fuzz::to_case(g, fuzzed_claims());
  if (const auto errs = check_case(c); !errs.empty()) finding(c, "the decoder made an invalid case: " + errs.front());
  static const bool print = std::getenv("ATTNV_FUZZ_PRINT") != nullptr;  // what an input decodes to
  if (print) std::fprintf(stderr, "fuzz_numeric: %s layout %s\n", describe(c.problem).c_str(), layout_name(fuzz::layout_of(g)).data());

  Outputs exact;
  try {
    exact = ref::fast_forward(c, ref::FastOptions{.threads = 1});
  } catch (const InputError&) {
    // The fast reference declines cases whose error radius it cannot keep finite (huge logits
    // that cancel: A = sum |q k| near 2^86 leaves it no correct digits). Not a kernel finding;
    // -1 keeps the input out of the corpus.
    return -1;
  }
  const PrecisionModel model = kernel.precision(c.problem.dtype);
  const bound::Bounds bounds = bound::forward_bound(c, exact, model);

  const Layout layout = kernel.capabilities().strided ? fuzz::layout_of(g) : Layout::bhtd;
  CaseBuffers buffers(c, layout, /*backward=*/false);
  if (const auto errs = check_views(c.problem, buffers.views()); !errs.empty())
    finding(c, "CaseBuffers made invalid views: " + errs.front());
  {
    fuzz::FpTrap trap;
    kernel.forward(c.problem, buffers.views());
  }
  const Outputs got = buffers.outputs();
  if (!buffers.inputs_unchanged()) finding(c, "the kernel wrote into an input buffer");
  if (run_twice()) {
    CaseBuffers again(c, layout, /*backward=*/false);
    {
      fuzz::FpTrap trap;
      kernel.forward(c.problem, again.views());
    }
    if (!same_bits(got, again.outputs())) finding(c, "a second call on the same inputs gave different bits");
  }

  const bound::Comparison cmp = bound::compare(got, exact, bounds, model.out);
  fuzz::record_signals(c, exact, cmp);
  for (double o : got.out)
    if (std::isnan(o)) finding(c, "NaN in the output\n" + cmp.summary());
  if (!cmp.ok()) finding(c, "outside the error bound\n" + cmp.summary());
  return 0;
}
