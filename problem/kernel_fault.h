#pragma once
// A kernel call that failed as a call: the kernel crashed, hung, refused, or wrote where it must
// not. Thrown from (or on behalf of) Kernel::forward, backward, decode, so that a judge can tell
// the kernel's failure from attnv's own (anything else a check throws is attnv's).
#include <stdexcept>
#include <string>
#include <string_view>

namespace attnv {

enum class FaultKind {
  crashed,        // a signal, an exit, or (in process) an exception out of the call
  hung,           // no answer within the time limit
  refused,        // declined the call (a nonzero return, or InputError from an in-process kernel)
  input_written,  // wrote into an input buffer
  out_of_bounds,  // touched memory outside its buffers (guard pages, the slack after an output)
  missing_output, // left an output unwritten, unreadable or not in its dtype (answers through files)
};

inline std::string_view fault_kind_id(FaultKind k) {
  switch (k) {
    case FaultKind::crashed: return "crashed";
    case FaultKind::hung: return "hung";
    case FaultKind::refused: return "refused";
    case FaultKind::input_written: return "input_written";
    case FaultKind::out_of_bounds: return "out_of_bounds";
    case FaultKind::missing_output: return "missing_output";
  }
  return "?";
}

// attnv's own failure inside a kernel adapter (the replay of answers read from files cannot find
// the call it is asked: the export and the check disagree): passed through as attnv's error,
// never turned into a fault of the kernel.
class HarnessError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class KernelFault : public std::runtime_error {
 public:
  KernelFault(FaultKind kind, const std::string& what) : std::runtime_error(what), kind_(kind) {}
  FaultKind kind() const { return kind_; }

 private:
  FaultKind kind_;
};

// The kernel declined the call through its supports() query (problem/kernel.h, the plugin ABI's
// supports): an honest "not this problem", which a judge reports as NOT SUPPORTED, not a
// finding. A KernelFault of kind refused, so that a judge unaware of declining still never
// counts the case as passed.
class KernelDeclined : public KernelFault {
 public:
  explicit KernelDeclined(const std::string& why) : KernelFault(FaultKind::refused, "declined: " + why), why_(why) {}
  const std::string& why() const { return why_; }

 private:
  std::string why_;
};

}  // namespace attnv
