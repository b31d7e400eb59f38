#pragma once
// Compositional verification of the multi-head layer (core/layer.h).
//
// Why compositional: Y's exact value, Y = attention(X Wq, X Wk, X Wv) Wo with exact
// projections, needs attention on Q, K, V that are not representable in double, so the
// reference cannot give it. Instead every stage is checked against an exact reference ON ITS
// ACTUAL INPUTS, which the layer returns in its trace (the very buffers the next stage read):
//   Q = X Wq + bq, K, V             exact double-double matmul, bound of section "matmul" below
//   O = attention(Q, K, V)          reference::fast_forward + bound::forward_bound on the trace's Q/K/V
//                                   split into heads as SPEC says (not as the layer did)
//   Y = O Wo + bo                   exact matmul on the trace's O
// and the backward likewise (dconcat = dY Wo^T, dWo, dbo; the attention backward through
// reference::fast_backward + bound::backward_bound with dO = the trace's dconcat; dWq/dWk/dWv, the
// bias sums, dX and dXkv). Each stage's input is the previous stage's checked output, so every
// stage passing means each step computed what it should from what it was given, within its
// derived bound; a wrong step (transposed weight, wrong head split, missing bias) fails the
// stage where it lives. What this does not give is one end-to-end error bound on Y.
//
// Matmul bound (derivation). An output element z = sum_{l<N} a_l w_l (+ b) in f32: each
// product of two f32 is rounded once (or fused into an FMA, which only removes roundings) and
// the N (N+1 with a bias, counted as the exact product 1 * b) terms are added in any order, so
// |z_hat - z| <= gamma_N' sum_l |a_l w_l| (+ |b|), N' = N (+1), gamma_n = n u / (1 - n u),
// u = 2^-24 (Higham, Accuracy and Stability, Thm 3.1 and the remark that it holds for any
// summation order). An f32 result has no further output rounding (bound::accept still adds
// ulp_f32(out)/2: slack); rounded to f16/bf16 (LayerConfig::dtype) it errs by ulp(out)/2 more,
// which is accept's term for that dtype. The reference sums the exact double products
// (f32 x f32 fits in 53 bits) with TwoSum into a double-double (Ogita-Rump-Oishi Sum2):
// |fl(hi + lo) - z| <= 2^-53 |z| + gamma64_(N'-1)^2 sum|terms|; accept counts the first term,
// the second is added to b, and b is evaluated in double with relative error <= gamma64_N',
// covered by the factor 1 + 2 gamma64_N'.
#include <cstdint>
#include <string>
#include <vector>

#include "problem/layer.h"
#include "problem/case.h"
#include "problem/precision.h"

namespace attnv::layer {

struct StageResult {
  std::string name;             // "Q", "attention.out", "dWq", ...
  std::int64_t elements = 0;
  std::int64_t failures = 0;
  double worst_ratio = 0;       // max |kernel - exact| / acceptance threshold
  std::int64_t worst_index = -1;
  bool ok() const { return failures == 0; }
};

struct LayerCheck {
  std::vector<StageResult> stages;
  bool ok() const;
  double worst_ratio() const;
  std::string summary() const;  // one line per stage
  const StageResult* stage(const std::string& name) const;  // null if absent
};

// The forward trace checked stage by stage; `attention` is the precision model the attention
// stage is bounded with (core::layer_attention_precision() for the core).
// With `dropout` (the options the layer ran with, when active) the attention stage is checked
// by check_dropout_forward (dropout_check.h) instead: stage "attention.dropout".
LayerCheck check_layer_forward(const LayerConfig& cfg, const LayerWeights& w,
                               const LayerInputs& in, const LayerTrace& t,
                               const PrecisionModel& attention, const DropoutOptions* dropout = nullptr);
// The backward's gradients and intermediates, stage by stage, from the forward trace and dY.
LayerCheck check_layer_backward(const LayerConfig& cfg, const LayerWeights& w,
                                const LayerInputs& in, const LayerTrace& t,
                                const float* dy, const LayerGrads& g,
                                const PrecisionModel& attention);

// One matmul stage: out [rows, cols] = sum_t A_t B_t (+ bias[col]), each factor a row-major
// f32 matrix read as stored or transposed. Exposed for tests and other layer variants;
// exact_out / threshold_out (optional) receive each element's exact value (the double nearest
// the double-double sum) and its acceptance threshold (bound::threshold with the bound above).
// out_dtype: what the f32 result was rounded to (f16/bf16 Q, K, V, dO of a narrow attention):
// the acceptance rule's ulp_out(out)/2 is exactly that rounding.
struct MatFactor {
  const float* data = nullptr;
  std::int64_t rows = 0, cols = 0;  // the logical (possibly transposed) shape
  bool transposed = false;          // data holds the cols x rows matrix row-major
  float at(std::int64_t r, std::int64_t c) const {
    return transposed ? data[c * rows + r] : data[r * cols + c];
  }
};
struct MatTerm {
  MatFactor a, b;
};
StageResult check_matmul(const std::string& name, const std::vector<MatTerm>& terms,
                         const float* bias, const float* got, std::int64_t rows, std::int64_t cols,
                         std::vector<double>* exact_out = nullptr, std::vector<double>* threshold_out = nullptr,
                         DType out_dtype = DType::f32);

// The attention stage's exact case: the trace's Q, K, V split into heads per SPEC, with the
// call's mask, bias and kv_len (dout: the backward's dconcat when given, else none).
Case attention_case(const LayerInputs& in, const LayerTrace& t,
                    const std::vector<float>* dconcat = nullptr);

}  // namespace attnv::layer
