// Grouped-query attention equals multi-head attention on K and V repeated with
// repeat_interleave (query head h reads KV head h / G), not with tile.
#include "properties/checks/checks.h"
#include "properties/conformance/requirement.h"

namespace attnv::conformance {

Requirement r10_gqa_repeat_interleave() {
  return {
      .id = "R10",
      .property = "gqa_repeat_interleave",
      .statement = "GQA equals MHA on repeat_interleaved K, V",
      .mutants = {"gqa_tile"},
      .needs = "gqa",
      .missing = needs_claim(&Capabilities::gqa, "grouped heads (GQA)"),
      .options = drawn([](generators::GenOptions& o) { o.grouped = true; o.sinks = true; }),
      .check = [](Kernel& k, const generators::PropertyCase& pc) { return checks::check_gqa_repeat_interleave(k, pc.c, pc.layout); },
      .cases = {100, 750, 7500},
  };
}

}  // namespace attnv::conformance
