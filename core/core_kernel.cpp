#include "core/core_kernel.h"

#include <string>
#include <utility>

#include "core/backward.h"
#include "core/decode.h"
#include "core/varlen.h"
#include "core/workspace.h"
#include "problem/error.h"
#include "problem/validate.h"

namespace attnv::core {

CoreKernel::CoreKernel(ForwardOptions opt) : opt_(opt) { opt_.isa = resolve_isa(opt.isa); }

std::string CoreKernel::configuration() const { return std::string("ATTNV_CORE_ISA=") + isa_name(opt_.isa); }

Capabilities CoreKernel::capabilities() const {
  Capabilities c;
  c.dtypes = {DType::f64, DType::f32, DType::f16, DType::bf16};
  c.gqa = c.causal_top_left = c.causal_bottom_right = c.window = c.mask = c.bias = c.chunked = true;
  c.kv_len = c.softcap = c.custom_scale = c.lse = c.strided = true;
  c.backward = c.decode = c.hidden_nonfinite = true;
  // Sinks in the forward, the backward (dsinks) and decode.
  c.sinks = true;
  c.mask_bias_per_batch_head = true;
  c.alibi = true;
  c.paged_kv = true;  // decode through a block table (decode.h)
  // Packed sequences, forward and backward, one call per sequence (core/varlen.h).
  c.varlen = true;
  // kv_len [S] with them: each sequence's call takes its kv_len[s] (core/varlen.cpp).
  c.varlen_kv_len = true;
  return c;
}

PrecisionModel CoreKernel::precision(DType storage) const {
  PrecisionModel m = PrecisionModel::natural(storage, kKeyBlock);
  // The avx512_bf16 path's forward rounds P to bf16 and runs Q.K^T and P.V on vdpbf16ps, which
  // flushes subnormals (microkernels_avx512_bf16.cpp). The flush is declared for every stage
  // though only the products flush: the model has one flag (precision.h).
  if (opt_.isa == Isa::avx512_bf16 && storage == DType::bf16) {
    m.p_dtype = DType::bf16;
    m.flush_subnormals = true;
  }
  return m;
}

namespace {

void require_views(const char* what, const Problem& p, const KernelViews& views) {
  const std::vector<std::string> errors = check_views(p, views);
  if (errors.empty()) return;
  std::string msg = std::string("core ") + what + ": invalid call:";
  for (const auto& e : errors) msg += "\n  " + e;
  throw InputError(msg);
}

}  // namespace

void CoreKernel::forward(const Problem& p, const KernelViews& views) {
  require_views("forward", p, views);
  if (!views.out.present()) throw InputError("core forward: no output view");
  if (p.varlen_sequences > 0) {
    forward_by_sequence(p, views, [&](const Problem& sub, const KernelViews& v) {
      core::forward(make_forward_params(sub, v), opt_);
    });
    return;
  }
  core::forward(make_forward_params(p, views), opt_);
}

void CoreKernel::backward(const Problem& p, const KernelViews& views) {
  require_views("backward", p, views);
  const std::pair<const char*, const TensorRef*> needed[] = {
      {"out (the forward's O)", &views.out}, {"lse (the forward's LSE)", &views.lse},
      {"dout", &views.dout}, {"dq", &views.dq}, {"dk", &views.dk}, {"dv", &views.dv}};
  if (p.has_sinks && !views.dsinks.present()) throw InputError("core backward: no dsinks view (the problem has sinks)");
  for (const auto& [name, t] : needed)
    if (!t->present()) throw InputError(std::string("core backward: no ") + name + " view");
  if (p.varlen_sequences > 0) {
    backward_by_sequence(p, views, [&](const Problem& sub, const KernelViews& v) {
      core::backward(make_forward_params(sub, v), opt_);
    });
    return;
  }
  core::backward(make_forward_params(p, views), opt_);
}

}  // namespace attnv::core

namespace attnv::core {

void CoreKernel::decode(const Problem& p, const DecodeViews& views) {
  const std::vector<std::string> errors = check_decode_views(p, views);
  if (!errors.empty()) {
    std::string msg = "core decode: invalid call:";
    for (const auto& e : errors) msg += "\n  " + e;
    throw InputError(msg);
  }
  core::decode(p, views, opt_);
}

}  // namespace attnv::core
