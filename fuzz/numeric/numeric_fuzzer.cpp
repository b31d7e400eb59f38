// Differential numeric fuzz target: any attnv::Kernel (kernel_choice.h) against the fast
// reference, judged by the error bound of the kernel's declared precision model. A thin wrapper
// over the shared differential judge (differential_judge.h, which lists the findings; `attnv fuzz` uses the same one):
// bytes -> Genome (case_genome.h) -> judge_genome -> on a finding, print the case and call
// __builtin_trap() so libFuzzer saves the input as crash-<sha1> (replay it with the same binary
// and ATTNV_FUZZ_KERNEL); otherwise the numeric signal buckets go to libFuzzer's extra counters.
// The forward always; the backward too where the kernel claims it (dO from the genome's seed).
// ATTNV_FUZZ_DTYPE=f32|f16|bf16|f64 keeps every case in one storage dtype (per-dtype campaigns).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fuzz/numeric/case_genome.h"
#include "fuzz/numeric/fp_trap.h"
#include "fuzz/numeric/kernel_choice.h"
#include "fuzz/numeric/numeric_signal.h"
#include "fuzz/numeric/differential_judge.h"
#include "problem/error.h"
#include "problem/features/registry.h"

namespace {

using namespace attnv;

// One byte per numeric_signal bucket, read by libFuzzer as coverage (it clears them before
// every input). Compiled in and on by default, else -merge=1 would drop the climbing corpus.
constexpr int kCounters = 1024;
__attribute__((used, section("__libfuzzer_extra_counters"))) std::uint8_t counters[kCounters];

bool env_off(const char* name) {
  const char* env = std::getenv(name);
  return env && env[0] == '0';
}

Kernel& kernel_under_test() {
  static const std::unique_ptr<Kernel> k = fuzz::make_kernel_under_test(fuzz::kernel_under_test_name());
  return *k;
}

const Capabilities& fuzzed_claims() {
  static const Capabilities caps = [] {
    std::optional<DType> d;
    if (const char* env = std::getenv("ATTNV_FUZZ_DTYPE"); env && *env) {
      d = parse_dtype(env);
      if (!d) {
        std::fprintf(stderr, "fuzz_numeric: ATTNV_FUZZ_DTYPE=%s is not a dtype (f64, f32, f16, bf16)\n", env);
        std::exit(2);
      }
    }
    try {
      return fuzz::fuzzed_claims(kernel_under_test(), d);
    } catch (const InputError& e) {
      std::fprintf(stderr, "fuzz_numeric: ATTNV_FUZZ_DTYPE: %s\n", e.what());
      std::exit(2);
    }
  }();
  return caps;
}

const fuzz::DifferentialOptions& options() {
  static const fuzz::DifferentialOptions opt = [] {
    fuzz::DifferentialOptions o;
    o.twice = !env_off("ATTNV_FUZZ_TWICE");  // the second call costs half the kernel time
    o.fp = fuzz::fp_trap_enabled() ? fuzz::FpCheck::trap : fuzz::FpCheck::off;
    return o;
  }();
  return opt;
}

// The first values of a tensor, exactly ("%a" keeps every bit).
void print_values(const char* name, const std::vector<double>& v) {
  if (v.empty()) return;
  std::fprintf(stderr, "  %s[%zu]:", name, v.size());
  for (std::size_t i = 0; i < v.size() && i < 12; ++i) std::fprintf(stderr, " %a", v[i]);
  std::fprintf(stderr, v.size() > 12 ? " ...\n" : "\n");
}

[[noreturn]] void report(const fuzz::Finding& f) {
  const Case& c = f.c;
  std::fprintf(stderr, "\nfuzz finding (%s, %s): %s\n", kernel_under_test().name().c_str(),
               std::string(fail_kind_id(f.kind)).c_str(), f.message.c_str());
  if (!f.worst.empty()) std::fprintf(stderr, "  worst: %s\n", f.worst.c_str());
  std::fprintf(stderr, "  case: %s\n", fuzz::case_line(c, f.layout).c_str());
  if (f.decode) std::fprintf(stderr, "  decode of this prompt: %s\n", judge::plan_line(*f.decode).c_str());
  print_values("q", c.q);
  print_values("k", c.k);
  print_values("v", c.v);
  print_values("bias", c.bias);
  print_values("dout", c.dout);
  // The inputs the tables describe, each by its name, so a new one is printed without a line here.
  for (const HeadInput& in : kHeadInputs) print_values(in.name.data(), c.*in.values);
  for (const IndexInput& in : kIndexInputs) {
    const std::vector<std::int64_t>& x = c.*in.values;
    for (std::size_t i = 0; i < x.size(); ++i)
      std::fprintf(stderr, "  %s[%zu] = %lld\n", in.name.data(), i, static_cast<long long>(x[i]));
  }
  __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  static_assert(kCounters > 0);
  if (fuzz::kSignalBuckets > kCounters) {
    std::fprintf(stderr, "fuzz_numeric: %d signal buckets, %d counters\n", fuzz::kSignalBuckets, kCounters);
    std::exit(2);
  }
  std::fprintf(stderr, "fuzz_numeric: kernel under test '%s', dtypes", kernel_under_test().name().c_str());
  for (DType d : fuzzed_claims().dtypes) std::fprintf(stderr, " %s", dtype_name(d).data());
  std::fprintf(stderr, fuzzed_claims().backward ? ", forward and backward" : ", forward");
  std::fprintf(stderr, fuzzed_claims().decode ? ", decode\n" : "\n");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const fuzz::Genome g = fuzz::decode(data, size);
  static const bool print = std::getenv("ATTNV_FUZZ_PRINT") != nullptr;  // what an input decodes to
  if (print) {
    const Capabilities& caps = fuzzed_claims();
    std::fprintf(stderr, "fuzz_numeric: %s\n", fuzz::case_line(fuzz::to_case(g, caps), fuzz::genome_layout(g, caps)).c_str());
  }
  const fuzz::Verdict v = fuzz::judge_genome(kernel_under_test(), g, fuzzed_claims(), options());
  // -1 keeps an input the reference declines out of the corpus.
  if (!v.judged) return -1;
  if (v.finding) report(*v.finding);
  static const bool signals = !env_off("ATTNV_FUZZ_SIGNALS");
  if (signals)
    for (std::uint16_t b : v.buckets) counters[b] = 1;
  return 0;
}
