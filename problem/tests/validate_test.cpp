#include "problem/validate.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "problem/buffers.h"
#include "problem/error.h"
#include "problem/tests/only_error.h"

namespace attnv {
namespace {

Problem ok_problem() {
  Problem p;
  p.shape = {2, 4, 2, 5, 7, 8, 6};
  return p;
}

using testing::only_error;

TEST(Validate, AcceptsAValidProblem) { EXPECT_TRUE(check_problem(ok_problem()).empty()); }

TEST(Validate, RejectsEachImpossibleProblemWithAClearMessage) {
  Problem p = ok_problem();
  p.shape.Hq = 3;
  EXPECT_EQ(only_error(p), "Hq (3) must be a multiple of Hkv (2)");
  p = ok_problem();
  p.shape.Tk = 0;
  EXPECT_EQ(only_error(p), "Tk must be >= 1, got 0");
  p = ok_problem();
  p.shape.Dk = -4;
  EXPECT_EQ(only_error(p), "Dk must be >= 1, got -4");
  p = ok_problem();
  p.shape.Tq = std::int64_t{1} << 40;
  p.shape.Tk = std::int64_t{1} << 40;
  EXPECT_NE(only_error(p).find("mask/bias [Tq,Tk] overflows 64 bits"), std::string::npos);
  p = ok_problem();
  p.scale = std::numeric_limits<double>::infinity();
  EXPECT_EQ(only_error(p), "scale must be finite and > 0, got inf");
  p.scale = 0.0;
  EXPECT_EQ(only_error(p), "scale must be finite and > 0, got 0");
  p = ok_problem();
  p.softcap = -1.0;
  EXPECT_EQ(only_error(p), "softcap must be finite and > 0 when set, got -1");
  p = ok_problem();
  p.window = {-3, 2};
  EXPECT_EQ(only_error(p), "window sides must be >= 0, or -1 for unbounded; got (-3, 2)");
  EXPECT_THROW(require_valid(p), InputError);
}

TEST(Validate, CaseSizesKvLenAndRepresentability) {
  Problem p = ok_problem();
  p.dtype = DType::f16;
  p.has_kv_len = true;
  Case c = make_zero_case(p);
  EXPECT_TRUE(check_case(c).empty());
  c.kv_len[1] = 8;
  c.q[3] = 0.1;  // not an f16 value
  c.v.pop_back();
  auto e = check_case(c);
  ASSERT_EQ(e.size(), 1u);  // a size mismatch stops before value checks
  EXPECT_EQ(e[0], "v has 167 elements, expected 168");
  c.v.push_back(0);
  e = check_case(c);
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0], "kv_len[1] = 8 is outside [0, Tk=7]");
  EXPECT_NE(e[1].find("q element 3 = 0.10000000000000001 is not representable in f16"), std::string::npos);
}

TEST(Validate, SinksAreOnePerQueryHeadAndFinite) {
  Problem p = ok_problem();
  p.has_sinks = true;
  Case c = make_zero_case(p);
  ASSERT_EQ(c.sinks.size(), 4u);
  EXPECT_TRUE(check_case(c).empty());
  c.sinks[2] = std::numeric_limits<double>::infinity();
  auto e = check_case(c);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0], "sinks element 2 is inf, expected finite");
  c.sinks.pop_back();
  e = check_case(c);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0], "sinks has 3 elements, expected 4");
  // The views: a problem with sinks needs the tensor, one without must not get it.
  const Case zero = make_zero_case(p);
  CaseBuffers with(zero, Layout::gapped, false);
  EXPECT_TRUE(check_views(p, with.views()).empty());
  Problem plain = p;
  plain.has_sinks = false;
  const auto e2 = check_views(plain, with.views());
  ASSERT_FALSE(e2.empty());
  EXPECT_EQ(e2[0], "sinks buffer presence does not match the problem");
  EXPECT_FALSE(check_decode_problem(p).empty());
}

