// Adding the same vector to every key adds q.u to every logit of a row, which the softmax
// cancels: O is unchanged within the bound of each run. Softcap breaks the identity, so such
// cases are not applicable.
#include "properties/checks/checks.h"
#include "properties/conformance/requirement.h"

namespace attnv::conformance {

Requirement r16_key_translation() {
  return {
      .id = "R16",
      .property = "key_translation",
      .statement = "adding one vector to every key leaves O unchanged",
      .mutants = {"key_normalized"},
      .needs = "a forward (no softcap)",
      .options = drawn([](generators::GenOptions& o) { o.production_every = kManyRunsProductionEvery; }),
      .check = [](Kernel& k, const generators::PropertyCase& pc) { return checks::check_key_translation(k, pc.c, pc.layout, pc.seed); },
      .cases = {100, 750, 7500},
  };
}

}  // namespace attnv::conformance
