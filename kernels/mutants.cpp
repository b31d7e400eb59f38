#include "kernels/mutants.h"

#include "problem/buffers.h"
#include "kernels/emulated_kernel.h"
#include "kernels/naive_kernel.h"

namespace attnv::kernels {
namespace {

// Bugs that live in how a kernel treats its buffers rather than in its arithmetic: the naive
// kernel wrapped, with the views bent before or after the call.
class ViewBugKernel : public Kernel {
 public:
  enum class Bug { dense_strides_assumed, writes_q };
  ViewBugKernel(Bug bug, std::string name) : bug_(bug), name_(std::move(name)) {}
  std::string name() const override { return name_; }
  Capabilities capabilities() const override { return inner_.capabilities(); }
  PrecisionModel precision(DType storage) const override { return inner_.precision(storage); }
  PrecisionModel precision_for(const Problem& p) const override { return inner_.precision_for(p); }
  void forward(const Problem& p, const KernelViews& views) override {
    if (bug_ == Bug::dense_strides_assumed) {
      // Reads Q, K, V as if they were dense [B,H,T,D]. Every layout CaseBuffers makes spans at
      // least the dense extent, so the wrong reads stay inside the buffer (no UB, wrong data).
      KernelViews dense = views;
      for (TensorRef* t : {&dense.q, &dense.k, &dense.v}) t->stride = dense_strides(t->shape, t->rank);
      inner_.forward(p, dense);
      return;
    }
    inner_.forward(p, views);
    // Pre-scales Q in place "to save a multiply next time": a write into an input.
    const double sc = p.effective_scale();
    for (std::int64_t b = 0; b < p.shape.B; ++b)
      for (std::int64_t h = 0; h < p.shape.Hq; ++h)
        for (std::int64_t i = 0; i < p.shape.Tq; ++i)
          for (std::int64_t d = 0; d < p.shape.Dk; ++d)
            store(views.q, {b, h, i, d}, round_to(p.dtype, load(views.q, {b, h, i, d}) * sc));
  }
  void backward(const Problem& p, const KernelViews& views) override { inner_.backward(p, views); }
  void decode(const Problem& p, const DecodeViews& views) override { inner_.decode(p, views); }

