// Identical calls give identical bits: two forwards in a row, and two forward+backward runs
// with a forward between them (so a kernel following a call counter's parity shows).
#include "properties/checks/checks.h"
#include "properties/conformance/requirement.h"

namespace attnv::conformance {

Requirement r13_determinism() {
  return {
      .id = "R13",
      .property = "determinism",
      .statement = "two runs give the same bits",
      .mutants = {"nondeterministic"},
      .needs = "a forward (and the backward when claimed)",
      .options = drawn([](generators::GenOptions& o) { o.with_dout = true; o.sinks = true; o.max_work = 60000; o.production_every = kManyRunsProductionEvery; }),
      .check = [](Kernel& k, const generators::PropertyCase& pc) { return checks::check_determinism(k, pc.c, pc.layout); },
      .exercised = "call pairs compared",
      .cases = {100, 750, 7500},
      .through_files = Requirement::ThroughFiles::second_run,
  };
}

}  // namespace attnv::conformance
