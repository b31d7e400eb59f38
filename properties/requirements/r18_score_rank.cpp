// The score matrix of a head, read back as log-weights through the LSE, has rank <= Dk (Weyl's
// bound on sigma_{Dk+1} under the per-element error): a positional bias the problem does not
// ask for raises the rank.
// It builds its own case from the dtype and the seed; the drawn case only supplies them (small,
// so drawing it costs nothing; no production share, as the drawn shape is never run).
#include "properties/checks/checks.h"
#include "properties/conformance/requirement.h"

namespace attnv::conformance {

Requirement r18_score_rank() {
  return {
      .id = "R18",
      .property = "score_rank",
      .statement = "the score matrix of a head has rank <= Dk",
      .mutants = {"spurious_alibi"},
      .needs = "a forward",
      .options = drawn([](generators::GenOptions& o) { o.max_work = 1000; o.production_every = 0; }),
      .check = [](Kernel& k, const generators::PropertyCase& pc) { return checks::check_score_rank(k, pc.c.problem.dtype, pc.seed, pc.layout); },
      .cases = {25, 200, 2000},
  };
}

}  // namespace attnv::conformance
