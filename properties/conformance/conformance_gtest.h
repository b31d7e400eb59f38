#pragma once
// The conformance suite as GoogleTest tests on your own kernel: one test per requirement of the
// registry (properties/requirements/), registered for a kernel factory. In ONE source file of your test
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

// One requirement on one kernel: a test registered per requirement of the registry
// (requirements()), so a new requirement is a new test without touching this file.
class ConformanceTest : public ::testing::Test {
 public:
  ConformanceTest(KernelUnderTest kernel, std::string id) : kernel_(std::move(kernel)), id_(std::move(id)) {}
  void TestBody() override {
    const ConformanceOptions o = options_from_environment();
    const std::unique_ptr<Kernel> kernel = kernel_.make();
    ASSERT_TRUE(kernel) << "the kernel factory returned null";
    ConformanceOptions one = o;
    one.only = {id_};
    bool passed = false;
    bool declined = false;  // a dtype the kernel declined: never [ OK ], whatever the others did
    std::string skipped;
    for (const RequirementResult& r : run_conformance(*kernel, one).results) {
      std::cout << describe(r) << '\n';
      EXPECT_NE(r.verdict, Verdict::fail) << describe(r);
      // attnv could not judge: the suite did not do its job (never the kernel's finding, but never
      // a quiet pass or skip either).
      EXPECT_NE(r.verdict, Verdict::attnv_error) << "attnv's own error, not the kernel's: " << describe(r);
      passed = passed || r.verdict == Verdict::pass;
      declined = declined || r.verdict == Verdict::not_supported;
      if (r.verdict == Verdict::not_claimed || r.verdict == Verdict::not_exercised || r.verdict == Verdict::note ||
          r.verdict == Verdict::not_judged || r.verdict == Verdict::not_supported)
        skipped += std::string(skipped.empty() ? "" : "; ") + describe(r);
    }
    // Nothing passed and nothing failed: not claimed, NOT EXERCISED, NOTE or NOT JUDGED on every dtype. A skip,
    // so that the suite never reports [ OK ] for a requirement that judged nothing. NOT SUPPORTED
    // (the kernel declined every case of a dtype it claims) skips too, even beside a pass.
    if ((!passed || declined) && !HasFailure()) GTEST_SKIP() << skipped;
  }

 private:
  KernelUnderTest kernel_;
  std::string id_;
};

// Registers "Name/ConformanceTest.R1_matches_reference/Name" and so on, one per requirement.
inline bool register_conformance_suite(const char* name, const char* file, int line, KernelFactory make) {
  const std::string suite = std::string(name) + "/ConformanceTest";
  for (const Requirement& r : requirements()) {
    const std::string test = r.id + "_" + r.property + "/" + name;
    const KernelUnderTest kernel{name, make};
    const std::string id = r.id;
    ::testing::RegisterTest(suite.c_str(), test.c_str(), nullptr, nullptr, file, line,
                            [kernel, id]() -> ::testing::Test* { return new ConformanceTest(kernel, id); });
  }
  return true;
}


}  // namespace attnv::conformance

// One line in the user's test file: the suite on their kernel. `...` is the factory (a lambda
// returning std::unique_ptr<attnv::Kernel>; commas inside it are fine).
#define ATTNV_CONFORMANCE_SUITE(Name, ...)                                                                   \
  [[maybe_unused]] static const bool attnv_conformance_suite_##Name =                                       \
      ::attnv::conformance::register_conformance_suite(#Name, __FILE__, __LINE__, __VA_ARGS__)
