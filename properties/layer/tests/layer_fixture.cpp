#include "properties/layer/tests/layer_fixture.h"

#include <cmath>
#include <random>

namespace attnv::layer::testing {

core::LayerWeights LayerFixture::weights() const {
  core::LayerWeights w{wq.data(), wk.data(), wv.data(), wo.data(), nullptr, nullptr, nullptr, nullptr};
  if (cfg.has_bias) {
    w.bq = bq.data();
    w.bk = bk.data();
    w.bv = bv.data();
    w.bo = bo.data();
  }
  return w;
}

LayerFixture make_layer(const core::LayerConfig& cfg, std::int64_t B, std::int64_t T, std::int64_t Tkv,
                        const Problem& attention, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  auto fill = [&](std::vector<float>& v, std::int64_t n, float scale) {
    v.resize(static_cast<std::size_t>(n));
    for (float& e : v) e = normal(rng) * scale;
  };
  LayerFixture f;
  f.cfg = cfg;
  const std::int64_t dm = cfg.d_model, nq = cfg.Hq * cfg.Dk, nk = cfg.Hkv * cfg.Dk, nv = cfg.Hkv * cfg.Dv,
                     no = cfg.Hq * cfg.Dv;
  const float ws = 1.0f / std::sqrt(static_cast<float>(dm));
  fill(f.wq, dm * nq, ws);
  fill(f.wk, dm * nk, ws);
  fill(f.wv, dm * nv, ws);
  fill(f.wo, no * dm, 1.0f / std::sqrt(static_cast<float>(no)));
  fill(f.bq, nq, 0.5f);
  fill(f.bk, nk, 0.5f);
  fill(f.bv, nv, 0.5f);
  fill(f.bo, dm, 0.5f);
  fill(f.x, B * T * dm, 1.0f);
  const std::int64_t keys = Tkv > 0 ? Tkv : T;
  if (Tkv > 0) fill(f.xkv, B * Tkv * dm, 1.0f);
  fill(f.dy, B * T * dm, 1.0f);
  f.in.B = B;
  f.in.T = T;
  f.in.Tkv = Tkv;
  f.in.x = f.x.data();
  f.in.xkv = Tkv > 0 ? f.xkv.data() : nullptr;
  f.in.attention = attention;
  std::uniform_real_distribution<double> unit(0, 1);
  if (attention.has_mask) {
    f.mask.resize(static_cast<std::size_t>(T * keys));
    for (auto& m : f.mask) m = unit(rng) < 0.8 ? 1 : 0;
    f.in.mask = f.mask.data();
  }
  if (attention.has_bias) {
    fill(f.attn_bias, T * keys, 0.5f);
    f.in.attn_bias = f.attn_bias.data();
  }
  if (attention.has_kv_len) {
    f.kv_len.resize(static_cast<std::size_t>(B));
    for (auto& k : f.kv_len) k = static_cast<std::int64_t>(unit(rng) * static_cast<double>(keys + 1)) % (keys + 1);
    f.in.kv_len = f.kv_len.data();
  }
  return f;
}

}  // namespace attnv::layer::testing
