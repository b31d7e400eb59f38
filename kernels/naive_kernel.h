#pragma once
// The plain naive kernel: attention written for clarity, not speed, behind attnv::Kernel. It is
// written from SPEC alone (its own visibility rule, no reference/ or core/ code), so a misreading
// elsewhere cannot be shared with it.
//
// Forward (naive structure of reference/bound/BOUND.md section 0, accumulator f32, or f64 for
// f64 storage): s = fl(fl(q.k) * fl(scale)), softcap, bias; two passes over the visible keys:
// max m and l = sum exp(t - m), then O = sum (e_j / l) v_j; L = m + log l.
// Backward (the textbook formulas, FlashAttention-2 form that the bound covers): P recomputed
// from the forward's own LSE, D = dO . O with the forward's rounded O, dP = dO V^T,
// dS = P (dP - D) (times the softcap's derivative), dV = P^T dO, dQ = scale dS K,
// dK = scale dS^T Q; dK and dV sum over the G query heads of a KV head; with sinks
// dsinks_h = -sum over the head's rows of P_sink D, P_sink = exp(s_h - L) (docs/semantics.md).
//
// The same code, with one `Plant` switched on, is each mutant of the zoo (mutants.h): a planted
// bug is a small, visible edit of the correct kernel, never a second implementation.
// With Structure::tiled the keys are consumed in blocks of `block` with an online softmax
// (FlashAttention-2), so the tiled-kernel bugs have a place to live.
#include <cstdint>
#include <optional>
#include <string>

#include "problem/kernel.h"

