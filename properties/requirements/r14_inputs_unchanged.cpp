// Q, K, V, mask, bias, dO and every per-head and index input the kernel claims (sinks, ALiBi
// slopes, kv_len, packed bounds) are never written (the harness compares them after the call).
#include "properties/checks/checks.h"
#include "properties/conformance/requirement.h"

namespace attnv::conformance {

Requirement r14_inputs_unchanged() {
  return {
      .id = "R14",
      .property = "inputs_unchanged",
      .statement = "inputs are never written",
      .mutants = {"writes_q"},
      .needs = "a forward (and the backward when claimed)",
      .options = drawn([](generators::GenOptions& o) { o.with_dout = true; o.sinks = true; o.alibi = true; o.varlen = true; o.max_work = 60000; }),
      .check = [](Kernel& k, const generators::PropertyCase& pc) { return checks::check_inputs_unchanged(k, pc.c, pc.layout); },
      .cases = {100, 750, 7500},
      .through_files = Requirement::ThroughFiles::input_files,
  };
}

}  // namespace attnv::conformance
