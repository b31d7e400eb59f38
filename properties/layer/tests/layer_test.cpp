// The multi-head layer against the compositional checker (properties/layer/layer_check.h):
// the correct layer passes every stage, forward and backward, for self and cross attention,
// MHA and GQA, with and without biases; each planted bug fails the stage where it lives; the
// permutation equivariance of self-attention; the parameter count and KV-cache size.
#include <cstdio>
#include <numeric>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "core/layer.h"
#include "problem/error.h"
#include "properties/layer/layer_check.h"
#include "properties/layer/tests/layer_fixture.h"
#include "reference/bound/bound.h"
#include "reference/fast/fast.h"

namespace attnv::layer::testing {
namespace {

struct Variant {
  const char* name;
  core::LayerConfig cfg;
  std::int64_t B, T, Tkv;
  Problem attention;
};

Problem causal() {
  Problem p;
  p.causal = true;
  return p;
}
Problem masked_biased() {
  Problem p;
  p.has_mask = true;
  p.has_bias = true;
  p.softcap = 20.0;
  return p;
}
Problem kv_len_window() {
  Problem p;
  p.has_kv_len = true;
  p.window = Window{5, 2};
  return p;
}

std::vector<Variant> variants() {
  return {
      {"self_mha_bias", {48, 4, 4, 12, 12, true}, 2, 33, 0, Problem{}},
      {"self_gqa_nobias_causal", {40, 4, 2, 16, 8, false}, 2, 37, 0, causal()},
      {"self_mqa_bias_mask", {32, 4, 1, 8, 16, true}, 1, 29, 0, masked_biased()},
      {"cross_gqa_bias", {48, 6, 2, 8, 8, true}, 2, 21, 45, Problem{}},
      {"cross_mha_nobias_kvlen", {24, 2, 2, 12, 12, false}, 2, 17, 70, kv_len_window()},
      {"self_gqa_bias_bf16", {40, 4, 2, 16, 8, true, DType::bf16}, 2, 37, 0, causal()},
      {"cross_mha_bias_f16_mask", {32, 4, 4, 8, 8, true, DType::f16}, 1, 19, 41, masked_biased()},
      {"self_mqa_nobias_f16", {24, 3, 1, 8, 12, false, DType::f16}, 2, 29, 0, Problem{}},
  };
}

TEST(Layer, ForwardPassesEveryStage) {
  std::uint64_t seed = 1;
  for (const Variant& v : variants()) {
    LayerFixture f = make_layer(v.cfg, v.B, v.T, v.Tkv, v.attention, seed++);
    for (const bool row_local : {false, true}) {
      core::LayerOptions opt;
      opt.row_local = row_local;
      const core::LayerTrace t = core::layer_forward(f.cfg, f.weights(), f.in, opt);
      const LayerCheck check =
          check_layer_forward(f.cfg, f.weights(), f.in, t, core::layer_attention_precision(f.cfg.dtype));
      EXPECT_TRUE(check.ok()) << v.name << "\n" << check.summary();
      ASSERT_GE(check.stages.size(), 5u);
      std::printf("%-26s forward%s worst ratio %.3g over %zu stages\n", v.name, row_local ? " (row-local)" : "",
                  check.worst_ratio(), check.stages.size());
    }
  }
}

TEST(Layer, BackwardPassesEveryStage) {
  std::uint64_t seed = 100;
  for (const Variant& v : variants()) {
    LayerFixture f = make_layer(v.cfg, v.B, v.T, v.Tkv, v.attention, seed++);
    const core::LayerTrace t = core::layer_forward(f.cfg, f.weights(), f.in);
    const core::LayerGrads g = core::layer_backward(f.cfg, f.weights(), f.in, t, f.dy.data());
    const LayerCheck check =
        check_layer_backward(f.cfg, f.weights(), f.in, t, f.dy.data(), g, core::layer_attention_precision(f.cfg.dtype));
    EXPECT_TRUE(check.ok()) << v.name << "\n" << check.summary();
    EXPECT_NE(check.stage("dWq"), nullptr);
    EXPECT_NE(check.stage(f.in.self() ? "dX" : "dXkv"), nullptr);
    if (f.cfg.has_bias) {
      EXPECT_NE(check.stage("dbo"), nullptr);
    }
    std::printf("%-26s backward worst ratio %.3g over %zu stages\n", v.name, check.worst_ratio(),
                check.stages.size());
  }
}

// Each planted bug fails the stage it lives in (and the correct layer, same inputs, passes it).
TEST(Layer, CheckerCatchesPlantedBugs) {
  for (const DType dtype : {DType::f32, DType::bf16}) {
    const core::LayerConfig cfg{32, 4, 2, 8, 8, true, dtype};  // Hq*Dv == d_model for the transposed Wo
    LayerFixture f = make_layer(cfg, 2, 19, 0, Problem{}, 7);
    const PrecisionModel m = core::layer_attention_precision(dtype);
    struct Plant {
      core::LayerPlant plant;
      const char* stage;
    };
    for (const Plant& p : {Plant{core::LayerPlant::transposed_wo, "Y"}, Plant{core::LayerPlant::head_stride, "attention.out"},
                           Plant{core::LayerPlant::missing_bias, "Y"}}) {
      core::LayerOptions opt;
      opt.plant = p.plant;
      const core::LayerTrace bad = core::layer_forward(f.cfg, f.weights(), f.in, opt);
      const LayerCheck check = check_layer_forward(f.cfg, f.weights(), f.in, bad, m);
      const StageResult* s = check.stage(p.stage);
      ASSERT_NE(s, nullptr);
      EXPECT_FALSE(s->ok()) << p.stage << "\n" << check.summary();
      EXPECT_FALSE(check.ok());
      std::printf("%s plant %d caught at %s: %lld of %lld elements fail, worst ratio %.3g\n",
                  std::string(dtype_name(dtype)).c_str(), static_cast<int>(p.plant), p.stage,
                  static_cast<long long>(s->failures), static_cast<long long>(s->elements), s->worst_ratio);
    }
    const core::LayerTrace good = core::layer_forward(f.cfg, f.weights(), f.in);
    EXPECT_TRUE(check_layer_forward(f.cfg, f.weights(), f.in, good, m).ok());
  }
}

// A wrong gradient fails its stage: one dWv element nudged by 1e-3 relative, a zeroed bias
// gradient, dX without the K and V branches (self-attention), dQ of two heads swapped.
TEST(Layer, BackwardCheckerCatchesWrongGradients) {
  const core::LayerConfig cfg{24, 4, 2, 8, 8, true};
  LayerFixture f = make_layer(cfg, 1, 23, 0, causal(), 9);
  const core::LayerTrace t = core::layer_forward(f.cfg, f.weights(), f.in);
  const core::LayerGrads g = core::layer_backward(f.cfg, f.weights(), f.in, t, f.dy.data());
  const PrecisionModel m = core::layer_attention_precision();
  ASSERT_TRUE(check_layer_backward(f.cfg, f.weights(), f.in, t, f.dy.data(), g, m).ok());
  {
    core::LayerGrads bad = g;
    bad.dwv[5] *= 1.001f;
    const LayerCheck c = check_layer_backward(f.cfg, f.weights(), f.in, t, f.dy.data(), bad, m);
    EXPECT_FALSE(c.stage("dWv")->ok());
  }
  {
    core::LayerGrads bad = g;
    bad.dbq[0] = 0;
    EXPECT_FALSE(check_layer_backward(f.cfg, f.weights(), f.in, t, f.dy.data(), bad, m).stage("dbq")->ok());
  }
  {
    // dX without the V path (a self-attention layer that forgot Xkv = X feeds two branches).
    core::LayerGrads bad = g;
    core::LayerInputs cross = f.in;
    cross.xkv = f.x.data();
    cross.Tkv = f.in.T;
    const core::LayerGrads g2 = core::layer_backward(f.cfg, f.weights(), cross, t, f.dy.data());
    bad.dx = g2.dx;  // dQ Wq^T only
    EXPECT_FALSE(check_layer_backward(f.cfg, f.weights(), f.in, t, f.dy.data(), bad, m).stage("dX")->ok());
  }
  {
    // The attention gradients of head 0 and head 1 swapped.
    core::LayerGrads bad = g;
    for (std::int64_t r = 0; r < f.in.T; ++r)
      for (std::int64_t d = 0; d < cfg.Dk; ++d)
        std::swap(bad.dq[static_cast<std::size_t>(r * cfg.Hq * cfg.Dk + d)],
                  bad.dq[static_cast<std::size_t>(r * cfg.Hq * cfg.Dk + cfg.Dk + d)]);
    EXPECT_FALSE(check_layer_backward(f.cfg, f.weights(), f.in, t, f.dy.data(), bad, m).stage("attention.dq")->ok());
  }
}

// Layer(PX) = P Layer(X) for self-attention without masks or causality, judged stage by stage
// with derived allowances (no tolerance): with row-local projections (LayerOptions::row_local)
// Q, K, V are bitwise the permuted ones (asserted; with one GEMM per projection they are not:
// Eigen's blocking rounds a row differently by position, seen on V here); the attention outputs of the
// two runs have a common exact value (attention of permuted Q, K, V is the permuted attention),
// so |O1 - P O2| <= thr1 + thr2 (the acceptance thresholds of each run's bound); Y: with E(c) the
// exact c Wo + bo, |Y1 - P Y2 - (E(c1) - P E(c2))| <= thrY1 + thrY2, E(c1) - P E(c2) computed
// exactly from the two runs' actual concats.
TEST(Layer, SelfAttentionIsPermutationEquivariant) {
  const core::LayerConfig cfg{40, 4, 2, 12, 10, true};
  const std::int64_t B = 2, T = 31, dm = cfg.d_model;
  LayerFixture f = make_layer(cfg, B, T, 0, Problem{}, 21);
  std::vector<std::int64_t> perm(static_cast<std::size_t>(T));
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), std::mt19937_64(5));
  // X2[b, perm[t]] = X[b, t]: run 2 sees the rows permuted.
  std::vector<float> x2(f.x.size());
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t t = 0; t < T; ++t)
      for (std::int64_t d = 0; d < dm; ++d)
        x2[static_cast<std::size_t>((b * T + perm[static_cast<std::size_t>(t)]) * dm + d)] =
            f.x[static_cast<std::size_t>((b * T + t) * dm + d)];
  core::LayerInputs in2 = f.in;
  in2.x = x2.data();
  core::LayerOptions row_local;
  row_local.row_local = true;
  const core::LayerTrace t1 = core::layer_forward(f.cfg, f.weights(), f.in, row_local);
  const core::LayerTrace t2 = core::layer_forward(f.cfg, f.weights(), in2, row_local);
  const PrecisionModel m = core::layer_attention_precision();
  ASSERT_TRUE(check_layer_forward(f.cfg, f.weights(), f.in, t1, m).ok());
  ASSERT_TRUE(check_layer_forward(f.cfg, f.weights(), in2, t2, m).ok());
  auto row2 = [&](std::int64_t b, std::int64_t t) { return b * T + perm[static_cast<std::size_t>(t)]; };
  auto same_rows = [&](const std::vector<float>& a, const std::vector<float>& b2, std::int64_t width) {
    for (std::int64_t b = 0; b < B; ++b)
      for (std::int64_t t = 0; t < T; ++t)
        for (std::int64_t c = 0; c < width; ++c)
          if (a[static_cast<std::size_t>((b * T + t) * width + c)] != b2[static_cast<std::size_t>(row2(b, t) * width + c)])
            return false;
    return true;
  };
  ASSERT_TRUE(same_rows(t1.q, t2.q, cfg.Hq * cfg.Dk));
  ASSERT_TRUE(same_rows(t1.k, t2.k, cfg.Hkv * cfg.Dk));
  ASSERT_TRUE(same_rows(t1.v, t2.v, cfg.Hkv * cfg.Dv));

  // Attention: thresholds of both runs around the common exact value.
  const std::int64_t no = cfg.Hq * cfg.Dv;
  std::vector<double> thr_o1(t1.concat.size()), thr_o2(t2.concat.size());
  for (int run = 0; run < 2; ++run) {
    const core::LayerTrace& t = run == 0 ? t1 : t2;
    const Case c = attention_case(run == 0 ? f.in : in2, t);
    const Outputs exact = reference::fast_forward(c);
    const bound::Bounds bb = bound::forward_bound(c, exact, m);
    std::vector<double>& thr = run == 0 ? thr_o1 : thr_o2;
    for (std::int64_t b = 0; b < B; ++b)
      for (std::int64_t r = 0; r < T; ++r)
        for (std::int64_t h = 0; h < cfg.Hq; ++h)
          for (std::int64_t d = 0; d < cfg.Dv; ++d) {
            const std::size_t at = static_cast<std::size_t>((b * T + r) * no + h * cfg.Dv + d);
            const std::size_t ci = c.oi(b, h, r, d);
            thr[at] = bound::threshold(t.concat[at], exact.out[ci], bb.out[ci], DType::f32);
          }
  }
  double worst_o = 0, worst_y = 0;
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t t = 0; t < T; ++t)
      for (std::int64_t c = 0; c < no; ++c) {
        const std::size_t a1 = static_cast<std::size_t>((b * T + t) * no + c);
        const std::size_t a2 = static_cast<std::size_t>(row2(b, t) * no + c);
        const double diff = std::abs(static_cast<double>(t1.concat[a1]) - t2.concat[a2]);
        worst_o = std::max(worst_o, diff / (thr_o1[a1] + thr_o2[a2]));
      }
  EXPECT_LE(worst_o, 1.0);

  std::vector<double> e1, thr1, e2, thr2;
  const MatFactor wo{f.wo.data(), no, dm, false};
  check_matmul("Y1", {{MatFactor{t1.concat.data(), B * T, no, false}, wo}}, f.bo.data(), t1.y.data(), B * T, dm, &e1, &thr1);
  check_matmul("Y2", {{MatFactor{t2.concat.data(), B * T, no, false}, wo}}, f.bo.data(), t2.y.data(), B * T, dm, &e2, &thr2);
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t t = 0; t < T; ++t)
      for (std::int64_t j = 0; j < dm; ++j) {
        const std::size_t a1 = static_cast<std::size_t>((b * T + t) * dm + j);
        const std::size_t a2 = static_cast<std::size_t>(row2(b, t) * dm + j);
        // e1 - e2 are correctly rounded doubles of E(c1), E(c2): their own error 2^-53 each is
        // inside thr (accept's 2^-53 |exact| term).
        const double lhs = std::abs((static_cast<double>(t1.y[a1]) - t2.y[a2]) - (e1[a1] - e2[a2]));
        worst_y = std::max(worst_y, lhs / (thr1[a1] + thr2[a2]));
      }
  EXPECT_LE(worst_y, 1.0);
  std::printf("permutation: worst |O1 - P O2| / allowance %.3g, worst Y residual / allowance %.3g\n", worst_o, worst_y);

  // The same comparison catches a layer that is not equivariant: a position-dependent output
  // (row t of Y2 shifted by one ulp-scale step per position would hide; use a real bug: run 2
  // with causal attention).
  core::LayerInputs in_causal = in2;
  in_causal.attention.causal = true;
  const core::LayerTrace t3 = core::layer_forward(f.cfg, f.weights(), in_causal, row_local);
  double worst_bad = 0;
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t t = 0; t < T; ++t)
      for (std::int64_t c = 0; c < no; ++c) {
        const std::size_t a1 = static_cast<std::size_t>((b * T + t) * no + c);
        const std::size_t a2 = static_cast<std::size_t>(row2(b, t) * no + c);
        worst_bad = std::max(worst_bad, std::abs(static_cast<double>(t1.concat[a1]) - t3.concat[a2]) /
                                            (thr_o1[a1] + thr_o2[a2]));
      }
  EXPECT_GT(worst_bad, 1.0);
}

