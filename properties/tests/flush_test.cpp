// A kernel that really flushes subnormals: the naive kernel run under MXCSR FTZ|DAZ
// (kernels/flush_guard.h), judged by the requirements against the flush_subnormals model
// (reference/bound/BOUND.md section 12) on cases whose values reach the subnormal range.
//  (a) declared, it passes R1, R2, R9 and R17 on every such case (and the cases are counted:
//      outputs in the subnormal range, and outputs the flush really changed);
//  (b) undeclared, R1 finds it, and the finding names the flush of subnormals;
//  (c) declared with a planted bug, the bug is still caught: the flush terms are absolute,
//      min_normal-sized, and do not hide errors of ordinary size.
// The bound's own unit tests (bit-identical natural bounds, the terms) are in
// reference/bound/tests/flush_bound_test.cpp.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "gen/families.h"
#include "kernels/flush_guard.h"
#include "kernels/naive_kernel.h"
#include "problem/buffers.h"
#include "properties/checks/checks.h"
#include "reference/fast/fast.h"

namespace attnv::checks {
using namespace kernels;  // the kernels under test (kernels/)
namespace {

constexpr int kSeeds = 6;  // per family, dtype and structure

// A family case with V scaled by 2^-126 (outputs around f32's min_normal, those below it
// subnormal) and every fifth element of Q by 2^-135 (subnormal q, read as zero under DAZ),
// each rounded back to the storage dtype. dO stays normal: dP = dO.v and dS land near
// min_normal, and so do dQ and dK.
Case subnormal_case(gen::Family f, std::uint64_t seed, DType dt) {
  gen::FamilyOptions o;
  o.dtype = dt;
  o.size = gen::Size::small;
  o.with_dout = true;
  Case c = gen::make_case(f, seed, o);
  for (double& v : c.v) v = round_to(dt, std::ldexp(v, -126));
  for (std::size_t e = 0; e < c.q.size(); e += 5) c.q[e] = round_to(dt, std::ldexp(c.q[e], -135));
  c.id += "/subnormal";
  return c;
}

std::vector<Case> subnormal_cases() {
  std::vector<Case> cases;
  for (DType dt : {DType::f32, DType::bf16})
    for (gen::Family f : gen::all_families())
      for (int s = 1; s <= kSeeds; ++s) cases.push_back(subnormal_case(f, static_cast<std::uint64_t>(s), dt));
  return cases;
}

bool subnormal_f32(double x) { return x != 0 && std::isfinite(x) && std::fabs(x) < min_normal(DType::f32); }

// Whether an exact output of the case (O, dQ, dK, dV) lies in f32's subnormal range.
bool reaches_subnormal(const Outputs& e) {
  for (const auto* t : {&e.out, &e.dq, &e.dk, &e.dv})
    for (double x : *t)
      if (subnormal_f32(x)) return true;
  return false;
}

NaiveKernel flushing(Structure st, std::optional<bool> declare, Plant plant = Plant::none) {
  NaiveOptions o;
  o.structure = st;
  o.block = 16;
  o.plant = plant;
  o.flush_subnormals = true;
  o.declare_flush = declare;
  return NaiveKernel(o);
}

class Flush : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!FlushGuard::available()) GTEST_SKIP() << "no MXCSR on this target";
  }
};

