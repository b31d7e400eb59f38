#pragma once
// The optimized attention core behind the same interface third-party kernels implement
// (problem/kernel.h): forward, backward and decode with a KV cache (the multi-head layer is a later step).
// Tiled online-softmax attention (FlashAttention-2 on the CPU), f32 accumulation
// for f32/f16/bf16 storage and f64 for f64, AVX-512 or AVX2 micro-kernels chosen at run time (isa.h),
// with a portable fallback.
#include "core/forward.h"
#include "problem/kernel.h"

namespace attnv::core {

class CoreKernel final : public Kernel {
 public:
  // Resolves opt.isa once (isa.h: `best` follows ATTNV_CORE_ISA, then the CPU), so a path the
  // CPU cannot run is an InputError here, before any call, and every call of this kernel takes
  // the same path.
  explicit CoreKernel(ForwardOptions opt = {});
  // The ISA path its f32 calls take (never `best`).
  Isa isa() const { return opt_.isa; }
  std::string name() const override { return "core"; }
  // "ATTNV_CORE_ISA=<path>": each path is its own code (other bits; avx512_bf16 another model).
  std::string configuration() const override;
  Capabilities capabilities() const override;
  // accum f32 (f64 for f64 storage), P kept in the accumulator, outputs in the storage dtype,
  // block = the forward's key tile (kKeyBlock), exp within 2 ulps (measured:
  // core/tests/exp_test.cpp). The backward follows BOUND.md section 0 with the same model: L as
  // stored (f32/f64 = the accumulator), D from the stored O, P and dS kept in the accumulator,
  // the scale applied once to dQ and dK.
  PrecisionModel precision(DType storage) const override;
  // Validates the views (InputError on bad ones) and runs the forward.
  void forward(const Problem& p, const KernelViews& views) override;
  // Validates the views (InputError on bad ones or missing out/lse/dout/dq/dk/dv) and runs the
  // backward from the forward's stored O and LSE.
  void backward(const Problem& p, const KernelViews& views) override;
  // Validates the call (check_decode_views: InputError on bad views), appends k_new and v_new to
  // the caches, then attends (core/decode.h: grouped heads stacked, split-KV for long caches).
  void decode(const Problem& p, const DecodeViews& views) override;

 private:
  ForwardOptions opt_;
};

}  // namespace attnv::core
