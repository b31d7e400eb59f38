// The kernels the properties run on, on cases whose answer is known, and the "not claimed" rule.
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "problem/buffers.h"
#include "properties/checks/checks.h"
#include "properties/conformance/requirement.h"
#include "properties/generators/property_case.h"
#include "kernels/emulated_kernel.h"
#include "kernels/naive_kernel.h"
#include "gen/rng.h"

namespace attnv::checks {

using namespace generators;  // the cases the checks run on
using namespace kernels;  // the kernels under test (kernels/)
namespace {

TEST(NaiveKernel, OneVisibleKeyGivesItsValueExactly) {
  Problem p;
  p.shape = {1, 1, 1, 2, 3, 2, 2};
  p.causal = true;  // top-left: row 0 sees key 0 only
  Case c = make_values(p, ValueFamily::moderate, 1, false, false);
  NaiveKernel k;
  const Outputs o = run_forward(k, c);
  EXPECT_EQ(o.out[c.oi(0, 0, 0, 0)], c.v[c.vi(0, 0, 0, 0)]);
  EXPECT_EQ(o.out[c.oi(0, 0, 0, 1)], c.v[c.vi(0, 0, 0, 1)]);
}

TEST(NaiveKernel, FullyMaskedRowGivesZeroAndMinusInfinity) {
  Problem p;
  p.shape = {1, 1, 1, 3, 2, 2, 2};
  p.causal = true;
  p.alignment = Alignment::bottom_right;  // Tq > Tk: row 0 has p_0 = -1, no visible key
  const Case c = make_values(p, ValueFamily::moderate, 2, false, false);
  for (Structure st : {Structure::naive, Structure::tiled}) {
    NaiveKernel k(NaiveOptions{st, 16, Plant::none});
    const Outputs o = run_forward(k, c);
    EXPECT_EQ(o.out[c.oi(0, 0, 0, 0)], 0.0);
    EXPECT_EQ(o.lse[c.li(0, 0, 0)], -std::numeric_limits<double>::infinity());
  }
}

TEST(EmulatedKernel, AdapterGivesTheEmulatedOutputsBitForBitInEveryLayout) {
  Problem p;
  p.shape = {2, 4, 2, 5, 7, 3, 4};
  p.dtype = DType::f16;
  p.has_kv_len = true;
  const Case c = make_values(p, ValueFamily::moderate, 3, true, false);
  EmulatedKernel k;
  kernels::emulated::Config cfg;
  cfg.model = k.precision(DType::f16);
  const Outputs direct = kernels::emulated::backward(c, cfg);
  for (Layout l : {Layout::bhtd, Layout::bthd, Layout::gapped}) {
    const Outputs via = run_backward(k, c, l);
    EXPECT_EQ(via.out, direct.out) << layout_name(l);
    EXPECT_EQ(via.dq, direct.dq);
    EXPECT_EQ(via.dk, direct.dk);
    EXPECT_EQ(via.dv, direct.dv);
  }
}

// A kernel that claims only dense MHA f32: every property passes with "not claimed" on a GQA
// case instead of failing it.
class MhaOnly : public NaiveKernel {
 public:
  Capabilities capabilities() const override {
    Capabilities c;
    c.dtypes = {DType::f32};
    return c;
  }
};

TEST(Checks, UnclaimedProblemsAreNotFailed) {
  Problem p;
  p.shape = {1, 4, 2, 3, 3, 2, 2};
  const Case c = make_values(p, ValueFamily::moderate, 4, false, false);
  MhaOnly k;
  for (const PropertyResult& r : {check_matches_reference(k, c, Layout::bhtd), check_no_leakage(k, c, Layout::bhtd, 1),
                                  check_gqa_repeat_interleave(k, c, Layout::bhtd), check_determinism(k, c, Layout::bhtd)}) {
    EXPECT_TRUE(r.ok) << r;
    EXPECT_NE(r.message.find("not claimed"), std::string::npos) << r;
  }
}

// A kernel that writes no LSE (claims everything else the naive kernel does).
class NoLse : public NaiveKernel {
 public:
  using NaiveKernel::NaiveKernel;
  Capabilities capabilities() const override {
    Capabilities c = NaiveKernel::capabilities();
    c.lse = false;
    return c;
  }
};

// R6 plants NaN in keys hidden from some rows but visible to others (causal). A kernel without
// an LSE used to get the reference's LSE of that case as a stand-in, the reference refused the
// NaN keys, and the kernel was charged with "threw: fast reference (...)". Now the missing LSE is
// simply not compared: the correct kernel passes, and a leaking one still fails on O.
TEST(Checks, HiddenNonFiniteWithoutLseJudgesTheOutputAlone) {
  Problem p;
  p.shape = {1, 2, 1, 6, 6, 3, 3};
  p.causal = true;
  p.has_mask = true;
  const Case c = make_values(p, ValueFamily::moderate, 5, false, false);
  NoLse correct;
  std::int64_t exercised = 0;
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    PropertyResult r = PropertyResult::fail("hidden_nonfinite", c.id, "threw", "");
    ASSERT_NO_THROW(r = check_hidden_nonfinite(correct, c, Layout::bhtd, seed));
    EXPECT_TRUE(r.ok) << r;
    exercised += r.message.find("vacuous") == std::string::npos;
    PropertyResult no_leak = PropertyResult::fail("no_leakage", c.id, "threw", "");
    ASSERT_NO_THROW(no_leak = check_no_leakage(correct, c, Layout::bhtd, seed));
    EXPECT_TRUE(no_leak.ok) << no_leak;
  }
  EXPECT_GT(exercised, 0);
  NoLse leaking(NaiveOptions{Structure::naive, 16, Plant::hidden_times_zero});
  bool caught = false;
  for (std::uint64_t seed = 1; seed <= 8 && !caught; ++seed) caught = !check_hidden_nonfinite(leaking, c, Layout::bhtd, seed).ok;
  EXPECT_TRUE(caught);
}

// Correct O, LSE off by one everywhere: an LSE bug, which is R1's (matches_reference) to name.
class LseOffByOne : public NaiveKernel {
 public:
  void forward(const Problem& p, const KernelViews& views) override {
    NaiveKernel::forward(p, views);
    if (!views.lse.present()) return;
    for (std::int64_t b = 0; b < p.shape.B; ++b)
      for (std::int64_t h = 0; h < p.shape.Hq; ++h)
        for (std::int64_t i = 0; i < p.shape.Tq; ++i) store(views.lse, {b, h, i, 0}, load(views.lse, {b, h, i, 0}) + 1);
  }
};

TEST(Checks, RowsSumToOneJudgesTheWeightsNotTheLse) {
  Problem p;
  p.shape = {1, 2, 1, 4, 5, 3, 3};
  const Case c = make_values(p, ValueFamily::moderate, 6, false, false);
  LseOffByOne k;
  const PropertyResult r3 = check_rows_sum_to_one(k, c, Layout::bhtd);
  EXPECT_TRUE(r3.ok) << r3;
  const PropertyResult r1 = check_matches_reference(k, c, Layout::bhtd);
  EXPECT_FALSE(r1.ok);
  EXPECT_NE(r1.worst.find("lse["), std::string::npos) << r1;
}

// Correct outputs but one, out[0,0,1,0], which is set to `value`.
class OneBadOutput : public NaiveKernel {
 public:
  explicit OneBadOutput(double value) : value_(value) {}
  void forward(const Problem& p, const KernelViews& views) override {
    NaiveKernel::forward(p, views);
    store(views.out, {0, 0, 1, 0}, value_);
  }