// The guard really flushes, and restores: the flushing kernel gives exact zeros where the plain
// one gives subnormal outputs, and the plain one still does afterwards.
TEST_F(Flush, TheKernelReallyFlushes) {
  NaiveKernel plain;
  NaiveKernel flush = flushing(Structure::naive, std::nullopt);
  int flushed = 0, subnormal = 0, cases = 0;
  for (const Case& c : subnormal_cases()) {
    if (c.problem.dtype != DType::f32) continue;
    ++cases;
    const Outputs a = run_forward(plain, c), b = run_forward(flush, c), again = run_forward(plain, c);
    for (std::size_t e = 0; e < a.out.size(); ++e) {
      if (subnormal_f32(a.out[e])) ++subnormal;
      if (subnormal_f32(a.out[e]) && b.out[e] == 0) ++flushed;
      EXPECT_FALSE(subnormal_f32(b.out[e])) << "a subnormal output under FTZ at " << e << " of " << c.id;
    }
    EXPECT_EQ(again.out, a.out) << c.id;  // MXCSR restored: the plain kernel is unchanged after
  }
  std::printf("%d f32 cases: the plain kernel gives %d subnormal outputs, the flushing one flushes %d of them to zero\n",
              cases, subnormal, flushed);
  EXPECT_GT(subnormal, 0);
  EXPECT_GT(flushed, 0);
  EXPECT_TRUE(flush.precision(DType::f32).flush_subnormals);
  EXPECT_FALSE(plain.precision(DType::f32).flush_subnormals);
}

// (a) Declared: R1, R2, R9, R17 pass on every case; the cases are counted.
TEST_F(Flush, DeclaredFlushingCertifiesOnSubnormalCases) {
  int cases = 0, reaching = 0, changed = 0;
  int passes[4] = {0, 0, 0, 0};
  const char* names[4] = {"R1 matches_reference", "R2 backward_matches_reference", "R9 key_permutation",
                          "R17 v_linearity"};
  NaiveKernel plain;
  for (Structure st : {Structure::naive, Structure::tiled}) {
    NaiveKernel k = flushing(st, std::nullopt);
    for (const Case& c : subnormal_cases()) {
      ++cases;
      const Outputs exact = reference::fast_backward(c);
      const bool reach = reaches_subnormal(exact);
      reaching += reach;
      // The flush changed some output bit: evidence it was exercised, not only reachable.
      const Outputs f = run_backward(k, c), p = run_backward(plain, c);
      changed += (f.out != p.out || f.dq != p.dq || f.dk != p.dk || f.dv != p.dv);
      const PropertyResult r[4] = {check_matches_reference(k, c, Layout::bhtd),
                                   check_backward_matches_reference(k, c, Layout::bhtd),
                                   check_key_permutation(k, c, Layout::bhtd, 7),
                                   check_v_linearity(k, c, Layout::bhtd, 7)};
      for (int n = 0; n < 4; ++n) {
        EXPECT_TRUE(r[n].ok) << names[n] << " on " << c.id << ": " << r[n].message << r[n].worst;
        passes[n] += r[n].status == Status::pass;
      }
    }
  }
  std::printf("flush_subnormals declared: %d cases, %d with an exact output in f32's subnormal range, %d whose "
              "outputs the flush changed; passes R1 %d, R2 %d, R9 %d, R17 %d (others not applicable)\n",
              cases, reaching, changed, passes[0], passes[1], passes[2], passes[3]);
  EXPECT_GE(reaching, cases / 2);
  EXPECT_GE(changed, cases / 2);
  EXPECT_GE(passes[0], cases / 2);
  EXPECT_GE(passes[1], cases / 2);
}

// (a') The families as they are, unscaled: some of their cases reach f32's subnormal range too
// (one-hot rows, cancelling values: gradients and outputs near 1e-39); declared, they pass.
TEST_F(Flush, DeclaredFlushingCertifiesOnTheUnscaledFamilies) {
  int cases = 0, reaching = 0, r1 = 0, r2 = 0;
  NaiveKernel k = flushing(Structure::tiled, std::nullopt);
  for (DType dt : {DType::f32, DType::bf16})
    for (gen::Family f : gen::all_families())
      for (int s = 1; s <= kSeeds; ++s) {
        gen::FamilyOptions o;
        o.dtype = dt;
        o.size = gen::Size::small;
        const Case c = gen::make_case(f, static_cast<std::uint64_t>(s), o);
        ++cases;
        if (!reaches_subnormal(reference::fast_backward(c))) continue;
        ++reaching;
        const PropertyResult a = check_matches_reference(k, c, Layout::bhtd);
        const PropertyResult b = check_backward_matches_reference(k, c, Layout::bhtd);
        EXPECT_TRUE(a.ok) << c.id << ": " << a.message;
        EXPECT_TRUE(b.ok) << c.id << ": " << b.message;
        r1 += a.status == Status::pass;
        r2 += b.status == Status::pass;
      }
  std::printf("unscaled families: %d of %d cases reach f32's subnormal range; declared flushing passes R1 on %d, R2 on %d\n",
              reaching, cases, r1, r2);
  EXPECT_GT(reaching, 0);
}

