// The entropy of each row's weights does not fall as the temperature rises (the scale falls).
// It builds its own case from the dtype and the seed; the drawn case only supplies them (small,
// so drawing it costs nothing; no production share, as the drawn shape is never run).
#include "properties/checks/checks.h"
#include "properties/conformance/requirement.h"

namespace attnv::conformance {

Requirement r19_entropy_temperature() {
  return {
      .id = "R19",
      .property = "entropy_temperature",
      .statement = "entropy of the weights does not fall as the temperature rises",
      .mutants = {"scale_divides"},
      .needs = "custom_scale",
      .missing = needs_claim(&Capabilities::custom_scale, "custom scale"),
      .options = drawn([](generators::GenOptions& o) { o.max_work = 1000; o.production_every = 0; }),
      .check = [](Kernel& k, const generators::PropertyCase& pc) { return checks::check_entropy_temperature(k, pc.c.problem.dtype, pc.seed, pc.layout); },
      .cases = {25, 200, 2000},
  };
}

}  // namespace attnv::conformance