 private:
  double value_;
};

// One NaN among correct outputs: R1's worst element is the NaN (it used to quote a correct
// element, and the headline ratio stayed under 1), and its ratio is infinite.

TEST(Checks, ANaNOutputIsTheWorstElementWithAnInfiniteRatio) {
  Problem p;
  p.shape = {1, 1, 1, 4, 5, 3, 3};
  const Case c = make_values(p, ValueFamily::moderate, 7, false, false);
  OneBadOutput k(std::numeric_limits<double>::quiet_NaN());
  const PropertyResult r = check_matches_reference(k, c, Layout::bhtd);
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(std::isinf(r.worst_ratio)) << r;
  EXPECT_NE(r.worst.find("out[b=0,h=0,i=1,d=0] = nan"), std::string::npos) << r;
  // R4 on an infinite output states a finite allowance (it printed "widened by nan").
  OneBadOutput inf(std::numeric_limits<double>::infinity());
  const PropertyResult r4 = check_convex_hull(inf, c, Layout::bhtd);
  EXPECT_FALSE(r4.ok);
  EXPECT_NE(r4.worst.find("= inf outside"), std::string::npos) << r4;
  EXPECT_EQ(r4.worst.find("nan"), std::string::npos) << r4;
}

// Output nudged by one part in 2^20 on every other call, counting forward and backward calls
// alike (a held-out bug: R13 ran forward+backward twice, four calls, so both of its forwards fell
// on the same parity and it passed; R5 then blamed leakage for the nondeterminism).
class ParityKernel : public NaiveKernel {
 public:
  void forward(const Problem& p, const KernelViews& views) override {
    NaiveKernel::forward(p, views);
    if (calls_++ % 2 == 1) store(views.out, {0, 0, 0, 0}, load(views.out, {0, 0, 0, 0}) * (1 + 0x1p-20));
  }
  void backward(const Problem& p, const KernelViews& views) override {
    ++calls_;
    NaiveKernel::backward(p, views);
  }

