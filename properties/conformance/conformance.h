#pragma once
// The conformance suite: the numbered requirements every attention kernel is held to, run
// black-box through attnv::Kernel, returning structured results (no asserting). The GoogleTest
// front end (conformance_gtest.h) and the certify command both call run_requirement /
// run_conformance; they only decide what a failure means.
//
// THE REQUIREMENTS. Each: what must hold; the check(s) of properties/checks/checks.h that judge
// it; the mutant(s) of kernels/mutants.h shown to break it (kill test); the
// capability a kernel must claim for the requirement to apply (else "not claimed").
//
//  R1  Forward O and LSE match the exact reference within the per-element bound of the kernel's
//      declared precision model.  check_matches_reference.  Broken by d_model_scale,
//      no_max_subtraction, alignment_confused, f16_accumulation, emulated_pv_accum_f16,
//      emulated_sloppy_exp, dropout_at_inference, softcap_pads_tile (only production shapes
//      reach it).  Needs: the dtype (any forward).
//  R2  Backward dQ, dK, dV (and the forward) match the reference within the bound.
//      check_backward_matches_reference.  Broken by dk_missing_scale, emulated_dk_missing_scale.
//      Needs: backward.  (The reference's own gradients are checked against high-precision
//      finite differences in reference/oracle/tests/gradient_check_test.cpp.)
//  R3  Weights are non-negative, zero on hidden keys, sum to 1 (V = ones, V = identity rows).
//      check_rows_sum_to_one.  Broken by zero_padded_tail.  Needs: forward.
//  R4  Every output lies in the convex hull of the visible values.  check_convex_hull.
//      Broken by denominator_skips_max.  Needs: forward.
//  R5  No causal/mask/window/padding leakage: changing hidden K, V, bias leaves rows bitwise
//      unchanged.  check_no_leakage.  Broken by mask_after_softmax, causal_off_by_one.
//      Needs: whichever of causal, window, mask, bias, kv_len the case uses.
//  R6  NaN/inf in hidden positions do not leak.  check_hidden_nonfinite.
//      Broken by hidden_times_zero.  Needs: as R5.  A robustness requirement: it blocks only a
//      kernel that claims hidden_nonfinite; for others a failure is a NOTE (SPEC: "checked and
//      reported").
//  R7  A row with no visible key gives O = 0, LSE = -inf, never NaN.  check_fully_masked_rows.
//      Broken by nan_on_fully_masked.  Needs: as R5.
//  R8  Permuting queries permutes outputs.  check_query_permutation.
//      Broken by query_tail_skipped.  Needs: forward.
//  R9  Permuting keys with values leaves outputs unchanged.  check_key_permutation.
//      Broken by lost_rescale.  Needs: forward.
//  R10 GQA equals MHA on K, V repeated with repeat_interleave.  check_gqa_repeat_interleave.
//      Broken by gqa_tile.  Needs: gqa.
//  R11 BHTD, BTHD and gapped strided layouts agree.  check_layout_invariance.
//      Broken by dense_strides_assumed.  Needs: strided.
//  R12 Batches and KV-head groups are independent.  check_batch_head_independence.
//      Broken by kv_len_of_batch0, head_slicing.  Needs: forward.
//  R13 Two runs give the same bits.  check_determinism.  Broken by nondeterministic.
//  R14 Q, K, V, mask, bias, dO are never written.  check_inputs_unchanged.  Broken by writes_q.
//  R15 Rounding is unbiased (campaign sign test).  check_unbiased_rounding.
//      Broken by bf16_output_truncated, emulated_truncate_bf16.  Needs: forward.
//  R16 Adding one vector to every key leaves O unchanged within the bound.
//      check_key_translation.  Broken by key_normalized.  Needs: forward (not with softcap).
//  R17 O is linear in V: O(V1 + V2) = O(V1) + O(V2) within the bound.  check_v_linearity.
//      Broken by v_sign_lost.  Needs: forward.
//  R18 The score matrix of a head has rank <= Dk (log-weights, Weyl bound on sigma_{Dk+1}).
//      check_score_rank.  Broken by spurious_alibi.  Needs: forward, lse not required.
//  R19 Entropy of the weights does not fall as the temperature rises.
//      check_entropy_temperature.  Broken by scale_divides.  Needs: custom_scale.
//  R20 The default scale 1/sqrt(Dk) gives unit score variance for unit-variance inputs
//      (statistical; false alarm < 0.4% by Chebyshev).  check_score_variance.
//      Broken by scale_by_dk.  Needs: forward.
//  R21 Decode with a KV cache equals prefill: prefill then single tokens, and chunked prefill,
//      give after every call the full prefill's rows within the bound, and the cache holds
//      exactly the appended K/V (bitwise; untouched past cache_len + n).
//      check_decode_equals_prefill.  Broken by decode_top_left, decode_append_shifted.
//      Needs: decode.
//
// Deterministic: the same kernel, options and seed give the same report, whatever the thread
// count (each requirement x dtype draws from its own stream derived from the seed).
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "problem/kernel.h"
#include "reference/bound/bound.h"
#include "properties/checks/property_result.h"
#include "properties/generators/property_case.h"

