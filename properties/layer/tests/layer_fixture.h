#pragma once
// A random layer problem for the layer tests: weights ~ N(0, 1/d_model) (so Q, K, V are O(1)),
// inputs and dY ~ N(0, 1), all f32; the attention options of the given Problem.
#include <cstdint>
#include <vector>

#include "core/layer.h"

namespace attnv::layer::testing {

struct LayerFixture {
  core::LayerConfig cfg;
  std::vector<float> wq, wk, wv, wo, bq, bk, bv, bo, x, xkv, dy, attn_bias;
  std::vector<std::uint8_t> mask;
  std::vector<std::int64_t> kv_len;
  core::LayerInputs in;
  core::LayerWeights weights() const;
};

// Tkv == 0: self-attention. `attention` gives the options (causal, has_mask, ...).
LayerFixture make_layer(const core::LayerConfig& cfg, std::int64_t B, std::int64_t T, std::int64_t Tkv,
                        const Problem& attention, std::uint64_t seed);

}  // namespace attnv::layer::testing
