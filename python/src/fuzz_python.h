#pragma once
// attnv.fuzz in process: the same search, shrinking and reproducer folder as `attnv fuzz`
// (fuzz/search/fuzz_run.h) on a Python kernel; the searchers' calls into Python take the GIL
// one at a time, attnv's own judging runs beside them.
#include <pybind11/pybind11.h>

#include <optional>
#include <string>
#include <vector>

#include "python_kernel.h"

namespace attnv::python {

struct FuzzRequest {
  std::string name, spec, claims_json;
  std::optional<std::string> dtype;
  double max_seconds = 30, shrink_seconds = 20;
  int jobs = 1;
  std::uint64_t seed = 1;
  bool backward = true;
  std::string out;
  std::vector<std::string> seeds;  // the seed corpus's inputs (bytes)
  std::string reproduce_line;
  bool progress = false;           // status lines to stderr as the search goes
};

// (exit status as attnv fuzz's, the verdict text, the log).
pybind11::tuple fuzz(PythonCallables fns, const FuzzRequest& r, pybind11::tuple refused);

}  // namespace attnv::python
