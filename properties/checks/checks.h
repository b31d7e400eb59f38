#pragma once
// The properties: each a function of a kernel (black box, through attnv::Kernel) and a case that
// returns a PropertyResult and never asserts. A kernel that does not claim a case's problem
// passes with the note "not claimed: ..." (requirements outside its claims are not failed).
//
// How each is judged (never a hand-picked epsilon):
// * against the reference: the exact outputs (reference::fast_forward/backward) and the per-element
//   bound of the kernel's declared precision model (bound::forward_bound/backward_bound),
//   element accepted by bound::accept;
// * "unchanged" (SPEC): bitwise, every output bit (NaN-safe);
// * "within the bound" between two runs whose exact values agree (permutations, layouts, the
//   GQA expansion, slices): |a - b| <= threshold(a) + threshold(b), the thresholds of
//   bound::accept around the common exact value. Two runs that are each accepted always pass
//   (triangle inequality), so a correct kernel cannot fail it; a disagreement larger than both
//   allowances proves at least one run wrong.
#include <cstdint>
#include <vector>

#include "problem/buffers.h"
#include "problem/case.h"
#include "problem/kernel.h"
#include "properties/checks/property_result.h"

namespace attnv::checks {

// Forward O and LSE match the reference within the per-element bound.
PropertyResult check_matches_reference(Kernel& k, const Case& c, Layout layout);
// Forward and backward (O, LSE, dQ, dK, dV) match the reference within the bound. Needs dout.
PropertyResult check_backward_matches_reference(Kernel& k, const Case& c, Layout layout);
// V = ones gives 1 on every row with a visible key (0 on the others); V = identity rows
// (Dv = Tk, v_j = e_j; Tk <= 256) gives the weights: non-negative, summing to 1 within the sum
// of their allowances, exactly zero on hidden keys.
PropertyResult check_rows_sum_to_one(Kernel& k, const Case& c, Layout layout);
// Every output lies in the convex hull of the visible values (per column), widened by its
// allowance.
PropertyResult check_convex_hull(Kernel& k, const Case& c, Layout layout);
// No causal or mask leakage: the K and V rows of the keys hidden from one query row (chosen by
// `seed`) and every hidden bias entry are replaced by other finite values; every output row
// that sees none of the changed keys must be bitwise unchanged.
PropertyResult check_no_leakage(Kernel& k, const Case& c, Layout layout, std::uint64_t seed);
// The same positions filled with NaN (K, bias) and +-inf (V): the same rows must stay bitwise
// unchanged (SPEC: "checked and reported"; the message names what leaked).
PropertyResult check_hidden_nonfinite(Kernel& k, const Case& c, Layout layout, std::uint64_t seed);
// Rows with no visible key give O = 0 and LSE = -inf; no output anywhere is NaN.
PropertyResult check_fully_masked_rows(Kernel& k, const Case& c, Layout layout);
// Permuting the queries (with the rows of mask and bias) permutes the outputs, within the bound.
// Not applicable to causal or windowed problems (positions are not permutable).
PropertyResult check_query_permutation(Kernel& k, const Case& c, Layout layout, std::uint64_t seed);
// Permuting keys and values together (with the columns of mask and bias) leaves the outputs
// unchanged within the bound. Not applicable with causal, window or kv_len.
PropertyResult check_key_permutation(Kernel& k, const Case& c, Layout layout, std::uint64_t seed);
// GQA equals MHA on K and V repeated with repeat_interleave (Hkv = Hq), within the bound.
// (GQA with one KV head is MQA by definition; Hkv = Hq is MHA: the expansion is the identity.)
PropertyResult check_gqa_repeat_interleave(Kernel& k, const Case& c, Layout layout);
// BHTD, BTHD and gapped layouts give the same outputs within the bound.
PropertyResult check_layout_invariance(Kernel& k, const Case& c);
// Each batch alone, and each KV head with its query heads alone, gives the rows it gives in the
// full problem, within the bound.
PropertyResult check_batch_head_independence(Kernel& k, const Case& c, Layout layout);
// Two runs of the same case give the same bits.
PropertyResult check_determinism(Kernel& k, const Case& c, Layout layout);
// The kernel never writes into Q, K, V, mask, bias (and dO, when the case has one).
PropertyResult check_inputs_unchanged(Kernel& k, const Case& c, Layout layout);
// Adding one vector t to every key shifts each score row by the constant scale <q_i, t>: O is
// unchanged within both runs' bounds. K is first put on a grid where K and K + t are exact in
// the storage dtype. Not applicable with a softcap.
PropertyResult check_key_translation(Kernel& k, const Case& c, Layout layout, std::uint64_t seed);
// O(V1 + V2) = O(V1) + O(V2), V1, V2 and V1 + V2 exact in the storage dtype; within the sum of
// the three runs' allowances.
PropertyResult check_v_linearity(Kernel& k, const Case& c, Layout layout, std::uint64_t seed);
// The checks below build their own case from the dtype and the seed (they need a shape of their own).
// The score matrix of a head has rank <= Dk, seen black-box: log-weights (V = identity) centred
// per row have sigma_{Dk+1} no larger than the Frobenius norm of their error allowance (Weyl).
PropertyResult check_score_rank(Kernel& k, DType dtype, std::uint64_t seed, Layout layout);
// The entropy of every weight row does not fall as the temperature rises (scale 2/sqrt(Dk),
// 1/sqrt(Dk), 1/(2 sqrt(Dk))), beyond the entropy's continuity bound from the weights' allowances.
PropertyResult check_entropy_temperature(Kernel& k, DType dtype, std::uint64_t seed, Layout layout);
// Statistical: with unit-variance Q and K, the default scale gives scores of variance ~1
// (accepted band [0.75, 4/3]; false alarm < 0.4% by Chebyshev, ~1e-15 by the normal approximation).
PropertyResult check_score_variance(Kernel& k, DType dtype, std::uint64_t seed, Layout layout);
// Decode with a KV cache equals prefill (R21; properties/checks/decode_checks.cpp): the case's K,
// V (and queries, cycled) are a prompt of T = Tk tokens decoded into a cache twice (prefill
// T - m then m single tokens; chunked prefill of ceil(T/3)); after every call the cache holds
// exactly the appended K/V (bitwise, the rest untouched) and O, LSE are within the bound of the
// equivalent forward (kv_len = cache_len + n, bottom-right causal). Needs capabilities().decode.
PropertyResult check_decode_equals_prefill(Kernel& k, const Case& c, Layout layout, std::uint64_t seed);
// Campaign-level: the sign test of bound::sign_test over the cases' mean signed output errors
// (truncation instead of rounding hides under the per-element bound, not under this).
PropertyResult check_unbiased_rounding(Kernel& k, const std::vector<Case>& cases, Layout layout);

}  // namespace attnv::checks