 private:
  Bug bug_;
  std::string name_;
  NaiveKernel inner_;
};

Mutant planted(std::string name, Plant plant, std::string bug, std::string requirement,
               Structure structure = Structure::naive, DType dtype = DType::f32, std::int64_t block = NaiveOptions{}.block) {
  Mutant m{name, std::move(bug), std::move(requirement), dtype, false, {}};
  m.make = [name, plant, structure, block]() -> std::unique_ptr<Kernel> {
    NaiveOptions o;
    o.structure = structure;
    o.block = block;
    o.plant = plant;
    return std::make_unique<NaiveKernel>(o, name);
  };
  return m;
}

Mutant view_bug(std::string name, ViewBugKernel::Bug bug_kind, std::string bug, std::string requirement) {
  Mutant m{name, std::move(bug), std::move(requirement), DType::f32, false, {}};
  m.make = [name, bug_kind]() -> std::unique_ptr<Kernel> { return std::make_unique<ViewBugKernel>(bug_kind, name); };
  return m;
}

// The emulated kernel with one of its calibrated bug switches (properties/emulated).
Mutant emulated_bug(std::string name, void (*set)(emulated::Bugs&), std::string bug, std::string requirement,
                    DType dtype = DType::f32) {
  Mutant m{name, std::move(bug), std::move(requirement), dtype, false, {}};
  m.make = [name, set]() -> std::unique_ptr<Kernel> {
    EmulatedOptions o;
    set(o.bugs);
    return std::make_unique<EmulatedKernel>(o, name);
  };
  return m;
}

}  // namespace

const std::vector<Mutant>& mutant_zoo() {
  static const std::vector<Mutant> zoo = [] {
    using S = Structure;
    std::vector<Mutant> z;
    z.push_back(planted("d_model_scale", Plant::d_model_scale, "scale 1/sqrt(Hq*Dk) (d_model) instead of 1/sqrt(Dk)", "matches_reference"));
    z.push_back(planted("mask_after_softmax", Plant::mask_after_softmax, "softmax over every key, hidden weights zeroed afterwards", "no_leakage"));
    z.push_back(planted("no_max_subtraction", Plant::no_max_subtraction, "exp(t) without subtracting the row max", "matches_reference"));
    z.push_back(planted("gqa_tile", Plant::gqa_tile, "query head h reads KV head h % Hkv (tile, not repeat_interleave)", "gqa_repeat_interleave"));
    z.push_back(planted("causal_off_by_one", Plant::causal_off_by_one, "causal rule j <= p_i + 1", "no_leakage"));
    z.push_back(planted("alignment_confused", Plant::alignment_confused, "bottom_right alignment treated as top_left", "matches_reference"));
    z.push_back(planted("zero_padded_tail", Plant::zero_padded_tail, "tiled: keys past Tk in the last block count as zero keys", "rows_sum_to_one", S::tiled));
    // 64-key blocks, ggml's tile: up to 63 padding slots, which is what the bug weighs.
    z.push_back(planted("softcap_pads_tile", Plant::softcap_pads_tile, "tiled main path: with a softcap and no mask the last tile's padding slots weigh exp(-cap), not 0", "matches_reference", S::tiled, DType::f32, 64));
    z.push_back(planted("lost_rescale", Plant::lost_rescale, "tiled: output accumulator not rescaled when the max grows", "key_permutation", S::tiled));
    z.push_back(planted("f16_accumulation", Plant::f16_accumulation, "P.V accumulated in f16", "matches_reference"));
    z.push_back(planted("bf16_output_truncated", Plant::truncated_output, "outputs truncated toward zero instead of rounded", "unbiased_rounding", S::naive, DType::bf16));
    z.push_back(planted("empty_rows_unwritten", Plant::empty_rows_unwritten, "a row with no visible key: L = -inf written, O left as the buffer held it (assumed zeroed)", "fully_masked_rows"));
    z.push_back(planted("nan_on_fully_masked", Plant::nan_on_fully_masked, "a row with no visible key computes 0/0", "fully_masked_rows"));
    z.push_back(planted("hidden_times_zero", Plant::hidden_times_zero, "hidden keys enter P.V with weight 0 (0 * NaN = NaN)", "hidden_nonfinite"));
    z.push_back(planted("query_tail_skipped", Plant::query_tail_skipped, "query tiles of 8: rows of a partial last tile left 0", "query_permutation"));
    z.push_back(planted("kv_len_of_batch0", Plant::kv_len_of_batch0, "every batch uses kv_len[0]", "batch_head_independence"));
    z.push_back(planted("nondeterministic", Plant::nondeterministic, "P.V summed forward or backward depending on a call counter", "determinism"));
    z.push_back(planted("dk_missing_scale", Plant::dk_missing_scale, "backward: dK = dS^T Q without the scale", "backward_matches_reference"));
    z.push_back(planted("denominator_skips_max", Plant::denominator_skips_max, "softmax sum leaves out the max key's exp(0)", "convex_hull"));
    z.push_back(planted("key_normalized", Plant::key_normalized, "each key divided by its L2 norm (QK-norm leaked in)", "key_translation"));
    z.push_back(planted("v_sign_lost", Plant::v_sign_lost, "V loaded without its sign bit", "v_linearity"));
    z.push_back(planted("spurious_alibi", Plant::spurious_alibi, "a position bias -|i - j|/4 added to every logit", "score_rank"));
    z.push_back(planted("scale_divides", Plant::scale_divides, "the scale divides the scores (treated as a temperature)", "entropy_temperature"));
    z.push_back(planted("scale_by_dk", Plant::scale_by_dk, "default scale 1/Dk instead of 1/sqrt(Dk)", "score_variance"));
    z.push_back(planted("dropout_at_inference", Plant::dropout_at_inference, "dropout p = 0.1 applied in the inference forward", "matches_reference"));
    z.push_back(planted("head_slicing", Plant::head_slicing, "query head h reads Q's packed row split as [Dk, Hq] instead of [Hq, Dk]", "batch_head_independence"));
    z.push_back(planted("decode_top_left", Plant::decode_top_left, "decode attends with top_left alignment", "decode_equals_prefill"));
    z.push_back(planted("decode_append_shifted", Plant::decode_append_shifted, "decode appends at cache_len + 1 (a hole at cache_len)", "decode_equals_prefill"));
    z.push_back(planted("alibi_dropped_in_decode", Plant::alibi_dropped_in_decode, "decode: the step attends without ALiBi's term (a decode path the slopes never reach)", "decode_equals_prefill"));
    z.push_back(planted("bias_scaled", Plant::bias_scaled, "the bias added before the scale: scale * (q.k + bias)", "bias_row_shift"));
    z.push_back(planted("sink_scaled", Plant::sink_scaled, "the attention sink multiplied by the scale like a raw q.k score", "matches_reference"));
    z.push_back(planted("dsink_sign_flipped", Plant::dsink_sign_flipped, "backward: the sinks' gradient with the wrong sign (+P_sink D)", "backward_matches_reference"));
    z.push_back(planted("alibi_wrong_corner", Plant::alibi_wrong_corner, "ALiBi distances measured from the other corner's p_i (top_left <-> bottom_right)", "matches_reference"));
    z.push_back(planted("alibi_dropped_in_backward", Plant::alibi_dropped_in_backward, "backward: P recomputed without ALiBi's term (the forward had it)", "backward_matches_reference"));
    // Paged KV cache mutants (the block table crosses the plugin ABI: ATTNV_CAP_PAGED_KV).
    z.push_back(planted("paged_last_page_full", Plant::paged_last_page_full, "paged decode: the last, partly filled page attended whole (sequence length rounded up to whole pages)", "decode_equals_prefill"));
    z.push_back(planted("paged_table_row0", Plant::paged_table_row0, "paged decode: every sequence reads its keys through batch 0's block table row", "decode_equals_prefill"));
    z.push_back(planted("varlen_global_alignment", Plant::varlen_global_alignment, "packed sequences: own keys only (block-diagonal), but causal, window and ALiBi aligned by the packed corner, not per sequence", "matches_reference"));
    z.push_back(planted("seqused_aligned_to_stored_keys", Plant::seqused_aligned_to_stored_keys, "packed sequences with kv_len [S] (seqused_k): keys past kv_len[s] hidden, but bottom-right aligned to the sequence's stored keys, not the ones it uses", "matches_reference"));
    z.push_back(planted("kv_len_aligned_to_stored_keys", Plant::kv_len_aligned_to_stored_keys, "keys past kv_len[b] hidden, but bottom-right aligned to the stored keys (p_i = i + Tk - Tq)", "padding_is_truncation"));
    z.push_back(planted("chunk_by_query_index", Plant::chunk_by_query_index, "chunked attention: the query's chunk from its index i, not its position p_i (wrong bottom-right)", "no_leakage"));
    z.push_back(planted("mask_head0", Plant::mask_head0, "every batch and head reads the mask's and bias's first plane (head 0 of batch 0)", "matches_reference"));
    z.push_back(view_bug("dense_strides_assumed", ViewBugKernel::Bug::dense_strides_assumed, "reads Q, K, V with dense [B,H,T,D] strides whatever the views say", "layout_invariance"));
    z.push_back(view_bug("writes_q", ViewBugKernel::Bug::writes_q, "pre-scales Q in place after the forward", "inputs_unchanged"));
    z.push_back(emulated_bug("emulated_pv_accum_f16", [](emulated::Bugs& b) { b.pv_accum_f16 = true; },
                             "emulated: P.V accumulator kept in f16", "matches_reference"));
    z.push_back(emulated_bug("emulated_sloppy_exp", [](emulated::Bugs& b) { b.sloppy_exp = true; },
                             "emulated: exp with a 1e-3 relative error", "matches_reference"));
    z.push_back(emulated_bug("emulated_truncate_bf16", [](emulated::Bugs& b) { b.truncate_output = true; },
                             "emulated: outputs truncated instead of rounded", "unbiased_rounding", DType::bf16));
    z.push_back(emulated_bug("emulated_dk_missing_scale", [](emulated::Bugs& b) { b.dk_missing_scale = true; },
                             "emulated: backward dK without the scale", "backward_matches_reference"));
    return z;
  }();
  return zoo;
}

}  // namespace attnv::kernels
