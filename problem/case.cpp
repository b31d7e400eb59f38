#include "problem/case.h"

#include "problem/features/registry.h"
#include "problem/tensor.h"

namespace attnv {

Case make_zero_case(const Problem& p, bool with_dout) {
  Case c;
  c.problem = p;
  const Shape& s = p.shape;
  c.q.assign(static_cast<std::size_t>(q_elements(s)), 0.0);
  c.k.assign(static_cast<std::size_t>(k_elements(s)), 0.0);
  c.v.assign(static_cast<std::size_t>(v_elements(s)), 0.0);
  if (p.has_mask) c.mask.assign(static_cast<std::size_t>(mask_elements(p)), 1);
  if (p.has_bias) c.bias.assign(static_cast<std::size_t>(bias_elements(p)), 0.0);
  for (const HeadInput& in : kHeadInputs)
    if (p.*in.present) (c.*in.values).assign(static_cast<std::size_t>(s.Hq), 0.0);
  for (const IndexInput& in : kIndexInputs) in.fill_zero(p, c.*in.values);
  if (with_dout) c.dout.assign(static_cast<std::size_t>(out_elements(s)), 0.0);
  return c;
}

void round_to_storage(Case& c) {
  const DType t = c.problem.dtype;
  for (auto* vec : {&c.q, &c.k, &c.v, &c.bias, &c.dout})
    for (double& x : *vec) x = round_to(t, x);
  for (const HeadInput& in : kHeadInputs)
    for (double& x : c.*in.values) x = round_to(t, x);
}

std::array<std::int64_t, 4> dense_strides(const std::array<std::int64_t, 4>& shape, int rank) {
  std::array<std::int64_t, 4> st{};
  std::int64_t acc = 1;
  for (int d = rank - 1; d >= 0; --d) {
    st[static_cast<std::size_t>(d)] = acc;
    acc *= shape[static_cast<std::size_t>(d)];
  }
  return st;
}

}  // namespace attnv
