// The default scale 1/sqrt(Dk) gives unit score variance for unit-variance inputs. Statistical:
// a false alarm has probability < 0.4% (Chebyshev).
// It builds its own case from the dtype and the seed; the drawn case only supplies them (small,
// so drawing it costs nothing; no production share, as the drawn shape is never run).
#include "properties/checks/checks.h"
#include "properties/conformance/requirement.h"

namespace attnv::conformance {

Requirement r20_score_variance() {
  return {
      .id = "R20",
      .property = "score_variance",
      .statement = "the default scale gives unit score variance",
      .mutants = {"scale_by_dk"},
      .needs = "a forward",
      .options = drawn([](generators::GenOptions& o) { o.max_work = 1000; o.production_every = 0; }),
      .check = [](Kernel& k, const generators::PropertyCase& pc) { return checks::check_score_variance(k, pc.c.problem.dtype, pc.seed, pc.layout); },
      .cases = {10, 50, 250},
  };
}

}  // namespace attnv::conformance
