// A row with no visible key gives O = 0 and LSE = -inf, never NaN. A NaN in a row with keys is
// R1's to judge.
#include "properties/checks/checks.h"
#include "properties/conformance/requirement.h"

namespace attnv::conformance {

Requirement r7_fully_masked_rows() {
  return {
      .id = "R7",
      .property = "fully_masked_rows",
      .statement = "a row with no visible key gives O = 0, LSE = -inf",
      .mutants = {"nan_on_fully_masked", "empty_rows_unwritten"},
      .needs = "whichever of causal, window, mask, bias, kv_len the case uses",
      .options = drawn([](generators::GenOptions& o) { o.masked_rows = true; }),
      .check = [](Kernel& k, const generators::PropertyCase& pc) { return checks::check_fully_masked_rows(k, pc.c, pc.layout); },
      .exercised = "fully masked rows seen",
      .min_per_case = 0.1,
      .cases = {150, 1000, 10000},
  };
}

}  // namespace attnv::conformance
