// The same case laid out as BHTD, BTHD and with gaps between rows gives the same outputs.
#include "properties/checks/checks.h"
#include "properties/conformance/requirement.h"

namespace attnv::conformance {

Requirement r11_layout_invariance() {
  return {
      .id = "R11",
      .property = "layout_invariance",
      .statement = "BHTD, BTHD and gapped layouts agree",
      .mutants = {"dense_strides_assumed"},
      .needs = "strided",
      .missing = needs_claim(&Capabilities::strided, "strided layouts"),
      .options = drawn([](generators::GenOptions& o) { o.layouts = false; o.sinks = true; o.production_every = kManyRunsProductionEvery; }),
      .check = [](Kernel& k, const generators::PropertyCase& pc) { return checks::check_layout_invariance(k, pc.c); },
      .cases = {75, 500, 5000},
  };
}

}  // namespace attnv::conformance
