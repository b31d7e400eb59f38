#pragma once
// A Python callable behind attnv::Kernel: each forward call hands the function dense NumPy arrays
// and reads its answer back. Everything the function does wrong (raises, returns the wrong shape,
// dtype or type) becomes a KernelFault, which the conformance judge turns into a finding: a bug in
// the user's code is never an error of attnv.
#include <pybind11/pybind11.h>

#include <string>

#include "cases/claims.h"
#include "problem/kernel.h"

namespace attnv::python {

class PythonKernel : public Kernel {
 public:
  // `refused_types`: exception classes that mean "declined the call" (attnv.Unsupported,
  // NotImplementedError); any other exception is "crashed".
  PythonKernel(pybind11::object fn, std::string name, cases::Claims claims, pybind11::tuple refused_types);

  std::string name() const override { return name_; }
  Capabilities capabilities() const override { return claims_.caps; }
  PrecisionModel precision(DType storage) const override { return claims_.model(storage); }
  // Holds the GIL for the call (the caller may have released it).
  void forward(const Problem& p, const KernelViews& views) override;
  // A KeyboardInterrupt or SystemExit came out of the function: every later call is skipped.
  bool interrupted() const { return interrupted_; }

 private:
  pybind11::object fn_;
  std::string name_;
  cases::Claims claims_;
  pybind11::tuple refused_types_;
  bool interrupted_ = false;
};

}  // namespace attnv::python
