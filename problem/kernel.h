#pragma once
// The kernel interface: how attnv sees any attention implementation (the core, the naive kernel,
// emulated and mutant kernels, plugins, programs that answer through files). Properties and the
// certifier only see this: inputs in, outputs out (black box). The plugin C ABI mirrors it.
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "problem/precision.h"
#include "problem/problem.h"
#include "problem/tensor.h"

namespace attnv {

// What a kernel claims to support. Requirements outside its claims are "not claimed", never
// failed.
struct Capabilities {
  std::vector<DType> dtypes;        // storage dtypes accepted
  bool gqa = false;                 // Hkv < Hq (else only MHA)
  bool causal_top_left = false;
  bool causal_bottom_right = false;
  bool window = false;
  bool mask = false;                // boolean [Tq, Tk] mask
  bool bias = false;                // additive [Tq, Tk] bias
  bool kv_len = false;              // per-batch key lengths
  bool softcap = false;
  bool custom_scale = false;        // a scale other than 1/sqrt(Dk)
  bool lse = false;                 // writes the log-sum-exp
  bool backward = false;
  bool strided = false;             // any non-negative strides (else dense [B,H,T,D] only)
  bool decode = false;              // Kernel::decode (a KV cache); not a property of a Problem, so
                                    // unsupported() never names it: callers of decode check it
  // NaN/inf in hidden positions (hidden K, V rows, hidden bias) never reach an output. Most
  // production kernels compute hidden scores and then add -inf, so a planted NaN leaks; SPEC
  // checks and reports it. Claimed: R6 is a requirement like any other. Unclaimed: R6 still
  // runs, and a failure is a robustness note on the certificate, not a finding.
  bool hidden_nonfinite = false;
  bool sinks = false;               // attention sinks: a per-head logit in every row's denominator
  // A mask or bias of its own per batch entry and/or per query head, [B|1, Hq|1, Tq, Tk]
  // (Problem::mask_dims, bias_dims), for each of mask and bias the kernel claims.
  bool mask_bias_per_batch_head = false;
  bool alibi = false;               // ALiBi: per-head slopes, -m_h |j - p_i| added to every logit
  // Decode with a paged KV cache (Problem::page_size > 0, DecodeViews::block_table): a page pool
  // and a block table as vLLM and FlashInfer keep them. Needs decode too.
  bool paged_kv = false;
  bool varlen = false;              // packed variable-length sequences (cu_seqlens_q / cu_seqlens_k)
  // With varlen, kv_len [S]: sequence s uses only its first kv_len[s] keys (FlashAttention's
  // seqused_k). Needs varlen and kv_len too (the generators draw it only with both).
  bool varlen_kv_len = false;
  bool chunked = false;             // chunked local attention (Problem::chunk)
  // Not a claim (no row of problem/features/): whether the backward reads the L its forward
  // wrote, as a FlashAttention-2 backward does (docs/semantics.md, "Backward"). Then a backward
  // run hands the forward an LSE view, claimed or not, and judges what it writes there. A Python
  // kernel that claims no LSE gets lse=None in its backward (an autograd backward recomputes the
  // forward) and sets this false: its forward is then not asked for an L it never computes.
  bool backward_reads_lse = true;
  // Claims withdrawn in one storage dtype: a bias exact in f32 but not in f16, say. Keys of
  // problem/features/, problem features only (claims with used_by); each must be claimed
  // above (check_withdrawn).
  std::map<DType, std::set<std::string>> withdrawn;

