// Permuting keys together with their values (and mask and bias columns) leaves the outputs
// unchanged within the bound: an online softmax that loses a rescale depends on key order.
#include "properties/checks/checks.h"
#include "properties/conformance/requirement.h"

namespace attnv::conformance {

Requirement r9_key_permutation() {
  return {
      .id = "R9",
      .property = "key_permutation",
      .statement = "permuting keys with values changes nothing",
      .mutants = {"lost_rescale"},
      .needs = "a forward",
      .options = drawn([](generators::GenOptions& o) { o.positional = false; o.kv_len = false; o.sinks = true; }),
      .check = [](Kernel& k, const generators::PropertyCase& pc) { return checks::check_key_permutation(k, pc.c, pc.layout, pc.seed); },
      .cases = {100, 750, 7500},
  };
}

}  // namespace attnv::conformance
