// Permuting the queries (with their mask and bias rows) permutes the outputs. Positional
// features (causal, window) are not drawn: they are not equivariant.
#include "properties/checks/checks.h"
#include "properties/conformance/requirement.h"

namespace attnv::conformance {

Requirement r8_query_permutation() {
  return {
      .id = "R8",
      .property = "query_permutation",
      .statement = "permuting queries permutes outputs",
      .mutants = {"query_tail_skipped"},
      .needs = "a forward",
      .options = drawn([](generators::GenOptions& o) { o.positional = false; o.sinks = true; }),
      .check = [](Kernel& k, const generators::PropertyCase& pc) { return checks::check_query_permutation(k, pc.c, pc.layout, pc.seed); },
      .cases = {100, 750, 7500},
  };
}

}  // namespace attnv::conformance
