#pragma once
// A kernel's declared precision model: what the error bound (reference/bound) is derived for.
#include <cstdint>
#include <optional>
#include <string>

#include "problem/dtype.h"

namespace attnv {

struct PrecisionModel {
  DType storage = DType::f32;  // dtype the inputs are stored in
  DType accum = DType::f32;    // dtype of every stage below left unset, and of the backward
  DType p_dtype = DType::f32;  // dtype P is rounded to before the P.V product (accum: no rounding)
  DType out = DType::f32;      // dtype the outputs (O, LSE, gradients) are rounded to
  std::int64_t block = 0;      // online-softmax key block; 0 = single pass over all keys
  double exp_ulps = 2;         // accuracy of the kernel's exp, in ulps of its stage's dtype

  // The forward's stages, for kernels that do not compute them all in one dtype (BOUND.md
  // section 1, "Stages"): onnxruntime's f16 CPU path keeps scores and P in f16, ggml's f16 path
  // accumulates P.V in f16 after f32 dot products. Unset: accum.
  std::optional<DType> dot;      // the q.k (and dO.v) dot products' accumulation
  std::optional<DType> score;    // the logits: the scale, softcap and bias steps, and their value
  std::optional<DType> softmax;  // max subtraction, exp, the running sum, rescale factors, LSE
  std::optional<DType> pv;       // the P.V accumulator: products, sums, rescales, the division

  // The kernel flushes subnormals: every arithmetic result below its dtype's min_normal may
  // become a signed zero (FTZ) and every subnormal operand may be read as zero (DAZ). One flag,
  // not two: the instructions that flush (vdpbf16ps, vcvtne2ps2bf16, AMX tdpbf16ps) do both, the
  // usual MXCSR setting sets both, and the bound for FTZ alone would differ only by the input
  // terms (the dropped products of subnormal inputs, BOUND.md section 12), which are at most
  // min_normal times the other factor: not worth a second declaration. false: gradual underflow.
  bool flush_subnormals = false;

  DType dot_dtype() const { return dot.value_or(accum); }
  DType score_dtype() const { return score.value_or(accum); }
  DType softmax_dtype() const { return softmax.value_or(accum); }
  DType pv_dtype() const { return pv.value_or(accum); }
  // Whether some stage computes in a dtype other than accum.
  bool staged() const;
  // The one-dtype model whose accum is the least precise of accum and every stage: what the
  // backward bound is derived for when the model is staged (it covers the staged kernel, more
  // loosely).
  PrecisionModel unstaged() const;

  // The usual model for a storage dtype: f64 accumulates in f64, everything else in f32;
  // P stays in the accumulator; outputs are rounded to the storage dtype.
  static PrecisionModel natural(DType storage, std::int64_t block = 0);
  bool operator==(const PrecisionModel&) const = default;
};

std::string describe(const PrecisionModel& m);

}  // namespace attnv
