// The requirements in report order. Adding one: its file rNN_<property>.cpp here (the build
// finds it), its lines below, and its mutant in kernels/mutants.cpp.
#include "properties/conformance/conformance.h"

namespace attnv::conformance {

Requirement r1_matches_reference();
Requirement r2_backward_matches_reference();
Requirement r3_rows_sum_to_one();
Requirement r4_convex_hull();
Requirement r5_no_leakage();
Requirement r6_hidden_nonfinite();
Requirement r7_fully_masked_rows();
Requirement r8_query_permutation();
Requirement r9_key_permutation();
Requirement r10_gqa_repeat_interleave();
Requirement r11_layout_invariance();
Requirement r12_batch_head_independence();
Requirement r13_determinism();
Requirement r14_inputs_unchanged();
Requirement r15_unbiased_rounding();
Requirement r16_key_translation();
Requirement r17_v_linearity();
Requirement r18_score_rank();
Requirement r19_entropy_temperature();
Requirement r20_score_variance();
Requirement r21_decode_equals_prefill();
Requirement r22_bias_row_shift();
Requirement r23_padding_is_truncation();

const std::vector<Requirement>& requirements() {
  static const std::vector<Requirement> r = {
      r1_matches_reference(),       r2_backward_matches_reference(), r3_rows_sum_to_one(),
      r4_convex_hull(),             r5_no_leakage(),                 r6_hidden_nonfinite(),
      r7_fully_masked_rows(),       r8_query_permutation(),          r9_key_permutation(),
      r10_gqa_repeat_interleave(),  r11_layout_invariance(),         r12_batch_head_independence(),
      r13_determinism(),            r14_inputs_unchanged(),          r15_unbiased_rounding(),
      r16_key_translation(),        r17_v_linearity(),               r18_score_rank(),
      r19_entropy_temperature(),    r20_score_variance(),            r21_decode_equals_prefill(),
      r22_bias_row_shift(),         r23_padding_is_truncation(),
  };
  return r;
}

}  // namespace attnv::conformance
