#pragma once
// A Python kernel behind attnv::Kernel: each call hands the functions dense NumPy arrays and reads
// their answer back. Everything a function does wrong (raises, returns the wrong shape, dtype or
// type, writes into an input) becomes a KernelFault, which the conformance judge turns into a
// finding: a bug in the user's code is never an error of attnv.
#include <pybind11/pybind11.h>

#include <atomic>
#include <string>
#include <vector>

#include "cases/claims.h"
#include "problem/case.h"
#include "problem/kernel.h"

namespace attnv::python {

class CallArguments;  // call_arguments.h

// The kernel's callables; None where it has none (backward, decode, supports).
struct PythonCallables {
  pybind11::object forward, backward, decode, supports;
  // The functions write their outputs into buffers attnv passes (out=, lse=; a backward's dq=,
  // dk=, dv=, dsinks=) instead of returning them: every element checked written, every buffer
  // between guards (numpy_io.h).
  bool in_place = false;
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
  // decode(q, k_new, v_new, k_cache, v_cache, *, cache_len, block_table, scale, softcap, window,
  // dtype, [sinks], [alibi]) appends k_new, v_new into the caches in place and returns out or
  // (out, lse) (problem/kernel.h, Kernel::decode). block_table is None for a contiguous cache.
  void decode(const Problem& p, const DecodeViews& views) override;
  // A KeyboardInterrupt or SystemExit came out of a function: every later call is skipped.
  bool interrupted() const { return interrupted_.load(); }
  // The exceptions the functions raised, oldest first (at most kMaxRaised are kept).
  const std::vector<RaisedException>& raised() const { return raised_; }
  static constexpr std::size_t kMaxRaised = 256;

 private:
  // Runs `body` with the GIL held; a Python exception out of it becomes the kernel's fault.
  template <class F>
  void guarded(const char* what, F&& body);
  // A forward's or decode's answer: the buffers a writes_outputs kernel fills (out=, lse=; lse=None
  // when the call has no LSE) offered before the call, and what it returned or wrote taken after.
  void offer_answer_buffers(CallArguments& args, const Problem& p, bool lse_view) const;
  void take_answer(const pybind11::object& result, const CallArguments& args, const Problem& p, bool lse_view,
                   const std::string& fn, Outputs& o) const;
  void read_answer(const pybind11::object& result, const Problem& p, bool want_lse, const std::string& fn,
                   Outputs& o) const;
  PythonCallables fns_;
  std::string name_;
  cases::Claims claims_;
  pybind11::tuple refused_types_;
  // Requirement x dtype jobs run on several threads (PythonKernelHandle): the functions are
  // called one at a time under the GIL, raised_ is touched only with the GIL held, and this flag
  // is read without it.
  std::atomic<bool> interrupted_ = false;
  std::vector<RaisedException> raised_;
};

// One job's view of the shared PythonKernel (run_conformance(factory) gives each thread its own
// Kernel): the Python functions run one at a time under the GIL while attnv's own work for the
// other jobs (the reference, the bound, the judging) goes on beside them.
class PythonKernelHandle final : public Kernel {
 public:
  explicit PythonKernelHandle(PythonKernel& k) : k_(k) {}
  std::string name() const override { return k_.name(); }
  Capabilities capabilities() const override { return k_.capabilities(); }
  PrecisionModel precision(DType storage) const override { return k_.precision(storage); }
  Support supports(const Problem& p, KernelOp op) override { return k_.supports(p, op); }
  void forward(const Problem& p, const KernelViews& v) override { k_.forward(p, v); }
  void backward(const Problem& p, const KernelViews& v) override { k_.backward(p, v); }
  void decode(const Problem& p, const DecodeViews& v) override { k_.decode(p, v); }

 private:
  PythonKernel& k_;
};

}  // namespace attnv::python
