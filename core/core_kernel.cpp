#include "core/core_kernel.h"

#include "core/workspace.h"
#include "problem/error.h"
#include "problem/validate.h"

namespace attnv::core {

Capabilities CoreKernel::capabilities() const {
  Capabilities c;
  c.dtypes = {DType::f64, DType::f32, DType::f16, DType::bf16};
  c.gqa = c.causal_top_left = c.causal_bottom_right = c.window = c.mask = c.bias = true;
  c.kv_len = c.softcap = c.custom_scale = c.lse = c.strided = true;
  c.backward = false;  // a later step
  return c;
}

PrecisionModel CoreKernel::precision(DType storage) const {
  return PrecisionModel::natural(storage, kKeyBlock);
}

void CoreKernel::forward(const Problem& p, const KernelViews& views) {
  const std::vector<std::string> errors = check_views(p, views);
  if (!errors.empty()) {
    std::string msg = "core forward: invalid call:";
    for (const auto& e : errors) msg += "\n  " + e;
    throw InputError(msg);
  }
  if (!views.out.present()) throw InputError("core forward: no output view");
  core::forward(make_forward_params(p, views), opt_);
}

}  // namespace attnv::core
