#pragma once
// A kernel that claims less than the one it wraps: the same calls and precision, with some
// capabilities taken back. Tests use it to show what a requirement says of a kernel that does
// not claim something (R6 unclaimed, a strided case, a missing backward).
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "problem/kernel.h"

namespace attnv::kernels {

class NarrowedKernel : public Kernel {
 public:
  NarrowedKernel(std::unique_ptr<Kernel> inner, std::function<void(Capabilities&)> narrow)
      : inner_(std::move(inner)), narrow_(std::move(narrow)) {}
  std::string name() const override { return inner_->name(); }
  std::string configuration() const override { return inner_->configuration(); }
  Capabilities capabilities() const override {
    Capabilities c = inner_->capabilities();
    narrow_(c);
    return c;
  }
  PrecisionModel precision(DType d) const override { return inner_->precision(d); }
  PrecisionModel precision_for(const Problem& p) const override { return inner_->precision_for(p); }
  void forward(const Problem& p, const KernelViews& v) override { inner_->forward(p, v); }
  void backward(const Problem& p, const KernelViews& v) override { inner_->backward(p, v); }
  void decode(const Problem& p, const DecodeViews& v) override { inner_->decode(p, v); }

 private:
  std::unique_ptr<Kernel> inner_;
  std::function<void(Capabilities&)> narrow_;
};

}  // namespace attnv::kernels
