#pragma once
// The multi-head attention layer (docs/semantics.md "The multi-head layer") on top of the core:
//   Q = X Wq (+ bq),  K = Xkv Wk (+ bk),  V = Xkv Wv (+ bv)       (Eigen, f32 accumulation)
//   heads: column h*Dk + d of Q is dimension d of query head h (K, V: KV head, SPEC's split)
//   O = attention(Q, K, V) through core::forward with any of its options (causal, mask, ...)
//   concat [B, T, Hq*Dv] (head h at columns h*Dv ...),  Y = concat Wo (+ bo).
// Accumulation is f32; X, weights and Y are f32, the attention's tensors f32, f16 or bf16
// (LayerConfig::dtype). Q, K, V and O are never copied per head: the core reads and writes them
// through strided [B, H, T, D] views of the [B, T, H*D] buffers (f16/bf16: of their bit copies).
//
// Verification is compositional (properties/layer/layer_check.h): an exact end-to-end Y is not
// representable with the reference, so the layer returns its intermediates (LayerTrace: the
// very buffers the next stage read) and each stage is checked against an exact reference on its
// actual inputs.
#include <cstdint>
#include <vector>

#include "core/forward.h"
#include "problem/layer.h"
#include "problem/precision.h"
#include "problem/problem.h"

namespace attnv::core {

// The layer's data types are the problem's (problem/layer.h), so its checker needs no core.
using attnv::LayerConfig;
using attnv::LayerGrads;
using attnv::LayerInputs;
using attnv::LayerTrace;
using attnv::LayerWeights;

// Planted bugs, for the checker's tests only (properties/layer/tests).
enum class LayerPlant {
  none,
  transposed_wo,  // Y = concat Wo^T (needs Hq*Dv == d_model)
  head_stride,    // Q's heads split as if [B, Hq, T, Dk] were dense (the BHTD reading of BTHD)
  missing_bias,   // bo never added
};

struct LayerOptions {
  ForwardOptions attention;  // threads, dropout (forward only), ...
  LayerPlant plant = LayerPlant::none;
  // Forward projections one row at a time (vector x matrix): a row's Q, K, V, Y then depend on
  // that row alone, whatever its position and the other rows (batch invariance; the permutation
  // test relies on it). Off: one GEMM per projection (faster; Eigen's blocking may round a
  // row differently depending on where it falls in a panel).
  bool row_local = false;
};

// Throws InputError naming the problem on inconsistent configs, shapes or null pointers.
LayerTrace layer_forward(const LayerConfig& cfg, const LayerWeights& w, const LayerInputs& in,
                         const LayerOptions& opt = {});
// dy [B, T, d_model]; `fwd` the trace of the forward on the same inputs.
LayerGrads layer_backward(const LayerConfig& cfg, const LayerWeights& w, const LayerInputs& in,
                          const LayerTrace& fwd, const float* dy, const LayerOptions& opt = {});

// The precision model of the attention stage (the core's, for the attention dtype).
PrecisionModel layer_attention_precision(DType t = DType::f32);

// Weights and biases of one layer: d_model (Hq Dk + Hkv Dk + Hkv Dv) + Hq Dv d_model, plus
// Hq Dk + Hkv Dk + Hkv Dv + d_model with biases.
std::int64_t layer_parameter_count(const LayerConfig& cfg);
// Bytes of one layer's KV cache: K and V, 2 B T Hkv Dh elements of the dtype.
std::int64_t kv_cache_bytes_per_layer(std::int64_t B, std::int64_t T, std::int64_t Hkv,
                                      std::int64_t Dh, DType dtype);

}  // namespace attnv::core
