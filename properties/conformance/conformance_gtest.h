#pragma once
// The conformance suite as GoogleTest tests on your own kernel: one TEST per requirement R1..R21
// (conformance.h), value-parameterized on a kernel factory. In ONE source file of your test
// binary (it defines the tests):
//
//   #include "properties/conformance/conformance_gtest.h"
//   ATTNV_CONFORMANCE_SUITE(MyKernel, [] { return std::make_unique<MyKernel>(); });
//
// Each test runs its requirement on every dtype the kernel claims and fails with the findings:
// message, worst element, the one-line reproduction ("R5 no_leakage dtype=f32 seed=... case=17")
// and the folder the case was saved to. The environment chooses the depth:
//   ATTNV_CONFORMANCE_TIER  quick (default) | standard | full
//   ATTNV_CONFORMANCE_SEED  the seed (default 20261121: CI is deterministic)
//   ATTNV_CONFORMANCE_DTYPES  e.g. "f32,bf16" (default: every claimed dtype)
//   ATTNV_CONFORMANCE_SAVE_DIR  where failing cases are saved (default: none)
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "properties/conformance/conformance.h"

namespace attnv::conformance {

struct KernelUnderTest {
  std::string name;
  KernelFactory make;
};
inline void PrintTo(const KernelUnderTest& k, std::ostream* os) { *os << k.name; }

inline ConformanceOptions options_from_environment() {
  ConformanceOptions o;
  if (const char* t = std::getenv("ATTNV_CONFORMANCE_TIER"); t && *t) o.tier = parse_tier(t);
  if (const char* s = std::getenv("ATTNV_CONFORMANCE_SEED"); s && *s) o.seed = std::strtoull(s, nullptr, 10);
  if (const char* d = std::getenv("ATTNV_CONFORMANCE_DTYPES"); d && *d) {
    std::string list = d;
    for (std::size_t start = 0; start <= list.size();) {
      const std::size_t end = std::min(list.find(',', start), list.size());
      if (end > start) {
        const auto dt = parse_dtype(list.substr(start, end - start));
        if (!dt) throw std::invalid_argument("ATTNV_CONFORMANCE_DTYPES: unknown dtype " + list.substr(start, end - start));
        o.dtypes.push_back(*dt);
      }
      start = end + 1;
    }
  }
  if (const char* p = std::getenv("ATTNV_CONFORMANCE_SAVE_DIR"); p && *p) o.save_failures_dir = p;
  return o;
}

class ConformanceTest : public ::testing::TestWithParam<KernelUnderTest> {
 protected:
  void check(const char* id) {
    const ConformanceOptions o = options_from_environment();
    const std::unique_ptr<Kernel> kernel = GetParam().make();
    ASSERT_TRUE(kernel) << "the kernel factory returned null";
    ConformanceOptions one = o;
    one.only = {id};
    bool passed = false;
    std::string skipped;
    for (const RequirementResult& r : run_conformance(*kernel, one).results) {
      std::cout << describe(r) << '\n';
      EXPECT_NE(r.verdict, Verdict::fail) << describe(r);
      // attnv could not judge: the suite did not do its job (never the kernel's finding, but never
      // a quiet pass or skip either).
      EXPECT_NE(r.verdict, Verdict::attnv_error) << "attnv's own error, not the kernel's: " << describe(r);
      passed = passed || r.verdict == Verdict::pass;
      if (r.verdict == Verdict::not_claimed || r.verdict == Verdict::not_exercised || r.verdict == Verdict::note ||
          r.verdict == Verdict::not_judged)
        skipped += std::string(skipped.empty() ? "" : "; ") + describe(r);
    }
    // Nothing passed and nothing failed: not claimed, NOT EXERCISED, NOTE or NOT JUDGED on every dtype. A skip,
    // so that the suite never reports [ OK ] for a requirement that judged nothing.
    if (!passed && !HasFailure()) GTEST_SKIP() << skipped;
  }
};

#define ATTNV_CONFORMANCE_TEST_(R, name) \
  TEST_P(ConformanceTest, R##_##name) { check(#R); }
ATTNV_CONFORMANCE_TEST_(R1, matches_reference)
ATTNV_CONFORMANCE_TEST_(R2, backward_matches_reference)
ATTNV_CONFORMANCE_TEST_(R3, rows_sum_to_one)
ATTNV_CONFORMANCE_TEST_(R4, convex_hull)
ATTNV_CONFORMANCE_TEST_(R5, no_leakage)
ATTNV_CONFORMANCE_TEST_(R6, hidden_nonfinite)
ATTNV_CONFORMANCE_TEST_(R7, fully_masked_rows)
ATTNV_CONFORMANCE_TEST_(R8, query_permutation)
ATTNV_CONFORMANCE_TEST_(R9, key_permutation)
ATTNV_CONFORMANCE_TEST_(R10, gqa_repeat_interleave)
ATTNV_CONFORMANCE_TEST_(R11, layout_invariance)
ATTNV_CONFORMANCE_TEST_(R12, batch_head_independence)
ATTNV_CONFORMANCE_TEST_(R13, determinism)
ATTNV_CONFORMANCE_TEST_(R14, inputs_unchanged)
ATTNV_CONFORMANCE_TEST_(R15, unbiased_rounding)
ATTNV_CONFORMANCE_TEST_(R16, key_translation)
ATTNV_CONFORMANCE_TEST_(R17, v_linearity)
ATTNV_CONFORMANCE_TEST_(R18, score_rank)
ATTNV_CONFORMANCE_TEST_(R19, entropy_temperature)
ATTNV_CONFORMANCE_TEST_(R20, score_variance)
ATTNV_CONFORMANCE_TEST_(R21, decode_equals_prefill)
#undef ATTNV_CONFORMANCE_TEST_

}  // namespace attnv::conformance

// One line in the user's test file: the suite on their kernel. `...` is the factory (a lambda
// returning std::unique_ptr<attnv::Kernel>; commas inside it are fine).
#define ATTNV_CONFORMANCE_SUITE(Name, ...)                                   \
  namespace attnv::conformance {                                             \
  INSTANTIATE_TEST_SUITE_P(Name, ConformanceTest,                            \
                           ::testing::Values(KernelUnderTest{#Name, __VA_ARGS__})); \
  }                                                                          \
  static_assert(true, "")
