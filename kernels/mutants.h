#pragma once
// The mutant zoo: kernels with one planted bug each, named, with the requirement (property) each
// is meant to break. The kill test (properties/tests/kill_test.cpp) shows each caught by that
// property within a bounded number of generated cases; a mutant nothing catches is a hole in
// the properties, not in the mutant.
//
// Not here yet: dropout at inference (the problem has no dropout parameter to get wrong yet).
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "problem/kernel.h"

namespace attnv::kernels {

struct Mutant {
  std::string name;         // "gqa_tile"
  std::string bug;          // one line: what is wrong
  std::string requirement;  // the property meant to catch it (a name of checks.h, "check_" dropped)
  DType dtype = DType::f32;  // the storage dtype the kill test draws cases in
  // Its bug lives in a feature the plugin ABI cannot pass yet: built as a plugin it claims less
  // and cannot show the bug, so the plugin zoo test leaves it out (none today: every feature
  // a mutant plants in crosses the ABI).
  bool in_process_only = false;
  std::function<std::unique_ptr<Kernel>()> make;
};

const std::vector<Mutant>& mutant_zoo();

}  // namespace attnv::kernels