TEST(Validate, MaskAndBiasExtentsAreCheckedInProblemCaseAndViews) {
  Problem p = ok_problem();  // B = 2, Hq = 4, Tq = 5, Tk = 7
  // Extents of a tensor the problem does not have.
  p.mask_dims.heads = true;
  EXPECT_EQ(only_error(p), "mask_dims gives the mask per-batch or per-head extents, but the problem has no mask");
  p.mask_dims = {};
  p.bias_dims.batch = true;
  EXPECT_EQ(only_error(p), "bias_dims gives the bias per-batch or per-head extents, but the problem has no bias");
  // The case: [1, Hq, Tq, Tk] mask and [B, Hq, Tq, Tk] bias.
  p.has_mask = p.has_bias = true;
  p.mask_dims = {false, true};
  p.bias_dims = {true, true};
  Case c = make_zero_case(p);
  EXPECT_EQ(c.mask.size(), 4u * 5 * 7);
  EXPECT_EQ(c.bias.size(), 2u * 4 * 5 * 7);
  EXPECT_TRUE(check_case(c).empty());
  c.mask.resize(5 * 7);  // a [Tq, Tk] mask where the problem says per head
  auto e = check_case(c);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0], "mask has 35 elements, expected 140");
  // The views: rank 4 [1,Hq,Tq,Tk] and [B,Hq,Tq,Tk], in every layout.
  const Case zero = make_zero_case(p);
  for (Layout l : {Layout::bhtd, Layout::bthd, Layout::gapped}) {
    CaseBuffers buf(zero, l, false);
    EXPECT_TRUE(check_views(p, buf.views()).empty()) << layout_name(l);
    EXPECT_EQ(buf.views().mask.rank, 4);
    EXPECT_EQ(buf.views().mask.shape, (std::array<std::int64_t, 4>{1, 4, 5, 7}));
    EXPECT_EQ(buf.views().bias.shape, (std::array<std::int64_t, 4>{2, 4, 5, 7}));
  }
  CaseBuffers buf(zero, Layout::bhtd, false);
  // The same views under a problem that says otherwise: each error names the tensor and the extent.
  Problem other = p;
  other.mask_dims = {true, true};
  auto ev = check_views(other, buf.views());
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0], "mask: dimension 0 is 1, expected 2");
  other = p;
  other.bias_dims = {};
  ev = check_views(other, buf.views());
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0], "bias: rank 4, expected 2 ([Tq,Tk]: the problem gives it no per-batch or per-head extent)");
  // A [Tq, Tk] view where the problem asks for planes.
  Problem flat = p;
  flat.mask_dims = flat.bias_dims = {};
  const Case flat_case = make_zero_case(flat);
  CaseBuffers flat_buf(flat_case, Layout::bhtd, false);
  ev = check_views(p, flat_buf.views());
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0], "mask: rank 2, expected 4 ([1,Hq,Tq,Tk]: the problem gives it per-batch or per-head extents)");
  EXPECT_EQ(ev[1], "bias: rank 2, expected 4 ([B,Hq,Tq,Tk]: the problem gives it per-batch or per-head extents)");
  // Nothing reads past a plane: element (b, h, i, j) of a view is where broadcast_offset says.
  const TensorRef& m = buf.views().mask;
  EXPECT_EQ(broadcast_offset(m, 1, 3, 4, 6), broadcast_offset(m, 0, 3, 4, 6));
  EXPECT_EQ(broadcast_offset(m, 0, 3, 4, 6), 3 * 35 + 4 * 7 + 6);
}

struct Buffers {
  std::vector<float> q, k, v, out, lse;
  KernelViews views;
  explicit Buffers(const Problem& p) {
    const Shape& s = p.shape;
    q.resize(static_cast<std::size_t>(q_elements(s)));
    k.resize(static_cast<std::size_t>(k_elements(s)));
    v.resize(static_cast<std::size_t>(v_elements(s)));
    out.resize(static_cast<std::size_t>(out_elements(s)));
    lse.resize(static_cast<std::size_t>(lse_elements(s)));
    auto ref = [](std::vector<float>& buf, std::array<std::int64_t, 4> shape, int rank) {
      TensorRef t;
      t.data = buf.data();
      t.rank = rank;
      t.shape = shape;
      t.stride = dense_strides(shape, rank);
      return t;
    };
    views.q = ref(q, {s.B, s.Hq, s.Tq, s.Dk}, 4);
    views.k = ref(k, {s.B, s.Hkv, s.Tk, s.Dk}, 4);
    views.v = ref(v, {s.B, s.Hkv, s.Tk, s.Dv}, 4);
    views.out = ref(out, {s.B, s.Hq, s.Tq, s.Dv}, 4);
    views.lse = ref(lse, {s.B, s.Hq, s.Tq, 0}, 3);
  }
};

TEST(Validate, ViewsDenseAndTransposedAreAccepted) {
  const Problem p = ok_problem();
  Buffers b(p);
  EXPECT_TRUE(check_views(p, b.views).empty());
  // [B,T,H,D] layout of the same buffer: strides permuted, still one element per address.
  const Shape& s = p.shape;
  b.views.out.stride = {s.Tq * s.Hq * s.Dv, s.Dv, s.Hq * s.Dv, 1};
  EXPECT_TRUE(check_views(p, b.views).empty());
}

TEST(Validate, ViewsAliasingAndBadStridesAreRejected) {
  const Problem p = ok_problem();
  Buffers b(p);
  b.views.out.data = b.q.data();  // output written over an input
  auto e = check_views(p, b.views);
  ASSERT_FALSE(e.empty());
  EXPECT_EQ(e[0], "out overlaps input q");
  b = Buffers(p);
  b.views.out.stride[2] = 0;  // every query row written to the same place
  e = check_views(p, b.views);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0], "out: its strides make elements share memory");
  b = Buffers(p);
  b.views.k.stride[3] = -1;
  e = check_views(p, b.views);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0], "k: stride 3 is negative (-1)");
  b = Buffers(p);
  b.views.v.stride[0] = std::numeric_limits<std::int64_t>::max();
  e = check_views(p, b.views);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0], "v: the strides address beyond 64 bits");
  b = Buffers(p);
  b.views.v.stride[0] = std::int64_t{1} << 62;  // addressable, but not in bytes
  e = check_views(p, b.views);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0], "v: the byte extent overflows 64 bits");
  b = Buffers(p);
  b.views.lse.data = b.out.data();
  e = check_views(p, b.views);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0], "out overlaps output lse");
}