// (b) Undeclared: R1 finds the flush, and its finding names it (bound::Comparison::summary).
TEST_F(Flush, UndeclaredFlushingIsFoundAndNamed) {
  int failing = 0, named = 0, cases = 0;
  std::string example;
  NaiveKernel k = flushing(Structure::naive, false);
  for (const Case& c : subnormal_cases()) {
    ++cases;
    const PropertyResult r = check_matches_reference(k, c, Layout::bhtd);
    if (r.ok) continue;
    ++failing;
    if (r.message.find("subnormals flushed to zero?") != std::string::npos) ++named;
    if (example.empty()) example = c.id + ": " + r.message;
  }
  std::printf("undeclared flush: R1 fails %d of %d subnormal-range cases, %d naming the flush; e.g. %s\n",
              failing, cases, named, example.c_str());
  EXPECT_GE(failing, cases / 4);
  EXPECT_EQ(named, failing);
}

// (c) Declared, with a planted bug: caught as often as the same bug in the kernel that neither
// flushes nor declares it, on ordinary cases (the flush terms are ~1e-37 there); the subnormal-range
// cases are counted too (there the bound is of the outputs' size, as a flushing kernel's truth is).
TEST_F(Flush, PlantedBugsAreStillCaughtWhenFlushingIsDeclared) {
  struct Bug {
    Plant plant;
    const char* name;
    Structure st;
  };
  for (const Bug b : {Bug{Plant::d_model_scale, "d_model_scale", Structure::naive},
                      Bug{Plant::f16_accumulation, "f16_accumulation", Structure::naive},
                      Bug{Plant::lost_rescale, "lost_rescale", Structure::tiled},
                      Bug{Plant::denominator_skips_max, "denominator_skips_max", Structure::naive},
                      Bug{Plant::v_sign_lost, "v_sign_lost", Structure::naive}}) {
    NaiveKernel k = flushing(b.st, true, b.plant);
    NaiveKernel natural(NaiveOptions{b.st, 16, b.plant});
    int ordinary = 0, caught = 0, caught_natural = 0, sub_caught = 0, sub = 0;
    for (DType dt : {DType::f32, DType::bf16})
      for (gen::Family f : gen::all_families())
        for (int s = 1; s <= kSeeds; ++s) {
          gen::FamilyOptions o;
          o.dtype = dt;
          o.size = gen::Size::small;
          o.with_dout = false;
          const Case c = gen::make_case(f, static_cast<std::uint64_t>(s), o);
          ++ordinary;
          caught += !check_matches_reference(k, c, Layout::bhtd).ok;
          caught_natural += !check_matches_reference(natural, c, Layout::bhtd).ok;
          ++sub;
          sub_caught += !check_matches_reference(k, subnormal_case(f, static_cast<std::uint64_t>(s), dt), Layout::bhtd).ok;
        }
    std::printf("planted %s, flush declared: R1 catches it in %d of %d ordinary cases (without flushing: %d), "
                "%d of %d subnormal-range cases\n",
                b.name, caught, ordinary, caught_natural, sub_caught, sub);
    EXPECT_GT(caught, 0) << b.name;
    EXPECT_GE(caught, caught_natural - caught_natural / 20) << b.name;  // within 5% of the natural model
  }
}

}  // namespace
}  // namespace attnv::checks