 private:
  int calls_ = 0;
};

TEST(Checks, DeterminismComparesIdenticalCallsAndLeakageDoesNotTakeTheBlame) {
  Problem p;
  p.shape = {1, 1, 1, 4, 5, 3, 3};
  p.causal = true;
  const Case c = make_values(p, ValueFamily::moderate, 8, true, false);
  ParityKernel k;
  const PropertyResult r13 = check_determinism(k, c, Layout::bhtd);
  EXPECT_FALSE(r13.ok) << r13;
  EXPECT_NE(r13.worst.find("two forwards in a row"), std::string::npos) << r13;
  bool blamed = false, exercised_or_not = false;
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    const PropertyResult r5 = check_no_leakage(k, c, Layout::bhtd, seed);
    blamed = blamed || !r5.ok;
    exercised_or_not = exercised_or_not || r5.status == Status::not_exercised;
  }
  EXPECT_FALSE(blamed);
  EXPECT_TRUE(exercised_or_not);
  NaiveKernel correct;
  EXPECT_TRUE(check_determinism(correct, c, Layout::bhtd).ok);
}


// Correct values, but a zero output takes the sign of the last key's V: what a kernel that
// multiplies every weight of a tile by its V row does (an exact 0 weight times v is a zero of v's
// sign). The contract leaves a zero's sign unspecified (docs/semantics.md, "Hidden positions"),
// so R5 and R6 pass it; the same kernel moving any value with a hidden V still fails both.
class ZeroSignFollowsLastKey : public NaiveKernel {
 public:
  explicit ZeroSignFollowsLastKey(double leak) : leak_(leak) {}
  void forward(const Problem& p, const KernelViews& views) override {
    NaiveKernel::forward(p, views);
    const Shape& s = p.shape;
    for (std::int64_t b = 0; b < s.B; ++b)
      for (std::int64_t h = 0; h < s.Hq; ++h)
        for (std::int64_t i = 0; i < s.Tq; ++i)
          for (std::int64_t d = 0; d < s.Dv; ++d) {
            const double v = load(views.v, {b, h / p.group(), s.Tk - 1, d});
            const double o = load(views.out, {b, h, i, d});
            if (o == 0) store(views.out, {b, h, i, d}, leak_ == 0 ? std::copysign(0.0, v) : leak_ * v);
          }
  }

 private:
  double leak_;
};

TEST(Checks, TheSignOfAZeroOutputIsNotALeakButAValueIs) {
  Problem p;
  p.shape = {1, 1, 1, 2, 4, 2, 2};
  p.causal = true;  // top-left: rows 0 and 1 see keys 0 and 1 at most; keys 2 and 3 are hidden from both
  Case c = make_values(p, ValueFamily::moderate, 6, false, false);
  for (std::int64_t j = 0; j < 2; ++j)
    for (std::int64_t d = 0; d < 2; ++d) c.v[c.vi(0, 0, j, d)] = 0;  // every visible V zero: every output 0
  ZeroSignFollowsLastKey sign_only(0), leaking(1e-3);
  bool caught5 = false, caught6 = false;
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    const PropertyResult r5 = check_no_leakage(sign_only, c, Layout::bhtd, seed);
    const PropertyResult r6 = check_hidden_nonfinite(sign_only, c, Layout::bhtd, seed);
    EXPECT_TRUE(r5.ok) << r5;
    EXPECT_TRUE(r6.ok) << r6;
    EXPECT_GT(r5.exercised, 0) << r5;
    caught5 = caught5 || !check_no_leakage(leaking, c, Layout::bhtd, seed).ok;
    caught6 = caught6 || !check_hidden_nonfinite(leaking, c, Layout::bhtd, seed).ok;
  }
  EXPECT_TRUE(caught5);
  EXPECT_TRUE(caught6);
}


// A softcap read as 1.002 instead of 1 on a case whose every score is far past it: the logits
// are +-1.002 instead of +-1. The bound used to carry each score's full dot-product error through
// the saturated tanh (gamma_66 A ~ 2e-3 here, in f32; 1.57 in ggml's f16 case), wide enough for
// that; with tanh's slope (BOUND.md section 2) it fails, and the correct kernel still passes.
class WrongSoftcap : public NaiveKernel {
 public:
  void forward(const Problem& p, const KernelViews& v) override {
    Problem wrong = p;
    wrong.softcap = *p.softcap * 1.002;
    NaiveKernel::forward(wrong, v);
  }
};

