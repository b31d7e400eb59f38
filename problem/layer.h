#pragma once
// The multi-head attention layer's data (docs/semantics.md "The multi-head layer"): its
// configuration, weights, inputs, the trace of a forward (the intermediates each stage read) and
// the gradients of a backward. The core computes them (core/layer.h); the compositional checker
// judges them (properties/layer/layer_check.h) without depending on the core.
#include <cstdint>
#include <vector>

#include "problem/dtype.h"
#include "problem/problem.h"

namespace attnv {

struct LayerConfig {
  std::int64_t d_model = 0;
  std::int64_t Hq = 1, Hkv = 1;  // Hq % Hkv == 0 (GQA when Hkv < Hq)
  std::int64_t Dk = 0, Dv = 0;   // per-head dims of Q/K and of V
  bool has_bias = false;         // bq, bk, bv, bo all present (else none)
  // Storage of the attention's tensors (Q, K, V, O, dO, dQ, dK, dV and the attention bias):
  // f32, f16 or bf16. The projections accumulate in f32 and round once into it; X, weights, Y
  // and the weight/input gradients stay f32.
  DType dtype = DType::f32;
};

// Weights and biases: Wq [d_model, Hq*Dk], Wk [d_model, Hkv*Dk], Wv [d_model, Hkv*Dv],
// Wo [Hq*Dv, d_model], row-major; biases of the output widths (ignored unless has_bias).
struct LayerWeights {
  const float* wq = nullptr;
  const float* wk = nullptr;
  const float* wv = nullptr;
  const float* wo = nullptr;
  const float* bq = nullptr;
  const float* bk = nullptr;
  const float* bv = nullptr;
  const float* bo = nullptr;
};

// One call's inputs. xkv == nullptr: self-attention (Xkv = X, Tkv = T).
// `attention` carries the attention options (scale, softcap, causal, alignment, window,
// has_mask, has_bias, has_kv_len); its shape and dtype are set by the layer. mask [T, Tkv]
// (1 = visible), attn_bias [T, Tkv] and kv_len [B] as the problem asks.
struct LayerInputs {
  std::int64_t B = 1, T = 1, Tkv = 0;  // Tkv ignored for self-attention
  const float* x = nullptr;            // [B, T, d_model]
  const float* xkv = nullptr;          // [B, Tkv, d_model] or null
  Problem attention;
  const std::uint8_t* mask = nullptr;
  const float* attn_bias = nullptr;
  const std::int64_t* kv_len = nullptr;
  bool self() const { return xkv == nullptr; }
  std::int64_t keys() const { return self() ? T : Tkv; }
};

// The intermediates of a forward, in the layer's own buffers (what the core actually read and
// wrote): q [B, T, Hq*Dk], k [B, Tkv, Hkv*Dk], v [B, Tkv, Hkv*Dv], concat = O [B, T, Hq*Dv],
// lse [B, Hq, T], y [B, T, d_model]. The backward needs them (its activations).
struct LayerTrace {
  Problem problem;  // the attention problem the core ran (shape [B, Hq, Hkv, T, Tkv, Dk, Dv])
  std::vector<float> q, k, v, concat, lse, y;
};

// Gradients of sum(dY * Y), and the backward's intermediates (checked stage by stage):
// dconcat = dY Wo^T (the attention's dO), dq, dk, dv in the layouts of q, k, v.
struct LayerGrads {
  std::vector<float> dx, dxkv;  // dxkv empty for self-attention (dK, dV flow into dx)
  std::vector<float> dwq, dwk, dwv, dwo, dbq, dbk, dbv, dbo;  // biases empty without has_bias
  std::vector<float> dconcat, dq, dk, dv;
};

// Dropout on the attention weights (training only; docs/dropout.md): the options a forward ran
// with, which the checker needs to rebuild the mask independently.
struct DropoutOptions {
  double p = 0;            // drop probability, in [0, 1)
  std::uint64_t seed = 0;  // the Philox key (docs/dropout.md)
  bool training = false;   // inference (false) never drops, whatever p says
  // p = 0 or inference: the forward takes exactly the no-dropout path (bitwise the same result).
  bool active() const { return training && p > 0; }
};

}  // namespace attnv
