// Each batch and each KV-head group, run alone, gives what it gave inside the whole problem.
#include "properties/checks/checks.h"
#include "properties/conformance/requirement.h"

namespace attnv::conformance {

Requirement r12_batch_head_independence() {
  return {
      .id = "R12",
      .property = "batch_head_independence",
      .statement = "batches and KV-head groups are independent",
      .mutants = {"kv_len_of_batch0", "head_slicing"},
      .needs = "a forward",
      .options = drawn([](generators::GenOptions& o) { o.production_every = kManyRunsProductionEvery; }),
      .check = [](Kernel& k, const generators::PropertyCase& pc) { return checks::check_batch_head_independence(k, pc.c, pc.layout); },
      .cases = {75, 500, 5000},
  };
}

}  // namespace attnv::conformance
