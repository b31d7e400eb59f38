#pragma once
// attnv's own C++ kernels (the naive kernel, each mutant of the zoo) as Python kernels: functions
// that take the NumPy arrays and keywords a Python kernel receives (python/README.md) and answer
// as one. Certified through attnv.certify they go through the Python route end to end, so the
// zoo shows that route catches each planted bug on the requirement the C route does, and the
// naive kernel gives the route's cost against the same arithmetic as a plugin (bench/).
// Exposed as attnv._attnv.native_kernel(name); not a way to certify attnv's own kernels (the CLI
// does that directly).
#include <pybind11/pybind11.h>

#include <memory>
#include <string>

#include "cases/claims.h"
#include "problem/kernel.h"

namespace attnv::python {

class NativeKernel {
 public:
  // "naive", or the name of a mutant of the zoo (kernels/mutants.h). InputError for another.
  explicit NativeKernel(const std::string& name);

  const std::string& name() const { return name_; }
  // The kernel's capabilities and precision models as a claims object (JSON): what it claims.
  std::string claims_json(const std::vector<std::string>& dtypes) const;
  // The requirement (property name) the mutant is built to break, and its dtype; "" for naive.
  std::string meant_for() const { return meant_for_; }
  std::string meant_dtype() const { return meant_dtype_; }

  pybind11::object forward(pybind11::args args, pybind11::kwargs kw);
  pybind11::object backward(pybind11::args args, pybind11::kwargs kw);
  pybind11::object decode(pybind11::args args, pybind11::kwargs kw);

 private:
  std::string name_, meant_for_, meant_dtype_;
  std::unique_ptr<Kernel> kernel_;
};

void bind_native_kernel(pybind11::module_& m);

}  // namespace attnv::python