namespace attnv::kernels {

enum class Plant {
  none,
  d_model_scale,          // scale 1/sqrt(Hq * Dk) (d_model) instead of 1/sqrt(Dk)
  mask_after_softmax,     // softmax over every key, hidden weights zeroed afterwards (no renormalising)
  no_max_subtraction,     // exp(t) instead of exp(t - m): overflows and underflows
  gqa_tile,               // query head h reads KV head h % Hkv (torch tile) instead of h / G
  causal_off_by_one,      // causal rule j <= p_i + 1
  alignment_confused,     // bottom_right treated as top_left
  zero_padded_tail,       // tiled: the last block's keys past Tk count as keys with K = 0, V = 0
  softcap_pads_tile,      // tiled main path (Tq, Tk >= 64, Dk % 64 == 0), softcap, no mask: the last
                          // block's padding slots hold softcap(-inf) = -cap, not -inf (ggml)
  lost_rescale,           // tiled: the output accumulator is not rescaled when the max grows
  f16_accumulation,       // the P.V accumulator rounded to f16 after every addition
  truncated_output,       // outputs truncated toward zero instead of rounded (bf16: the classic)
  nan_on_fully_masked,    // a row with no visible key computes 0/0 = NaN
  hidden_times_zero,      // every key enters P.V, hidden ones with weight 0: 0 * NaN leaks
  query_tail_skipped,     // query tiles of 8: the rows of a partial last tile are left 0
  kv_len_of_batch0,       // every batch uses kv_len[0]
  nondeterministic,       // the P.V sum runs forward or backward depending on a call counter
  dk_missing_scale,       // backward: dK = dS^T Q without the scale
  denominator_skips_max,  // the softmax sum leaves out the max key's own exp(0) = 1
  key_normalized,         // each key divided by its L2 norm before the dot product (QK-norm leaked in)
  v_sign_lost,            // V loaded through a broken unpack that drops the sign bit
  spurious_alibi,         // a linear position bias -|i - j| / 4 added to every logit (ALiBi left on)
  scale_divides,          // the scale treated as a temperature: s = q.k / scale
  scale_by_dk,            // default scale 1/Dk instead of 1/sqrt(Dk)
  dropout_at_inference,   // training dropout (p = 0.1, kept weights / 0.9) left on in the inference forward
  head_slicing,           // query head h, dim d reads Q's packed column h*Dk + d as [Dk, Hq] (head-minor)
  decode_top_left,        // decode: attends with top_left alignment (query i sees keys <= i)
  decode_append_shifted,  // decode: appends at cache_len + i + 1 (a stale hole at cache_len)
  alibi_dropped_in_decode,  // decode: the step attends without ALiBi (the forward and prefill have it)
  bias_scaled,            // the bias added before the scale: scale * (q.k + bias)
  sink_scaled,            // the attention sink multiplied by the scale, as if it were a raw q.k score
  dsink_sign_flipped,     // backward: dsinks = +sum P_sink D (the sink taken as a key with dP = D)
  mask_head0,             // every batch and head reads the mask's and bias's first [Tq,Tk] plane
  alibi_wrong_corner,     // ALiBi distances from the other alignment's p_i (top_left <-> bottom_right)
  alibi_dropped_in_backward,  // backward: P recomputed from logits without ALiBi (the forward had it)
  paged_last_page_full,   // paged decode: the sequence taken as whole pages, kv_len rounded up to the
                          // last page's end (its slots past cache_len + n attended)
  paged_table_row0,       // paged decode: every sequence reads its keys through batch 0's table row
  empty_rows_unwritten,   // a row with no visible key: L written, O left as the buffer held it (assumed zeroed)
  varlen_global_alignment,  // packed sequences: each sees only its own keys, but the causal rule,
                            // window and ALiBi are aligned by the packed [Tq, Tk] corner
  seqused_aligned_to_stored_keys,  // packed sequences with kv_len [S]: keys past kv_len[s] hidden, but
                                  // bottom-right aligned to the sequence's stored keys (cu_seqlens_k),
                                  // not the kv_len[s] it uses
  kv_len_aligned_to_stored_keys,  // keys past kv_len[b] hidden, but bottom-right aligned to the stored
                                  // Tk: p_i = i + Tk - Tq, not i + kv_len[b] - Tq
  chunk_by_query_index,   // chunked attention: the query's chunk taken from its index i, not its
                          // position p_i (right top-left, wrong bottom-right: the decode case)
};

enum class Structure { naive, tiled };

struct NaiveOptions {
  Structure structure = Structure::naive;
  std::int64_t block = 16;  // key block of the tiled structure
  Plant plant = Plant::none;
  // Run forward, backward and decode with the x86 MXCSR flags FTZ and DAZ set (restored after):
  // every SSE result below min_normal becomes a signed zero and every subnormal operand is read
  // as zero, as production kernels on vdpbf16ps or with that MXCSR setting do. What it declares
  // is `declare_flush` (default: the truth); false with flushing on is the undeclared flush
  // attnv must find. Not x86-64: flushing is unavailable and the option is refused.
  bool flush_subnormals = false;
  std::optional<bool> declare_flush = std::nullopt;
  // The backward multiplies each dS by the scale before its products with q and k
  // (FlashAttention-2's order) instead of scaling the summed dQ and dK at the end. Correct, and
  // rounded differently: in the subnormal range fl(scale dS) errs by eta / 2 and |q| multiplies
  // that (BOUND.md 5.6).
  bool scale_ds_first = false;
};

class NaiveKernel : public Kernel {
 public:
  explicit NaiveKernel(NaiveOptions opt = {}, std::string name = "");
  std::string name() const override { return name_; }
  Capabilities capabilities() const override;
  PrecisionModel precision(DType storage) const override;
  void forward(const Problem& p, const KernelViews& views) override;
  void backward(const Problem& p, const KernelViews& views) override;
  // Decode, in two plain steps: copy k_new, v_new into the caches element by element, then run
  // this kernel's own forward on the caches with kv_len[b] = cache_len[b] + n (the two-pass
  // softmax above: max and sum, then the weighted values). A paged cache is written through the
  // block table and gathered into a dense copy for that forward.
  void decode(const Problem& p, const DecodeViews& views) override;

 private:
  // The bodies, out of line: the public calls set the flush mode around them (FlushGuard).
  void forward_unflushed(const Problem& p, const KernelViews& views);
  void backward_unflushed(const Problem& p, const KernelViews& views);
  void decode_unflushed(const Problem& p, const DecodeViews& views);
  NaiveOptions opt_;
  std::string name_;
  std::uint64_t calls_ = 0;  // only the nondeterministic plant looks at it
};

}  // namespace attnv::kernels
