#pragma once
// The emulated kernels (properties/emulated: every rounding of a declared precision model done
// exactly) put behind attnv::Kernel, so the properties can run on them like on any other
// kernel: the views are read into a Case, emulated::forward/backward runs, the outputs are
// written back through the views.
#include <optional>
#include <string>
#include <vector>

#include "problem/kernel.h"
#include "kernels/emulated/emulated.h"

namespace attnv::kernels {

struct EmulatedOptions {
  emulated::Structure structure = emulated::Structure::naive;
  std::int64_t block = 0;   // tiled key block (0: one block)
  bool p_rounded = false;   // P rounded to the storage dtype (f64: f32) before P.V
  // Stages computed in their own dtype, declared in the precision model (PrecisionModel's
  // dot, score, softmax, pv; unset: the accumulator).
  std::optional<DType> dot, score, softmax, pv;
  emulated::Bugs bugs;
  std::vector<DType> dtypes;  // the storage dtypes it claims; empty: all four
};

class EmulatedKernel : public Kernel {
 public:
  explicit EmulatedKernel(EmulatedOptions opt = {}, std::string name = "");
  std::string name() const override { return name_; }
  Capabilities capabilities() const override;
  PrecisionModel precision(DType storage) const override;
  void forward(const Problem& p, const KernelViews& views) override;
  void backward(const Problem& p, const KernelViews& views) override;

 private:
  emulated::Config config(DType storage) const;
  EmulatedOptions opt_;
  std::string name_;
};

}  // namespace attnv::kernels
