#pragma once
// attnv.repro in process: a certify finding's evidence folder judged again with a Python kernel,
// by the same requirement on the same case (properties/conformance/evidence.h), or an attnv.fuzz
// reproducer by the fuzz differential judge (fuzz/search/fuzz_run.h), with the exit meanings of `attnv repro`: 0 passes (fixed), 1 still fails, 2 neither (the case cannot be
// judged with this kernel, another configuration, or a pass of a failure that did not recur),
// 3 attnv could not judge it (its own error).
#include <pybind11/pybind11.h>

#include <string>

#include "python_kernel.h"

namespace attnv::python {

// (code, text): the exit meaning and what `attnv repro` would print.
// `spec` ("python:module.name") tells a reproducer whether it was found with this kernel.
pybind11::tuple repro(PythonCallables fns, const std::string& name, const std::string& spec,
                      const std::string& claims_json, const std::string& folder, pybind11::tuple refused);

}  // namespace attnv::python
