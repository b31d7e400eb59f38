#pragma once
// A call into a kernel, told apart from attnv's own code: what the kernel throws becomes a
// KernelFault (its failure), anything else a caller throws stays attnv's. And the floating-point
// exceptions the kernel raises, watched around the call when asked.
#include <functional>
#include <string>

#include "problem/kernel.h"
#include "problem/precision.h"

namespace attnv::judge {

// Runs f, a call into the kernel: a KernelFault or HarnessError passes through; InputError from
// an in-process kernel is a refusal; any other exception a crash.
void kernel_call(const std::function<void()>& f);

// The kernel's precision model for a problem (precision_for: a kernel method, so what it throws
// is the kernel's), with the problem's storage dtype.
PrecisionModel kernel_precision(Kernel& k, const Problem& p);

// Floating-point exceptions (overflow, invalid operation, division by zero) inside a kernel call:
// not watched, read from the sticky flags after the call, or trapped (SIGFPE, for a stack in
// libFuzzer). Only in-process kernels can be watched: a plugin runs in its own process.
enum class FpCheck { off, flags, trap };

// Watches the calls made while it is alive. The reference and the bound raise flags legitimately
// (log 0 = -inf for a fully masked row), so a watch spans the kernel's calls and nothing else.
class FpWatch {
 public:
  explicit FpWatch(FpCheck mode);
  ~FpWatch();
  FpWatch(const FpWatch&) = delete;
  FpWatch& operator=(const FpWatch&) = delete;
  // The exceptions raised since construction, e.g. "overflow invalid-operation"; "" when none.
  std::string raised() const;

 private:
  FpCheck mode_;
};

}  // namespace attnv::judge