// Dropout through the layer (training): the attention stage against the dropout reference, the
// projections as always; the same trace fails the plain attention check (dropout did happen),
// and the backward runs with the same mask (its attention stage is checked in dropout_tests).
TEST(Layer, DropoutThroughTheLayer) {
  const core::LayerConfig cfg{32, 4, 2, 8, 8, true};
  LayerFixture f = make_layer(cfg, 2, 25, 0, causal(), 31);
  core::LayerOptions opt;
  opt.attention.dropout = {0.25, 2026, true};
  const core::LayerTrace t = core::layer_forward(f.cfg, f.weights(), f.in, opt);
  const PrecisionModel m = core::layer_attention_precision();
  const LayerCheck with = check_layer_forward(f.cfg, f.weights(), f.in, t, m, &opt.attention.dropout);
  EXPECT_TRUE(with.ok()) << with.summary();
  EXPECT_NE(with.stage("attention.dropout"), nullptr);
  EXPECT_FALSE(check_layer_forward(f.cfg, f.weights(), f.in, t, m).ok());
  const core::LayerGrads g = core::layer_backward(f.cfg, f.weights(), f.in, t, f.dy.data(), opt);
  EXPECT_EQ(g.dx.size(), f.x.size());
  std::printf("layer with dropout p=0.25: worst ratio %.3g\n", with.worst_ratio());
}