  // Empty when the kernel claims everything the problem uses; else the first missing claim
  // ("bias", "causal bottom_right", "dtype bf16", "bias in f16", ...).
  std::string unsupported(const Problem& p) const;
  // Whether the claim `key` (problem/features/) is withdrawn in dtype d.
  bool withdrawn_in(DType d, std::string_view key) const;
};

// Empty when every withdrawal names a claimed dtype and a claimed problem feature; else what is
// wrong, for the declaration's reader to report ("withdrawn in f16: 'lse' is not a problem
// feature (only claims a problem uses can be withdrawn per dtype)").
std::string check_withdrawn(const Capabilities& c);

// The operation Kernel::supports is asked about (the plugin ABI's ATTNV_OP_*).
enum class KernelOp { forward, backward, decode };

// A kernel's answer to "do you compute this problem?": ok, or declined with the reason.
struct Support {
  bool ok = true;
  std::string why;  // declined: why, for the certificate ("Dk 96: only 64 and 128 are compiled")
  static Support yes() { return {}; }
  static Support no(std::string why) { return {false, std::move(why)}; }
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual std::string name() const = 0;
  // What, beside the name, decides this kernel's code and so its bits and its precision model
  // in this process, written the way a person sets it: "ATTNV_CORE_ISA=avx512" for the built-in
  // core, "--kernel-option mode=fast" for a plugin given options; "" when nothing does. Evidence
  // records it, and `attnv repro` refuses to judge a saved failure with another configuration
  // (another kernel: its verdict would not say whether the failure is fixed).
  virtual std::string configuration() const { return ""; }
  virtual Capabilities capabilities() const = 0;
  // The precision model the error bound is derived for, per storage dtype.
  virtual PrecisionModel precision(DType storage) const = 0;
  // The precision model of one problem, for kernels whose code path (and so its arithmetic)
  // depends on the shape: a decode-sized Tq taking a vector path with an f16 accumulator, say.
  // attnv judges every case by this; the default is precision(p.dtype). Must be a pure function
  // of the problem.
  virtual PrecisionModel precision_for(const Problem& p) const { return precision(p.dtype); }
  // Whether the kernel computes this problem in this operation. Optional (the default computes
  // everything within its claims). A kernel that declines a problem honestly is reported NOT
  // SUPPORTED for that case, counted and listed, never a finding; a kernel that claims a feature
  // but declines every case using it is not certified for it (docs/semantics.md, "Declined
  // problems"). The conformance suite asks before every call it makes and never calls a declined
  // problem; a kernel called anyway may throw KernelDeclined (problem/kernel_fault.h). Must be a
  // pure function of the problem and the operation.
  virtual Support supports(const Problem& p, KernelOp op);
  // Reads views.q/k/v (and mask, bias, kv_len), writes views.out and, when present, views.lse,
  // all in the problem's storage dtype (LSE in f32, or f64 for f64 storage). The problem and
  // views are validated before the call (check_views).
  virtual void forward(const Problem& p, const KernelViews& views) = 0;
  // Also reads views.dout (and out and lse as the forward wrote them) and writes views.dq,
  // dk, dv; with sinks also views.dsinks, the gradient of each head's sink (docs/semantics.md).
  // Only called when capabilities().backward.
  virtual void backward(const Problem& p, const KernelViews& views);
  // Decode with a KV cache (the plugin ABI's attnv_decode_views contract): appends k_new, v_new
  // to the caches at positions cache_len[b] .. cache_len[b] + n - 1 (the only writes into inputs
  // a kernel may make), then attends q to the first cache_len[b] + n keys. The problem of a call:
  //   Tq = n (new tokens, >= 1), Tk = capacity, causal with bottom_right alignment, so a decode
  //   call computes exactly the forward with k = k_cache, v = v_cache (after the append) and
  //   kv_len[b] = cache_len[b] + n: query i sits at position cache_len[b] + i.
  //   Allowed options: a window (left/right, bottom-right aligned like the causal rule: sliding
  //   window decoding), softcap and a custom scale, each only when claimed like a forward.
  //   Not allowed: mask and bias ([Tq, Tk] tensors do not follow a growing cache) and has_kv_len
  //   (cache_len plays its role). check_decode_views (problem/validate.h) enforces all this.
  //   With p.page_size > 0 (only when paged_kv is claimed) the caches are page pools reached
  //   through views.block_table (problem/tensor.h): the same call, positions mapped to
  //   (page, slot); slots of a page past cache_len[b] + n are never read, pages shared between
  //   sequences are never written (check_decode_views refuses an append into one).
  // Only called when capabilities().decode; the default throws InputError "not supported".
  virtual void decode(const Problem& p, const DecodeViews& views);
};

}  // namespace attnv
