#include "kernels/emulated_kernel.h"

#include "problem/buffers.h"

namespace attnv::kernels {

EmulatedKernel::EmulatedKernel(EmulatedOptions opt, std::string name) : opt_(opt), name_(std::move(name)) {
  if (name_.empty()) {
    name_ = opt_.structure == emulated::Structure::naive ? "emulated_naive" : "emulated_tiled" + std::to_string(opt_.block);
    if (opt_.p_rounded) name_ += "_p_rounded";
  }
}

Capabilities EmulatedKernel::capabilities() const {
  Capabilities c;
  c.dtypes = opt_.dtypes.empty() ? std::vector<DType>{DType::f64, DType::f32, DType::f16, DType::bf16} : opt_.dtypes;
  c.gqa = c.causal_top_left = c.causal_bottom_right = c.window = c.mask = c.bias = c.kv_len = true;
  c.softcap = c.custom_scale = c.lse = c.backward = c.strided = c.hidden_nonfinite = true;
  return c;
}

PrecisionModel EmulatedKernel::precision(DType storage) const {
  PrecisionModel m = PrecisionModel::natural(storage, opt_.structure == emulated::Structure::tiled ? opt_.block : 0);
  if (opt_.p_rounded) m.p_dtype = storage == DType::f64 ? DType::f32 : storage;
  m.dot = opt_.dot;
  m.score = opt_.score;
  m.softmax = opt_.softmax;
  m.pv = opt_.pv;
  return m;
}

emulated::Config EmulatedKernel::config(DType storage) const {
  emulated::Config c;
  c.model = precision(storage);
  c.structure = opt_.structure;
  c.bugs = opt_.bugs;
  return c;
}

void EmulatedKernel::forward(const Problem& p, const KernelViews& views) {
  write_outputs(emulated::forward(case_from_views(p, views), config(p.dtype)), p, views);
}

void EmulatedKernel::backward(const Problem& p, const KernelViews& views) {
  // The emulated backward recomputes its own forward. O and L are inputs of a backward call
  // (the plugin worker maps them read-only): only the gradients are written back.
  Outputs o = emulated::backward(case_from_views(p, views), config(p.dtype));
  o.out.clear();
  o.lse.clear();
  write_outputs(o, p, views);
}

}  // namespace attnv::kernels