// Hand-computed sizes of real configurations.
TEST(Layer, ParameterCountAndKvCache) {
  // Llama-2-70B attention: d_model 8192, 64 query heads, 8 KV heads, head dim 128, no biases:
  // 8192 (8192 + 1024 + 1024) + 8192 * 8192 = 83,886,080 + 67,108,864.
  EXPECT_EQ(core::layer_parameter_count({8192, 64, 8, 128, 128, false}), 150994944);
  // Llama-3-8B: d_model 4096, 32 / 8 heads of 128: 4096 * 6144 + 4096 * 4096.
  EXPECT_EQ(core::layer_parameter_count({4096, 32, 8, 128, 128, false}), 41943040);
  // GPT-2 small (MHA with biases): 4 * 768^2 + 4 * 768.
  EXPECT_EQ(core::layer_parameter_count({768, 12, 12, 64, 64, true}), 2362368);
  // KV cache of one Llama-2-70B layer at 4096 tokens in f16: 2 * 4096 * 8 * 128 * 2 B = 16 MiB.
  EXPECT_EQ(core::kv_cache_bytes_per_layer(1, 4096, 8, 128, DType::f16), 16777216);
  EXPECT_EQ(core::kv_cache_bytes_per_layer(4, 2048, 8, 128, DType::f32), 67108864);
  EXPECT_EQ(core::kv_cache_bytes_per_layer(1, 1, 1, 1, DType::bf16), 4);
}

