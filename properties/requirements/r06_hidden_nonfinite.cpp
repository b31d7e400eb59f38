// NaN/inf planted in hidden K, V and bias entries reach no output. A robustness requirement:
// most production kernels compute hidden scores and then add -inf, so a planted NaN leaks. It
// blocks certification only for a kernel that claims hidden_nonfinite; for the others a
// failure is a NOTE (the contract says such values are checked and reported).
#include "properties/checks/checks.h"
#include "properties/conformance/requirement.h"

namespace attnv::conformance {

Requirement r6_hidden_nonfinite() {
  return {
      .id = "R6",
      .property = "hidden_nonfinite",
      .statement = "NaN/inf in hidden positions do not leak",
      .mutants = {"hidden_times_zero"},
      .needs = "whichever of causal, window, mask, bias, kv_len the case uses",
      .options = drawn([](generators::GenOptions& o) { o.masked_rows = true; o.sinks = true; }),
      .check = [](Kernel& k, const generators::PropertyCase& pc) { return checks::check_hidden_nonfinite(k, pc.c, pc.layout, pc.seed); },
      .exercised = "hidden entries changed",
      .min_per_case = 1,
      .cases = {150, 1000, 10000},
      .robustness = true,
  };
}

}  // namespace attnv::conformance
