// A bound is a number or +inf ("nothing bounded"), never NaN: the acceptance rule reads a NaN
// bound as "outside the bound", so a NaN would be a finding charged to the kernel for a defect of
// attnv's own arithmetic (an unbounded factor times a zero term). compare() refuses one as
// attnv's error; this sweep shows the bound itself gives none, on every family and on the models
// where the factors grow unbounded (f16 and bf16 accumulation over long rows).
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "gen/families.h"
#include "problem/case.h"
#include "problem/kernel_fault.h"
#include "reference/bound/bound.h"
#include "reference/fast/fast.h"

namespace attnv::bound {
namespace {

std::vector<PrecisionModel> models_with_flushing(DType dt) {
  std::vector<PrecisionModel> ms = {PrecisionModel::natural(dt), PrecisionModel::natural(dt, 16)};
  for (DType narrow : {DType::f16, DType::bf16}) {
    PrecisionModel p = PrecisionModel::natural(dt, 16);
    p.p_dtype = narrow;
    ms.push_back(p);
    PrecisionModel staged = p;
    staged.pv = narrow;
    staged.score = narrow;
    ms.push_back(staged);
    PrecisionModel narrow_accum = PrecisionModel::natural(dt);
    narrow_accum.accum = narrow_accum.p_dtype = narrow;
    ms.push_back(narrow_accum);
  }
  for (std::size_t i = 0, n = ms.size(); i < n; ++i) {
    PrecisionModel f = ms[i];
    f.flush_subnormals = true;
    ms.push_back(f);
  }
  return ms;
}

TEST(BoundNaN, NoBoundElementIsNaN) {
  std::int64_t elements = 0, infinite = 0;
  for (DType dt : {DType::f32, DType::f16, DType::bf16})
    for (gen::Family fam : gen::all_families())
      for (gen::Size size : {gen::Size::small, gen::Size::medium})
        for (std::uint64_t seed = 1; seed <= 2; ++seed) {
          gen::FamilyOptions o;
          o.dtype = dt;
          o.size = size;
          const Case c = gen::make_case(fam, seed, o);
          const Outputs e = reference::fast_backward(c);
          for (const PrecisionModel& m : models_with_flushing(dt)) {
            const Bounds f = forward_bound(c, e, m);
            const Bounds b = backward_bound(c, e, m);
            const std::pair<const char*, const std::vector<double>*> all[] = {
                {"forward out", &f.out}, {"forward lse", &f.lse}, {"out", &b.out}, {"lse", &b.lse},
                {"dq", &b.dq},           {"dk", &b.dk},           {"dv", &b.dv},   {"dsinks", &b.dsinks}};
            for (const auto& [what, v] : all)
              for (std::size_t i = 0; i < v->size(); ++i) {
                ++elements;
                infinite += std::isinf((*v)[i]);
                ASSERT_FALSE(std::isnan((*v)[i])) << what << "[" << i << "] of " << c.id << " under " << describe(m);
              }
          }
        }
  std::printf("%lld bound elements, none NaN (%lld infinite: nothing bounded there)\n",
              static_cast<long long>(elements), static_cast<long long>(infinite));
  EXPECT_GT(infinite, 0);  // the sweep reaches the unbounded factors it is meant to
}

// A softcap that saturates in double (tanh(s / cap) = +-1, so its derivative 1 - tanh^2 is 0)
// on a key whose weight's error is unbounded (a logit of 2^120, whose f32 rounding alone is
// 2^96): the derivative times that error was 0 * inf, a NaN bound for dq. attnv fuzz met it on
// the core's avx512_bf16 path (scale 5, |q|, |k| up to 1e3, softcap 6) and stopped as attnv's
// error. The bound there is +inf: the kernel's own derivative need not be 0, and its weight's
// error is not bounded.
TEST(BoundNaN, ASaturatedSoftcapOnAnUnboundedWeightIsNotNaN) {
  Problem p;
  p.shape = Shape{1, 1, 1, 1, 2, 1, 1};
  p.dtype = DType::bf16;
  p.softcap = 6;
  Case c = make_zero_case(p, /*with_dout=*/true);
  c.q = {0x1p60};
  c.k = {0x1p60, -0x1p60};
  c.v = {1, -1};
  c.dout = {1};
  const Outputs e = reference::fast_backward(c);
  PrecisionModel m = PrecisionModel::natural(DType::bf16, 64);
  for (bool flush : {false, true}) {
    m.flush_subnormals = flush;
    const Bounds b = backward_bound(c, e, m);
    ASSERT_EQ(b.dq.size(), 1u);
    EXPECT_FALSE(std::isnan(b.dq[0])) << describe(m);
    EXPECT_TRUE(std::isinf(b.dq[0])) << b.dq[0] << " under " << describe(m);
  }
}

// A NaN bound that reached the comparison anyway is attnv's error, named, never a kernel's FAIL.
TEST(BoundNaN, CompareRefusesANaNBoundAsAttnvsOwnError) {
  Outputs kernel, exact;
  kernel.out = exact.out = {0.5, 0.25};
  Bounds b;
  b.out = {1e-8, std::nan("")};
  try {
    compare(kernel, exact, b, DType::f32);
    FAIL() << "a NaN bound was compared";
  } catch (const HarnessError& e) {
    EXPECT_NE(std::string(e.what()).find("out[1]"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace attnv::bound