TEST(Layer, BadCallsAreInputErrors) {
  LayerFixture f = make_layer({16, 4, 3, 4, 4, false}, 1, 5, 0, Problem{}, 3);  // Hq % Hkv != 0
  EXPECT_THROW(core::layer_forward(f.cfg, f.weights(), f.in), InputError);
  LayerFixture g = make_layer({16, 2, 1, 4, 4, false}, 1, 5, 0, Problem{}, 3);
  core::LayerInputs in = g.in;
  in.x = nullptr;
  EXPECT_THROW(core::layer_forward(g.cfg, g.weights(), in), InputError);
  Problem masked;
  masked.has_mask = true;
  in = g.in;
  in.attention = masked;  // mask asked for, none given
  EXPECT_THROW(core::layer_forward(g.cfg, g.weights(), in), InputError);
}

// A trace or gradients of the wrong size fail the check (stage "trace"), never read out of bounds.
TEST(Layer, MalformedTraceFailsTheCheck) {
  LayerFixture f = make_layer({16, 2, 1, 4, 4, true}, 1, 6, 0, Problem{}, 4);
  core::LayerTrace t = core::layer_forward(f.cfg, f.weights(), f.in);
  const core::LayerGrads g = core::layer_backward(f.cfg, f.weights(), f.in, t, f.dy.data());
  const PrecisionModel m = core::layer_attention_precision();
  core::LayerTrace short_q = t;
  short_q.q.pop_back();
  const LayerCheck c = check_layer_forward(f.cfg, f.weights(), f.in, short_q, m);
  EXPECT_FALSE(c.ok());
  EXPECT_NE(c.stage("trace"), nullptr);
  core::LayerGrads short_dx = g;
  short_dx.dx.resize(3);
  const LayerCheck b = check_layer_backward(f.cfg, f.weights(), f.in, t, f.dy.data(), short_dx, m);
  EXPECT_FALSE(b.ok());
  EXPECT_FALSE(b.stage("dX")->ok());
  core::LayerGrads no_dbo = g;
  no_dbo.dbo.clear();
  EXPECT_FALSE(check_layer_backward(f.cfg, f.weights(), f.in, t, f.dy.data(), no_dbo, m).stage("dbo")->ok());
}

}  // namespace
}  // namespace attnv::layer::testing
