#pragma once
// A kernel as a judge sees it: every call asks the kernel's supports() first (problem/kernel.h)
// and a declined one is never made. An in-process kernel's answer is so honoured exactly like a
// plugin's (whose worker asks before every call too), and every call a check derives from its
// case (a permuted, perturbed or identity-V copy, the backward, a decode step) is asked about,
// not only the drawn case.
#include <functional>
#include <memory>
#include <string>

#include "problem/kernel.h"

namespace attnv {

class SupportGuard final : public Kernel {
 public:
  // A declined call throws KernelDeclined: the conformance judge reports the case NOT
  // SUPPORTED, the fuzz oracle skips it (judge/judge.h lets it through to both).
  explicit SupportGuard(Kernel& k) : k_(k) {}
  // Owns the kernel it guards (a factory's product).
  explicit SupportGuard(std::unique_ptr<Kernel> k) : owned_(std::move(k)), k_(*owned_) {}

  std::string name() const override { return k_.name(); }
  std::string configuration() const override { return k_.configuration(); }
  Capabilities capabilities() const override { return k_.capabilities(); }
  PrecisionModel precision(DType storage) const override { return k_.precision(storage); }
  PrecisionModel precision_for(const Problem& p) const override { return k_.precision_for(p); }
  Support supports(const Problem& p, KernelOp op) override { return k_.supports(p, op); }
  void forward(const Problem& p, const KernelViews& v) override;
  void backward(const Problem& p, const KernelViews& v) override;
  void decode(const Problem& p, const DecodeViews& v) override;

  // Told of every call before it is made or declined (s: the kernel's answer): what a judge
  // needs to say which problems the kernel actually computed.
  std::function<void(const Problem& p, KernelOp op, const Support& s)> on_call;

 private:
  void ask(const Problem& p, KernelOp op);
  std::unique_ptr<Kernel> owned_;  // before k_: it may be what k_ refers to
  Kernel& k_;
};

}  // namespace attnv