namespace attnv::conformance {

// Case counts per requirement: quick (<= 30 s per dtype on 2 cores for the naive kernel),
// standard (<= 3 min), full (the nightly depth).
enum class Tier { quick, standard, full };
std::string_view tier_name(Tier t);
Tier parse_tier(std::string_view s);  // "quick", "standard", "full"; InputError otherwise

struct Requirement {
  std::string id;         // "R5"
  std::string property;   // registry name: "no_leakage"
  std::string statement;  // what must hold
  std::string mutants;    // the mutants shown to break it
  std::string needs;      // the capability it needs
  int cases[3];           // per tier
  // What the file route (cases/) needs to see it. Replayed answers cannot show R13 (they cannot
  // differ between two runs) or R14 (the program never sees attnv's buffers): R13 is judged by
  // comparing a second run of the program (`cases check --second`), R14 on the input files
  // (hashed at export); without that evidence their PASS is NOT EXERCISED.
  enum class ThroughFiles { answers, second_run, input_files };
  ThroughFiles through_files = ThroughFiles::answers;
  // A robustness requirement (R6): it blocks certification only for a kernel that claims
  // Capabilities::hidden_nonfinite; for the others it still runs and a failure is a NOTE.
  bool robustness = false;
};
const std::vector<Requirement>& requirements();
const Requirement& requirement(const std::string& id_or_property);  // InputError if unknown

struct ConformanceOptions {
  Tier tier = Tier::quick;
  std::vector<DType> dtypes;          // empty: every dtype the kernel claims
  std::uint64_t seed = 20261121;
  std::string save_failures_dir;      // empty: failing cases are not saved
  std::vector<std::string> only;      // requirement ids or names; empty: all
  int max_findings = 1;               // per requirement x dtype: failures kept in full (and saved)
  bool stop_at_findings = false;      // stop at max_findings (the kill table's time to catch);
                                      // otherwise every case runs and failures are counted
  int threads = 0;                    // run_conformance(factory): 0 = default_threads()
  // Called once per finished requirement x dtype with the number done and the total (from one
  // thread at a time, in completion order): progress bars and plain progress lines.
  std::function<void(const struct RequirementResult&, std::size_t done, std::size_t total)> on_result;
  // Called after each case of a requirement x dtype with the cases run so far and its case count
  // (from several threads at once): progress that moves within a requirement.
  std::function<void(const std::string& id, DType dtype, int cases_run, int cases)> on_case;
};

// NOT EXERCISED: the kernel claims what the requirement needs, but no drawn case gave its check
// anything to judge (R5 with no hidden key anywhere, say). Shown apart, never counted as a pass.
// NOTE: a robustness requirement the kernel does not claim failed: reported with its findings,
// never a certification failure, never counted as a pass.
// ATTNV ERROR: attnv could not judge a case of the requirement (its reference declined it, its
// own views were invalid): attnv's fault, never the kernel's; the run cannot certify.
// NOT JUDGED: every failure of the requirement was one memory fault of the kernel (a write into
// an input, a touch outside its buffers) that another result reports (R14 for a written input,
// else the first in report order): one finding of its kind, not one per requirement.
enum class Verdict { pass, fail, not_claimed, not_exercised, note, attnv_error, not_judged };
std::string_view verdict_name(Verdict v);

struct Finding {
  int case_index = 0;
  std::string case_id;
  std::string message;
  std::string worst;
  std::string reproduce;   // one line: "R5 no_leakage dtype=f32 seed=20261121 case=17"
  std::string saved_case;  // the exchange folder holding the case ("" when not saved)
  std::string kind;        // props::fail_kind_id: "outside_bound", "non_finite", "crashed", ...
};

// One case a requirement ran: what the certificate plots (the covered shape space, the worst
// cases). For checks that build their own case (R18-R20) the problem is the drawn case's.
struct CaseRecord {
  int index = 0;            // position in the requirement's stream
  std::string case_id;
  Problem problem;
  bool judged = false;      // false: not claimed / not applicable
  bool ok = true;
  double worst_ratio = -1;  // -1: the check has no ratio
};

struct RequirementResult {
  std::string id, property;
  DType dtype = DType::f32;
  Verdict verdict = Verdict::pass;
  int cases_run = 0;          // cases drawn and given to the check
  int cases_checked = 0;      // of those, the ones the check judged (pass or fail)
  int cases_not_claimed = 0;        // outside the kernel's claims
  int cases_failed = 0;             // every failing case (findings keeps the first max_findings)
  std::string failure_pattern;      // where they were: "all in bthd", "bhtd 30, gapped 7"
  int cases_not_exercised = 0;      // in the claims, but nothing there for the check to exercise
  std::string not_exercised_why;    // the first such case's reason
  double worst_ratio = -1;    // largest error / allowance over the cases (-1: the check has none)
  std::string worst_case;     // the case id where it occurred
  std::string note;           // why not claimed, ...
  std::vector<Finding> findings;
  std::vector<CaseRecord> cases;  // every case run, in stream order
  bound::RatioHistogram hist;     // per-element error / threshold ratios (R1, R2; empty otherwise)
  double seconds = 0;             // wall time (not part of any byte-identical report)
};
std::string describe(const RequirementResult& r);  // one line, then one line per finding

struct ConformanceReport {
  std::string kernel;
  Tier tier = Tier::quick;
  std::uint64_t seed = 0;
  std::vector<RequirementResult> results;  // requirement order, then dtype order
  bool ok() const;                         // no FAIL and no ATTNV ERROR (a NOTE is neither)
  std::string table() const;               // one line per result
};

using KernelFactory = std::function<std::unique_ptr<Kernel>()>;

// One case judged by one requirement's check, the judgement every front end shares (certify,
// cases check, repro, the GoogleTest suite): what the kernel's call does wrong is a FAIL of its
// kind (a KernelFault: crashed, hung, refused, ...); anything else thrown is attnv's own error
// (Status::attnv_error), never charged to the kernel. A case outside the kernel's claims (a
// capability the requirement needs, a strided layout) is not claimed, not judged.
props::PropertyResult judge_case(Kernel& k, const Requirement& r, const props::PropertyCase& pc);

// One requirement on one dtype.
RequirementResult run_requirement(Kernel& k, const std::string& id_or_property, DType dtype,
                                  const ConformanceOptions& opt = {});
// Every requirement (or opt.only) on every dtype, one after the other on this kernel.
ConformanceReport run_conformance(Kernel& k, const ConformanceOptions& opt = {});
// Same, requirement x dtype jobs spread over opt.threads threads, each on its own kernel.
ConformanceReport run_conformance(const KernelFactory& make, const ConformanceOptions& opt = {});

// The case a reproduce line names: the case_index-th case of that requirement's stream, drawn for
// a kernel with these claims (the kernel's capabilities(); unset: every feature).
props::PropertyCase reproduce_case(const std::string& id_or_property, DType dtype, std::uint64_t seed, int case_index,
                                   const std::optional<Capabilities>& claims = std::nullopt);

}  // namespace attnv::conformance
