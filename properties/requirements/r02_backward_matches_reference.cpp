// Backward dQ, dK, dV, and with sinks dsinks (and the forward they start from), match the reference
// within the bound.
// The reference's own gradients are checked against high-precision finite differences
// (reference/oracle/tests/gradient_check_test.cpp).
#include "properties/checks/checks.h"
#include "properties/conformance/requirement.h"

namespace attnv::conformance {

Requirement r2_backward_matches_reference() {
  return {
      .id = "R2",
      .property = "backward_matches_reference",
      .statement = "dQ, dK, dV (and dsinks with sinks) within the per-element bound",
      .mutants = {"dk_missing_scale", "emulated_dk_missing_scale", "dsink_sign_flipped", "alibi_dropped_in_backward"},
      .needs = "backward",
      .missing = needs_claim(&Capabilities::backward, "backward"),
      .options = drawn([](generators::GenOptions& o) { o.with_dout = true; o.sinks = true; o.alibi = true; o.varlen = true; o.max_work = 60000; o.production_every = kManyRunsProductionEvery; }),
      .check = [](Kernel& k, const generators::PropertyCase& pc) { return checks::check_backward_matches_reference(k, pc.c, pc.layout); },
      .exercised = "elements judged",
      .min_per_case = 10,
      .cases = {100, 750, 7500},
  };
}

}  // namespace attnv::conformance
