// The requirement table of conformance.h (the header comment is its readable form; a test checks
// that each requirement's mutants are in the zoo and target its property). Case counts per tier
// were measured on the naive kernel (see properties/conformance/README.md).
#include "properties/conformance/conformance.h"

namespace attnv::conformance {

const std::vector<Requirement>& requirements() {
  static const std::vector<Requirement> r = {
      {"R1", "matches_reference", "forward O and LSE within the per-element bound",
       "d_model_scale no_max_subtraction alignment_confused f16_accumulation emulated_pv_accum_f16 emulated_sloppy_exp "
       "dropout_at_inference softcap_pads_tile",
       "forward", {200, 1500, 15000}},
      {"R2", "backward_matches_reference", "dQ, dK, dV within the per-element bound", "dk_missing_scale emulated_dk_missing_scale",
       "backward", {100, 750, 7500}},
      {"R3", "rows_sum_to_one", "weights non-negative, zero on hidden keys, summing to 1", "zero_padded_tail", "forward",
       {100, 750, 7500}},
      {"R4", "convex_hull", "outputs in the convex hull of the visible values", "denominator_skips_max", "forward",
       {150, 1000, 10000}},
      {"R5", "no_leakage", "hidden K, V, bias do not change any output", "mask_after_softmax causal_off_by_one",
       "causal/window/mask/bias/kv_len as used", {150, 1000, 10000}},
      {"R6", "hidden_nonfinite", "NaN/inf in hidden positions do not leak", "hidden_times_zero",
       "causal/window/mask/bias/kv_len as used", {150, 1000, 10000}, Requirement::ThroughFiles::answers, /*robustness=*/true},
      {"R7", "fully_masked_rows", "a row with no visible key gives O = 0, LSE = -inf", "nan_on_fully_masked",
       "causal/window/mask/bias/kv_len as used", {150, 1000, 10000}},
      {"R8", "query_permutation", "permuting queries permutes outputs", "query_tail_skipped", "forward", {100, 750, 7500}},
      {"R9", "key_permutation", "permuting keys with values changes nothing", "lost_rescale", "forward", {100, 750, 7500}},
      {"R10", "gqa_repeat_interleave", "GQA equals MHA on repeat_interleaved K, V", "gqa_tile", "gqa", {100, 750, 7500}},
      {"R11", "layout_invariance", "BHTD, BTHD and gapped layouts agree", "dense_strides_assumed", "strided",
       {75, 500, 5000}},
      {"R12", "batch_head_independence", "batches and KV-head groups are independent", "kv_len_of_batch0 head_slicing", "forward",
       {75, 500, 5000}},
      {"R13", "determinism", "two runs give the same bits", "nondeterministic", "forward (and backward)", {100, 750, 7500},
       Requirement::ThroughFiles::second_run},
      {"R14", "inputs_unchanged", "inputs are never written", "writes_q", "forward (and backward)", {100, 750, 7500},
       Requirement::ThroughFiles::input_files},
      {"R15", "unbiased_rounding", "rounding is unbiased (campaign sign test)",
       "bf16_output_truncated emulated_truncate_bf16", "forward", {400, 2000, 10000}},
      {"R16", "key_translation", "adding one vector to every key leaves O unchanged", "key_normalized",
       "forward (no softcap)", {100, 750, 7500}},
      {"R17", "v_linearity", "O(V1 + V2) = O(V1) + O(V2)", "v_sign_lost", "forward", {100, 750, 7500}},
      {"R18", "score_rank", "the score matrix of a head has rank <= Dk", "spurious_alibi", "forward", {25, 200, 2000}},
      {"R19", "entropy_temperature", "entropy of the weights does not fall as the temperature rises", "scale_divides",
       "custom_scale", {25, 200, 2000}},
      {"R20", "score_variance", "the default scale gives unit score variance", "scale_by_dk", "forward", {10, 50, 250}},
      {"R21", "decode_equals_prefill", "decode with a KV cache equals prefill; the cache holds exactly the appended K/V",
       "decode_top_left decode_append_shifted", "decode", {40, 300, 3000}},
  };
  return r;
}

}  // namespace attnv::conformance
