#include "problem/buffers.h"

#include <gtest/gtest.h>

#include <cmath>

#include "problem/features/registry.h"
#include "problem/validate.h"

namespace attnv {
namespace {

Case sample_case(DType t) {
  Problem p;
  p.shape = {2, 4, 2, 3, 5, 3, 2};
  p.dtype = t;
  p.has_mask = p.has_bias = p.has_kv_len = true;
  Case c = make_zero_case(p, true);
  double x = 0.1;
  for (auto* v : {&c.q, &c.k, &c.v, &c.bias, &c.dout})
    for (double& e : *v) e = (x = std::fmod(x * 7.31 + 0.37, 5.0)) - 2.5;
  for (std::size_t i = 0; i < c.mask.size(); ++i) c.mask[i] = i % 3 != 0;
  c.bias[2] = -HUGE_VAL;
  c.kv_len = {5, 2};
  round_to_storage(c);
  return c;
}

TEST(Buffers, EveryLayoutAndDtypeRoundTripsExactly) {
  for (DType t : kAllDTypes)
    for (Layout l : {Layout::bhtd, Layout::bthd, Layout::gapped}) {
      const Case c = sample_case(t);
      CaseBuffers buf(c, l, true);
      EXPECT_TRUE(check_views(c.problem, buf.views()).empty()) << layout_name(l);
      const Case back = case_from_views(c.problem, buf.views());
      EXPECT_EQ(back.q, c.q) << dtype_name(t) << ' ' << layout_name(l);
      EXPECT_EQ(back.k, c.k);
      EXPECT_EQ(back.v, c.v);
      EXPECT_EQ(back.mask, c.mask);
      EXPECT_EQ(back.bias, c.bias);
      EXPECT_EQ(back.kv_len, c.kv_len);
      EXPECT_EQ(back.dout, c.dout);
      // Outputs written through the views come back as written.
      Outputs o;
      o.out.assign(static_cast<std::size_t>(out_elements(c.problem.shape)), 0.0);
      for (std::size_t i = 0; i < o.out.size(); ++i) o.out[i] = round_to(t, 0.25 * double(i) - 3);
      o.lse.assign(static_cast<std::size_t>(lse_elements(c.problem.shape)), -HUGE_VAL);
      write_outputs(o, c.problem, buf.views());
      const Outputs got = buf.outputs();
      EXPECT_EQ(got.out, o.out);
      EXPECT_EQ(got.lse, o.lse);
      EXPECT_TRUE(buf.inputs_unchanged());
    }
}

TEST(Buffers, MaskAndBiasPlanesRoundTripInEveryLayout) {
  for (Layout l : {Layout::bhtd, Layout::bthd, Layout::gapped}) {
    Case c = sample_case(DType::f32);
    c.problem.has_mask = c.problem.has_bias = true;
    c.problem.mask_dims = {true, false};
    c.problem.bias_dims = {false, true};
    c.mask.resize(static_cast<std::size_t>(mask_elements(c.problem)));
    c.bias.resize(static_cast<std::size_t>(bias_elements(c.problem)));
    for (std::size_t n = 0; n < c.mask.size(); ++n) c.mask[n] = static_cast<std::uint8_t>((n * 7 + n / 5) % 3 != 0);
    for (std::size_t n = 0; n < c.bias.size(); ++n) c.bias[n] = 0.5 * static_cast<double>(n % 11) - 2;
    CaseBuffers buf(c, l, false);
    ASSERT_TRUE(check_views(c.problem, buf.views()).empty()) << layout_name(l);
    const Case back = case_from_views(c.problem, buf.views());
    EXPECT_EQ(back.mask, c.mask) << layout_name(l);
    EXPECT_EQ(back.bias, c.bias) << layout_name(l);
  }
}

TEST(Buffers, LayoutsReallyDiffer) {
  const Case c = sample_case(DType::f32);
  CaseBuffers dense(c, Layout::bhtd, false), bthd(c, Layout::bthd, false), gapped(c, Layout::gapped, false);
  EXPECT_EQ(dense.views().q.stride, (std::array<std::int64_t, 4>{36, 9, 3, 1}));
  EXPECT_EQ(bthd.views().q.stride, (std::array<std::int64_t, 4>{36, 3, 12, 1}));
  // Gapped, q shape [2,4,3,3]: each slice is followed by 3 unused elements:
  // t stride 3 + 3 = 6, h stride 6 * 3 + 3 = 21, b stride 21 * 4 + 3 = 87.
  EXPECT_EQ(gapped.views().q.stride, (std::array<std::int64_t, 4>{87, 21, 6, 1}));
}

TEST(Buffers, WritesIntoInputsAreDetected) {
  const Case c = sample_case(DType::f16);
  CaseBuffers buf(c, Layout::bhtd, false);
  static_cast<unsigned char*>(buf.views().k.data)[3] ^= 1;
  EXPECT_FALSE(buf.inputs_unchanged());
}

// Every per-head input and index array is watched too (R14 rests on this): a write into any one
// of them, the others untouched, is seen.
TEST(Buffers, WritesIntoEveryTableInputAreDetected) {
  Case c = sample_case(DType::f32);
  c.problem.shape.B = 1;  // packed sequences need one batch row
  c.problem.has_kv_len = c.problem.has_mask = c.problem.has_bias = false;  // none of them packs
  c.problem.varlen_sequences = 2;
  for (const HeadInput& in : kHeadInputs) c.problem.*in.present = true;
  c = make_zero_case(c.problem, false);
  int watched = 0;
  for (const HeadInput& in : kHeadInputs) {
    CaseBuffers buf(c, Layout::bhtd, false);
    ASSERT_TRUE(buf.inputs_unchanged());
    static_cast<unsigned char*>((buf.views().*in.view).data)[1] ^= 1;
    EXPECT_FALSE(buf.inputs_unchanged()) << in.name;
    ++watched;
  }
  for (Case d : {c, sample_case(DType::f32)})
    for (const IndexInput& in : kIndexInputs) {
      if (!in.present(d.problem)) continue;
      CaseBuffers buf(d, Layout::bhtd, false);
      ASSERT_TRUE(buf.inputs_unchanged());
      const_cast<std::int64_t*>(buf.views().*in.view)[0] += 1;
      EXPECT_FALSE(buf.inputs_unchanged()) << in.name;
      ++watched;
    }
  EXPECT_EQ(watched, static_cast<int>(std::size(kHeadInputs) + std::size(kIndexInputs)));
}

}  // namespace
}  // namespace attnv
