// No causal, mask, window or padding leakage: replacing hidden K, V and bias entries by other
// finite values leaves every row that cannot see them bitwise unchanged.
#include "properties/checks/checks.h"
#include "properties/conformance/requirement.h"

namespace attnv::conformance {

Requirement r5_no_leakage() {
  return {
      .id = "R5",
      .property = "no_leakage",
      .statement = "hidden K, V, bias do not change any output",
      .mutants = {"mask_after_softmax", "causal_off_by_one", "chunk_by_query_index"},
      .needs = "whichever of causal, window, mask, bias, kv_len the case uses",
      .options = drawn([](generators::GenOptions& o) { o.masked_rows = true; o.sinks = true; }),
      .check = [](Kernel& k, const generators::PropertyCase& pc) { return checks::check_no_leakage(k, pc.c, pc.layout, pc.seed); },
      .exercised = "hidden entries changed",
      .min_per_case = 1,
      .cases = {150, 1000, 10000},
  };
}

}  // namespace attnv::conformance