TEST(Validate, ViewsOfTheWrongDtypeOrKvLenAreRejected) {
  Problem p = ok_problem();
  p.has_kv_len = true;
  Buffers b(p);
  std::vector<std::int64_t> kv_len = {7, 8};
  b.views.kv_len = kv_len.data();
  b.views.k.dtype = DType::f16;  // the buffers hold f32
  b.views.lse.dtype = DType::f16;
  auto e = check_views(p, b.views);
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[0], "k: dtype f16, expected the problem's f32");
  EXPECT_EQ(e[1], "lse: dtype f16, expected f32");
  EXPECT_EQ(e[2], "kv_len[1] = 8 is outside [0, Tk=7]");
}

// Found by the views fuzzer: a largest element offset of exactly 2^63 - 1 made "offset + 1"
// overflow (fuzz/regressions/views/check_views_extent_last_offset_int64_max).
TEST(Validate, ExtentAtTheTopOfInt64IsAnErrorNotAnOverflow) {
  Problem p = ok_problem();
  Buffers b(p);
  b.views.v.stride = {std::numeric_limits<std::int64_t>::max(), 0, 0, 0};
  b.views.v.shape = {2, 2, 7, 6};
  const auto e = check_views(p, b.views);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0], "v: the byte extent overflows 64 bits");
}

// Decode calls (problem/kernel.h, Kernel::decode): the problem's rules, then the views.
TEST(Validate, DecodeProblemAndViews) {
  Problem p = ok_problem();  // B=2 Hq=4 Hkv=2 n=Tq=5 capacity=Tk=7 Dk=8 Dv=6
  EXPECT_EQ(check_decode_problem(p).size(), 1u);  // not causal
  EXPECT_NE(check_decode_problem(p)[0].find("causal with bottom_right alignment"), std::string::npos);
  p.causal = true;
  p.alignment = Alignment::bottom_right;
  EXPECT_TRUE(check_decode_problem(p).empty());
  p.window = {3, 0};
  p.softcap = 2.0;
  EXPECT_TRUE(check_decode_problem(p).empty()) << "window and softcap are allowed";
  Problem bad = p;
  bad.has_bias = true;
  bad.has_kv_len = true;
  EXPECT_EQ(check_decode_problem(bad).size(), 2u);

  const Shape& s = p.shape;
  auto dense = [](std::vector<float>& buf, std::array<std::int64_t, 4> shape, int rank) {
    std::int64_t n = 1;
    for (int d = 0; d < rank; ++d) n *= shape[static_cast<std::size_t>(d)];
    buf.assign(static_cast<std::size_t>(n), 0.f);
    return TensorRef{buf.data(), DType::f32, rank, shape, dense_strides(shape, rank)};
  };
  std::vector<float> q, kn, vn, kc, vc, out, lse;
  DecodeViews v;
  v.q = dense(q, {s.B, s.Hq, s.Tq, s.Dk}, 4);
  v.k_new = dense(kn, {s.B, s.Hkv, s.Tq, s.Dk}, 4);
  v.v_new = dense(vn, {s.B, s.Hkv, s.Tq, s.Dv}, 4);
  v.k_cache = dense(kc, {s.B, s.Hkv, s.Tk, s.Dk}, 4);
  v.v_cache = dense(vc, {s.B, s.Hkv, s.Tk, s.Dv}, 4);
  v.out = dense(out, {s.B, s.Hq, s.Tq, s.Dv}, 4);
  v.lse = dense(lse, {s.B, s.Hq, s.Tq, 0}, 3);
  std::vector<std::int64_t> cache_len = {2, 0};  // 2 + 5 new = 7 = capacity: fits exactly
  v.cache_len = cache_len.data();
  EXPECT_TRUE(check_decode_views(p, v).empty());
  cache_len = {3, 0};
  ASSERT_EQ(check_decode_views(p, v).size(), 1u);
  EXPECT_EQ(check_decode_views(p, v)[0], "cache_len[0] = 3 plus n = 5 new tokens exceeds the cache capacity Tk = 7");
  cache_len = {0, -1};
  EXPECT_EQ(check_decode_views(p, v)[0], "cache_len[1] = -1 is negative");
  cache_len = {0, 0};
  DecodeViews w = v;
  w.v_cache.stride[2] = 0;  // every position of the cache aliases one row
  ASSERT_EQ(check_decode_views(p, w).size(), 1u);
  EXPECT_EQ(check_decode_views(p, w)[0], "v_cache: its strides make elements share memory");
  w = v;
  w.k_new = v.k_cache;
  w.k_new.shape = v.k_new.shape;
  ASSERT_FALSE(check_decode_views(p, w).empty());
  EXPECT_EQ(check_decode_views(p, w)[0], "k_cache overlaps input k_new");
}

}  // namespace
}  // namespace attnv
