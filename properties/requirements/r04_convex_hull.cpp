// Every output lies in the convex hull of the values its row can see (per column: between the
// smallest and the largest visible value, widened by the bound).
#include "properties/checks/checks.h"
#include "properties/conformance/requirement.h"

namespace attnv::conformance {

Requirement r4_convex_hull() {
  return {
      .id = "R4",
      .property = "convex_hull",
      .statement = "outputs in the convex hull of the visible values",
      .mutants = {"denominator_skips_max"},
      .needs = "a forward",
      .check = [](Kernel& k, const generators::PropertyCase& pc) { return checks::check_convex_hull(k, pc.c, pc.layout); },
      .cases = {150, 1000, 10000},
  };
}

}  // namespace attnv::conformance
