// O is linear in V: O(V1 + V2) = O(V1) + O(V2) within the sum of the three runs' bounds.
#include "properties/checks/checks.h"
#include "properties/conformance/requirement.h"

namespace attnv::conformance {

Requirement r17_v_linearity() {
  return {
      .id = "R17",
      .property = "v_linearity",
      .statement = "O(V1 + V2) = O(V1) + O(V2)",
      .mutants = {"v_sign_lost"},
      .needs = "a forward",
      .options = drawn([](generators::GenOptions& o) { o.sinks = true; o.production_every = kManyRunsProductionEvery; }),
      .check = [](Kernel& k, const generators::PropertyCase& pc) { return checks::check_v_linearity(k, pc.c, pc.layout, pc.seed); },
      .cases = {100, 750, 7500},
  };
}

}  // namespace attnv::conformance
