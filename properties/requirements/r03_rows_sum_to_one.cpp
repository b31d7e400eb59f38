// The attention weights of each row, read through V = ones and V = identity rows, are
// non-negative, zero on hidden keys and sum to 1. Only O is judged here: a wrong LSE is R1's.
#include "properties/checks/checks.h"
#include "properties/conformance/requirement.h"

namespace attnv::conformance {

Requirement r3_rows_sum_to_one() {
  return {
      .id = "R3",
      .property = "rows_sum_to_one",
      .statement = "weights non-negative, zero on hidden keys, summing to 1",
      .mutants = {"zero_padded_tail"},
      .needs = "a forward",
      .options = drawn([](generators::GenOptions& o) { o.max_work = 60000; }),
      .check = [](Kernel& k, const generators::PropertyCase& pc) { return checks::check_rows_sum_to_one(k, pc.c, pc.layout); },
      .cases = {100, 750, 7500},
  };
}

}  // namespace attnv::conformance
