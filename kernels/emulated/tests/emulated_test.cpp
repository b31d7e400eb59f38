// The emulated kernels on cases whose answer is known exactly, and each bug switch shown to
// change what it claims to change. Accuracy against the reference under the bound is checked by
// reference/bound's calibration test.
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "problem/error.h"
#include "kernels/emulated/emulated.h"

namespace attnv::kernels::emulated {
namespace {

Case filled_case(const Shape& s, DType t, bool with_dout = true) {
  Problem p;
  p.shape = s;
  p.dtype = t;
  Case c = make_zero_case(p, with_dout);
  double x = 0.37;
  for (auto* v : {&c.q, &c.k, &c.v, &c.dout})
    for (double& e : *v) e = (x = std::fmod(x * 5.3 + 0.29, 4.0) - 2.0);
  round_to_storage(c);
  return c;
}

std::vector<Config> every_config(DType storage) {
  std::vector<Config> out;
  for (Structure st : {Structure::naive, Structure::tiled})
    for (bool p_rounded : {false, true}) {
      Config c;
      c.model = PrecisionModel::natural(storage, st == Structure::tiled ? 2 : 0);
      if (p_rounded) c.model.p_dtype = storage == DType::f64 ? DType::f32 : storage;
      c.structure = st;
      out.push_back(c);
    }
  return out;
}

TEST(Emulated, OneVisibleKeyReturnsItsValueExactly) {
  // P = exp(0) / 1 = 1 exactly, so O = v bit for bit, and with dO: D = dO.O = dP exactly,
  // dS = 0, so dQ = dK = 0 and dV = dO.
  for (DType t : {DType::f64, DType::f32, DType::f16, DType::bf16}) {
    const Case c = filled_case(Shape{1, 2, 1, 3, 1, 5, 4}, t);
    for (const Config& cfg : every_config(t)) {
      const Outputs o = backward(c, cfg);
      for (std::int64_t h = 0; h < 2; ++h)
        for (std::int64_t i = 0; i < 3; ++i)
          for (std::int64_t d = 0; d < 4; ++d) {
            EXPECT_EQ(o.out[c.oi(0, h, i, d)], c.v[c.vi(0, 0, 0, d)]) << dtype_name(t);
            EXPECT_EQ(o.dq[c.qi(0, h, i, 0)], 0);
          }
      for (std::int64_t d = 0; d < 4; ++d) {
        double sum = 0;  // dV = sum over the 2 heads x 3 rows of dO, in the accumulator
        for (std::int64_t h = 0; h < 2; ++h)
          for (std::int64_t i = 0; i < 3; ++i) sum = round_to(cfg.model.accum, sum + c.dout[c.oi(0, h, i, d)]);
        EXPECT_EQ(o.dv[c.vi(0, 0, 0, d)], round_to(cfg.model.out, sum));
      }
      for (double x : o.dk) EXPECT_EQ(x, 0);
    }
  }
}

TEST(Emulated, TwoEqualKeysAverageWithOneRounding) {
  // Identical keys: P = 1/2 each, exactly, in both structures (block 2 or 1 key per block).
  Case c = filled_case(Shape{1, 1, 1, 1, 2, 3, 3}, DType::f32, false);
  for (std::int64_t d = 0; d < 3; ++d) c.k[c.ki(0, 0, 1, d)] = c.k[c.ki(0, 0, 0, d)];
  for (std::int64_t block : {0, 1, 2}) {
    Config cfg;
    cfg.model = PrecisionModel::natural(DType::f32, block);
    cfg.structure = block ? Structure::tiled : Structure::naive;
    const Outputs o = forward(c, cfg);
    for (std::int64_t d = 0; d < 3; ++d)
      EXPECT_EQ(o.out[d], round_to(DType::f32, (c.v[c.vi(0, 0, 0, d)] + c.v[c.vi(0, 0, 1, d)]) / 2));
  }
}

TEST(Emulated, FullyMaskedRowsAndHiddenKeys) {
  Case c = filled_case(Shape{2, 1, 1, 2, 4, 3, 3}, DType::bf16);
  c.problem.has_kv_len = true;
  c.kv_len = {3, 0};  // batch 1: every row fully masked; batch 0: key 3 hidden
  // A hidden key holds garbage that must not leak.
  for (std::int64_t d = 0; d < 3; ++d) c.v[c.vi(0, 0, 3, d)] = c.k[c.ki(0, 0, 3, d)] = 1e30;
  for (const Config& cfg : every_config(DType::bf16)) {
    const Outputs o = backward(c, cfg);
    for (std::int64_t i = 0; i < 2; ++i) {
      EXPECT_EQ(o.lse[c.li(1, 0, i)], -kInf);
      EXPECT_TRUE(std::isfinite(o.lse[c.li(0, 0, i)]));
      for (std::int64_t d = 0; d < 3; ++d) {
        EXPECT_EQ(o.out[c.oi(1, 0, i, d)], 0);
        EXPECT_EQ(o.dq[c.qi(1, 0, i, d)], 0);
        EXPECT_TRUE(std::isfinite(o.out[c.oi(0, 0, i, d)]));
      }
    }
    for (std::int64_t d = 0; d < 3; ++d) {
      EXPECT_EQ(o.dk[c.ki(0, 0, 3, d)], 0);
      EXPECT_EQ(o.dv[c.vi(0, 0, 3, d)], 0);
      for (std::int64_t j = 0; j < 4; ++j) EXPECT_EQ(o.dv[c.vi(1, 0, j, d)], 0);
    }
  }
}

TEST(Emulated, OutputsAreRepresentableInTheOutputDtype) {
  for (DType t : {DType::f32, DType::f16, DType::bf16}) {
    const Case c = filled_case(Shape{1, 2, 1, 3, 37, 5, 6}, t);
    for (Config cfg : every_config(t)) {
      for (bool trunc : {false, true}) {
        cfg.bugs.truncate_output = trunc;
        const Outputs o = backward(c, cfg);
        for (const auto* v : {&o.out, &o.lse, &o.dq, &o.dk, &o.dv})
          for (double x : *v) EXPECT_TRUE(representable(t, x)) << x;
      }
    }
  }
}

TEST(Emulated, NaiveAndTiledAgreeToTheirRoundingInF64) {
  // Both compute the same sums in f64 in different orders; a 37-key row with |v| <= 2 and
  // weights summing to 1 cannot differ by more than a few hundred ulps of 2: 1e-12 is 4,500
  // ulps of 2 (2^-52 * 2 = 4.4e-16).
  const Case c = filled_case(Shape{1, 2, 1, 3, 37, 5, 6}, DType::f64);
  Config naive, tiled;
  naive.model = PrecisionModel::natural(DType::f64);
  tiled.model = PrecisionModel::natural(DType::f64, 4);
  tiled.structure = Structure::tiled;
  const Outputs a = backward(c, naive), b = backward(c, tiled);
  for (std::size_t e = 0; e < a.out.size(); ++e) EXPECT_NEAR(a.out[e], b.out[e], 1e-12);
}

TEST(Emulated, EachBugChangesTheOutputItClaimsTo) {
  const Case c = filled_case(Shape{1, 2, 1, 3, 37, 5, 6}, DType::bf16);
  Config ok;
  ok.model = PrecisionModel::natural(DType::bf16, 8);
  ok.structure = Structure::tiled;
  const Outputs base = backward(c, ok);
  auto with = [&](auto set) {
    Config cfg = ok;
    set(cfg.bugs);
    return backward(c, cfg);
  };
  EXPECT_NE(with([](Bugs& b) { b.pv_accum_f16 = true; }).out, base.out);
  EXPECT_NE(with([](Bugs& b) { b.sloppy_exp = true; }).out, base.out);
  EXPECT_NE(with([](Bugs& b) { b.d_model_scale = true; }).lse, base.lse);
  const Outputs tr = with([](Bugs& b) { b.truncate_output = true; });
  for (std::size_t e = 0; e < base.out.size(); ++e)
    EXPECT_LE(std::fabs(tr.out[e]), std::fabs(base.out[e]));  // toward zero, never away
  EXPECT_NE(tr.out, base.out);
  const Outputs dk = with([](Bugs& b) { b.dk_missing_scale = true; });
  EXPECT_NE(dk.dk, base.dk);
  EXPECT_EQ(dk.dq, base.dq);
  EXPECT_EQ(dk.dv, base.dv);
}

TEST(Emulated, UnsupportedModelsAreInputErrors) {
  const Case c = filled_case(Shape{1, 1, 1, 1, 2, 2, 2}, DType::f64);
  Config cfg;
  cfg.model = PrecisionModel::natural(DType::f64);
  cfg.model.accum = DType::f32;  // narrower than the storage
  EXPECT_THROW(forward(c, cfg), InputError);
  Case nod = filled_case(Shape{1, 1, 1, 1, 2, 2, 2}, DType::f32, false);
  EXPECT_THROW(backward(nod, Config{}), InputError);
}

}  // namespace
}  // namespace attnv::kernels::emulated
