#pragma once
// A Python kernel behind attnv::Kernel: each call hands the functions dense NumPy arrays and reads
// their answer back. Everything a function does wrong (raises, returns the wrong shape, dtype or
// type, writes into an input) becomes a KernelFault, which the conformance judge turns into a
// finding: a bug in the user's code is never an error of attnv.
#include <pybind11/pybind11.h>

#include <string>
#include <vector>

#include "cases/claims.h"
#include "problem/kernel.h"

namespace attnv::python {

// The kernel's callables; None where it has none (backward, supports).
struct PythonCallables {
  pybind11::object forward, backward, supports;
};

// An exception a function raised: the one line its finding quotes and the whole traceback.
struct RaisedException {
  std::string line;
  std::string traceback;
};

class PythonKernel : public Kernel {
 public:
  // `refused_types`: exception classes that mean "refused the call" (attnv.Unsupported,
  // NotImplementedError); any other exception is "crashed".
  PythonKernel(PythonCallables fns, std::string name, cases::Claims claims, pybind11::tuple refused_types);

  std::string name() const override { return name_; }
  Capabilities capabilities() const override { return claims_.caps; }
  PrecisionModel precision(DType storage) const override { return claims_.model(storage); }
  // Each of these holds the GIL for the call (the caller may have released it).
  // supports(problem, op) answers True, False or a reason (a str): False or a reason declines,
  // anything else is the kernel's `refused` fault (docs/semantics.md, "Declined problems").
  Support supports(const Problem& p, KernelOp op) override;
  void forward(const Problem& p, const KernelViews& views) override;
  // backward(q, k, v, dout, *, out, lse, <the forward's keywords>) returns (dq, dk, dv), and
  // dsinks last in a problem with sinks.
  void backward(const Problem& p, const KernelViews& views) override;
  // A KeyboardInterrupt or SystemExit came out of a function: every later call is skipped.
  bool interrupted() const { return interrupted_; }
  // The exceptions the functions raised, oldest first (at most kMaxRaised are kept).
  const std::vector<RaisedException>& raised() const { return raised_; }
  static constexpr std::size_t kMaxRaised = 256;

 private:
  // Runs `body` with the GIL held; a Python exception out of it becomes the kernel's fault.
  template <class F>
  void guarded(const char* what, F&& body);
  PythonCallables fns_;
  std::string name_;
  cases::Claims claims_;
  pybind11::tuple refused_types_;
  bool interrupted_ = false;
  std::vector<RaisedException> raised_;
};

}  // namespace attnv::python