TEST(Checks, ASaturatedSoftcapBoundsTheLogitError) {
  Problem p;
  p.shape = {1, 1, 1, 4, 32, 64, 4};
  p.softcap = 1.0;
  p.scale = 1.0;
  Case c = make_values(p, ValueFamily::moderate, 7, false, false);
  gen::Rng rng(7);
  for (double& x : c.q) x = round_to(DType::f32, 3 * rng.normal());
  for (double& x : c.k) x = round_to(DType::f32, 3 * rng.normal());
  NaiveKernel correct;
  WrongSoftcap wrong;
  const PropertyResult ok = check_matches_reference(correct, c, Layout::bhtd);
  EXPECT_TRUE(ok.ok) << ok;
  const PropertyResult caught = check_matches_reference(wrong, c, Layout::bhtd);
  EXPECT_FALSE(caught.ok) << caught;
}


// onnxruntime's honest f16 model: accumulation in f16, P rounded to f16. Declared by a correct
// kernel (the naive one computes far better than that), it passes; declared by one that returns
// the plain mean of the visible values (any value inside their range), it is not certified by R1:
// on long rows most allowances cover the visible values' range, and those elements are
// uninformative, not evidence (docs/certificate.md, "Tightness").
class DeclaresF16Accumulation : public NaiveKernel {
 public:
  explicit DeclaresF16Accumulation(bool mean_of_values) : mean_(mean_of_values) {}
  PrecisionModel precision(DType storage) const override {
    PrecisionModel m = NaiveKernel::precision(storage);
    if (storage == DType::f16) m.accum = m.p_dtype = DType::f16;
    return m;
  }
  void forward(const Problem& p, const KernelViews& v) override {
    if (!mean_) return NaiveKernel::forward(p, v);
    // q = 0: every visible key gets the same weight, so O is the mean of the visible values.
    std::vector<std::uint64_t> zeros(static_cast<std::size_t>(q_elements(p.shape)), 0);
    KernelViews z = v;
    z.q.data = zeros.data();
    z.q.stride = dense_strides(z.q.shape, 4);
    NaiveKernel::forward(p, z);
  }

 private:
  bool mean_;
};

TEST(Checks, UninformativeAllowancesAreNoEvidence) {
  DeclaresF16Accumulation correct(false), mean(true);
  std::int64_t judged = 0, uninformative = 0, mean_passed = 0, mean_exercised = 0, cases = 0;
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    Problem p;
    p.shape = {1, 2, 2, 4, 600, 16, 16};
    p.dtype = DType::f16;
    Case c = make_values(p, ValueFamily::moderate, seed, false, false);
    for (double& x : c.v) x = round_to(DType::f16, 100 + x / 64);  // offset values: a narrow range far from 0
    ++cases;
    const PropertyResult ok = check_matches_reference(correct, c, Layout::bhtd);
    EXPECT_TRUE(ok.ok) << ok;
    judged += ok.exercised + ok.uninformative;
    uninformative += ok.uninformative;
    const PropertyResult guess = check_matches_reference(mean, c, Layout::bhtd);
    mean_passed += guess.status == Status::pass;
    mean_exercised += guess.status == Status::pass ? guess.exercised : 0;
  }
  std::printf("f16 accumulation, P in f16, Tk = 600, V = 100 + N(0, 1/64): %lld of %lld judged elements uninformative (%.0f%%); the mean "
              "of the visible values passed %lld of %lld cases with %lld informative elements\n",
              static_cast<long long>(uninformative), static_cast<long long>(judged),
              100.0 * static_cast<double>(uninformative) / static_cast<double>(judged), static_cast<long long>(mean_passed),
              static_cast<long long>(cases), static_cast<long long>(mean_exercised));
  EXPECT_GT(uninformative, judged / 2);
  // What the guess passed with rests on its LSEs alone (8 a case): every O element of it was
  // uninformative, and R1 asks 10 elements a drawn case, so the guess falls short of a PASS.
  EXPECT_LE(mean_exercised, 8 * mean_passed);
  const conformance::Requirement& r1 = conformance::requirement("R1");
  EXPECT_LT(mean_exercised, static_cast<std::int64_t>(r1.min_per_case * static_cast<double>(cases)));
}

}  // namespace
}  // namespace attnv::checks
