// Forward O and LSE match the exact reference within the per-element bound of the kernel's
// declared precision model. softcap_pads_tile lives only on production shapes (a 64-key tile
// with a ragged tail), which is why R1 draws them 1 case in 10 rather than the default 1 in 32:
// one run and one reference a case make it the cheapest place for one, and it judges most of a
// tiled kernel's arithmetic.
#include "properties/checks/checks.h"
#include "properties/conformance/requirement.h"

namespace attnv::conformance {

Requirement r1_matches_reference() {
  return {
      .id = "R1",
      .property = "matches_reference",
      .statement = "forward O and LSE within the per-element bound",
      .mutants = {"d_model_scale", "no_max_subtraction", "alignment_confused", "f16_accumulation", "emulated_pv_accum_f16", "emulated_sloppy_exp", "dropout_at_inference", "softcap_pads_tile", "sink_scaled", "mask_head0", "alibi_wrong_corner", "varlen_global_alignment", "seqused_aligned_to_stored_keys"},
      .needs = "a forward in the dtype",
      .options = drawn([](generators::GenOptions& o) {
        o.production_every = 10;
        o.sinks = true;  // R1 is where sinks are judged (the other checks' invariances exclude them)
        o.alibi = true;  // and ALiBi, for the same reason
        o.varlen = true; // and packed sequences (forward only, like ALiBi), with kv_len [S] where claimed
      }),
      .check = [](Kernel& k, const generators::PropertyCase& pc) { return checks::check_matches_reference(k, pc.c, pc.layout); },
      .exercised = "elements judged",
      .min_per_case = 10,
      .cases = {200, 1500, 15000},
  };
}

}  // namespace attnv::conformance
