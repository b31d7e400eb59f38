// Rounding is unbiased: over the whole stream of cases, the signs of (output - exact) are
// balanced (a campaign-level sign test, so one case alone never fails it). Truncating to bf16
// instead of rounding to nearest shows here and nowhere else: each truncated element is within
// its bound, but nearly all of them err the same way.
#include "properties/checks/checks.h"
#include "properties/conformance/requirement.h"

namespace attnv::conformance {

Requirement r15_unbiased_rounding() {
  return {
      .id = "R15",
      .property = "unbiased_rounding",
      .statement = "rounding is unbiased (campaign sign test)",
      .mutants = {"bf16_output_truncated", "emulated_truncate_bf16"},
      .needs = "a forward",
      .campaign = [](Kernel& k, const std::vector<Case>& cases) { return checks::check_unbiased_rounding(k, cases, Layout::bhtd); },
      .exercised = "cases in the sign test",
      .min_per_case = 0.5,
      .cases = {400, 2000, 10000},
  };
}

}  // namespace attnv::conformance
