#include "problem/support_guard.h"

#include "problem/kernel_fault.h"

namespace attnv {

void SupportGuard::ask(const Problem& p, KernelOp op) {
  const Support s = k_.supports(p, op);
  if (on_call) on_call(p, op, s);
  if (s.ok) return;
  throw KernelDeclined(s.why);
}

void SupportGuard::forward(const Problem& p, const KernelViews& v) {
  ask(p, KernelOp::forward);
  k_.forward(p, v);
}

void SupportGuard::backward(const Problem& p, const KernelViews& v) {
  ask(p, KernelOp::backward);
  k_.backward(p, v);
}

void SupportGuard::decode(const Problem& p, const DecodeViews& v) {
  ask(p, KernelOp::decode);
  k_.decode(p, v);
}

}  // namespace attnv
