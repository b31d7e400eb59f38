// The generators: valid cases, the awkward shapes and options actually drawn, each value family
// doing what it says, and a readable showValue.
#include <cmath>
#include <set>
#include <sstream>

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include "problem/validate.h"
#include "properties/generators/property_case.h"

namespace attnv::props {
namespace {

std::vector<PropertyCase> draw(const GenOptions& opt, int n, std::uint64_t seed = 7) {
  const auto gen = gen_property_case(opt);
  rc::Random random(seed);
  std::vector<PropertyCase> out;
  for (int i = 0; i < n; ++i) out.push_back(gen(random.split()).value());
  return out;
}

TEST(Generators, CasesAreValidAndCoverTheAwkwardShapes) {
  std::set<std::int64_t> lengths;
  bool gqa = false, dv_differs = false, causal = false, bottom_right = false, window = false, mask = false,
       bias = false, kv_len = false, softcap = false, batch = false, gapped = false, bthd = false;
  for (const PropertyCase& pc : draw(GenOptions{}, 400)) {
    ASSERT_TRUE(check_case(pc.c).empty()) << case_label(pc) << ": " << check_case(pc.c)[0];
    const Problem& p = pc.c.problem;
    lengths.insert(p.shape.Tq);
    lengths.insert(p.shape.Tk);
    gqa |= p.shape.Hkv > 1 && p.shape.Hkv < p.shape.Hq;
    dv_differs |= p.shape.Dv != p.shape.Dk;
    causal |= p.causal;
    bottom_right |= p.causal && p.alignment == Alignment::bottom_right;
    window |= p.window.bounded();
    mask |= p.has_mask;
    bias |= p.has_bias;
    kv_len |= p.has_kv_len;
    softcap |= p.softcap.has_value();
    batch |= p.shape.B > 1;
    gapped |= pc.layout == Layout::gapped;
    bthd |= pc.layout == Layout::bthd;
    EXPECT_LE(p.shape.B * p.shape.Hq * p.shape.Tq * p.shape.Tk * (p.shape.Dk + p.shape.Dv), GenOptions{}.max_work);
  }
  for (std::int64_t t : {1, 2, 63, 65, 127, 129}) EXPECT_TRUE(lengths.count(t)) << "length " << t << " never drawn";
  EXPECT_TRUE(gqa && dv_differs && causal && bottom_right && window && mask && bias && kv_len && softcap && batch &&
              gapped && bthd);
}

double max_logit(const Case& c, bool want_max) {
  double best = want_max ? -HUGE_VAL : HUGE_VAL;
  const Shape& s = c.problem.shape;
  for (std::int64_t i = 0; i < s.Tq; ++i)
    for (std::int64_t j = 0; j < s.Tk; ++j) {
      double dot = 0;
      for (std::int64_t d = 0; d < s.Dk; ++d) dot += c.q[c.qi(0, 0, i, d)] * c.k[c.ki(0, 0, j, d)];
      const double t = dot * c.problem.effective_scale();
      best = want_max ? std::max(best, std::abs(t)) : std::min(best, -t);
    }
  return best;
}

TEST(Generators, ValueFamiliesDoWhatTheySay) {
  Problem p;
  p.shape = {1, 1, 1, 4, 6, 8, 8};
  for (DType t : {DType::f32, DType::f16, DType::bf16}) {
    p.dtype = t;
    EXPECT_GT(max_logit(make_values(p, ValueFamily::large_logits, 3, false, false), true), 500) << dtype_name(t);
    EXPECT_GT(max_logit(make_values(p, ValueFamily::far_negative, 3, false, false), false), 500) << dtype_name(t);
    const Case sub = make_values(p, ValueFamily::subnormals, 3, false, false);
    int subnormal = 0;
    for (double x : sub.v) subnormal += x != 0 && std::abs(x) < min_normal(t);
    EXPECT_GT(subnormal, 0) << dtype_name(t);
    const Case top = make_values(p, ValueFamily::f16_top, 3, false, false);
    for (double x : top.v) EXPECT_TRUE(std::abs(x) >= 6e4 && std::abs(x) <= 65504) << x;
  }
}

TEST(Generators, ShowValuePrintsTheProblemAndSmallTensors) {
  PropertyCase pc;
  Problem p;
  p.shape = {1, 1, 1, 2, 2, 1, 1};
  pc.c = make_values(p, ValueFamily::moderate, 5, false, false);
  std::ostringstream o;
  showValue(pc, o);
  EXPECT_NE(o.str().find("B=1 Hq=1"), std::string::npos) << o.str();
  EXPECT_NE(o.str().find("q = ["), std::string::npos) << o.str();
}

}  // namespace
}  // namespace attnv::props
