#include "core_test_util.h"

#include <cmath>
#include <cstring>

#include "gen/rng.h"
#include "reference/bound/bound.h"
#include "reference/fast/fast.h"

namespace attnv::core::testing {

::testing::AssertionResult forward_within_bound(Kernel& k, const Case& c, Layout layout,
                                                Outputs* outputs) {
  CaseBuffers buf(c, layout, false);
  k.forward(c.problem, buf.views());
  const Outputs got = buf.outputs();
  if (!buf.inputs_unchanged())
    return ::testing::AssertionFailure() << c.id << ": the kernel wrote into its inputs";
  const Outputs exact = reference::fast_forward(c);
  const PrecisionModel model = k.precision(c.problem.dtype);
  const bound::Bounds bounds = bound::forward_bound(c, exact, model);
  const bound::Comparison cmp = bound::compare(got, exact, bounds, model.out);
  if (!cmp.ok())
    return ::testing::AssertionFailure()
           << c.id << " [" << layout_name(layout) << "] " << describe(c.problem) << "\n"
           << cmp.summary();
  // Fully masked rows (exact LSE = -inf): exactly O = +-0 and LSE = -inf (compare() requires
  // this too; checked here directly so the rule does not depend on the bound library).
  const std::int64_t dv = c.problem.shape.Dv;
  for (std::size_t r = 0; r < exact.lse.size(); ++r) {
    if (!std::isinf(exact.lse[r])) continue;
    if (!(std::isinf(got.lse[r]) && got.lse[r] < 0))
      return ::testing::AssertionFailure() << c.id << ": masked row " << r << " LSE " << got.lse[r];
    for (std::int64_t d = 0; d < dv; ++d)
      if (got.out[r * dv + d] != 0)
        return ::testing::AssertionFailure() << c.id << ": masked row " << r << " O != 0";
  }
  if (outputs) *outputs = got;
  return ::testing::AssertionSuccess();
}

Problem make_problem(std::int64_t tq, std::int64_t tk, DType t) {
  Problem p;
  p.shape = Shape{1, 2, 1, tq, tk, 16, 16};
  p.dtype = t;
  return p;
}

Problem feature_variant(int variant, std::int64_t tq, std::int64_t tk, std::int64_t dv, DType t) {
  Problem p = make_problem(tq, tk, t);
  p.shape.B = 2;
  p.shape.Hq = 4;
  p.shape.Hkv = variant % 2 == 0 ? 2 : 1;  // GQA, MQA
  p.shape.Dk = 24;
  p.shape.Dv = dv;
  switch (variant) {
    case 0: p.causal = true; break;
    case 1: p.causal = true; p.alignment = Alignment::bottom_right; break;
    case 2: p.window = {20, 5}; break;
    case 3: p.window = {10, 0}; p.alignment = Alignment::bottom_right; p.has_kv_len = true; break;
    case 4: p.has_mask = true; break;
    case 5: p.has_bias = true; p.softcap = 3.0; break;
    case 6: p.has_kv_len = true; p.scale = 0.7; break;
    case 7: p.softcap = 1.5; p.causal = true; break;
    default: p.has_mask = true; p.has_bias = true; p.causal = true; break;
  }
  return p;
}

Case random_case(const Problem& p, std::uint64_t seed) {
  gen::Rng rng(seed);
  Case c = make_zero_case(p, false);
  for (double& x : c.q) x = rng.normal();
  for (double& x : c.k) x = rng.normal();
  for (double& x : c.v) x = rng.normal();
  for (auto& m : c.mask) m = rng.bernoulli(0.8) ? 1 : 0;
  for (double& b : c.bias) b = rng.bernoulli(0.05) ? -INFINITY : 0.5 * rng.normal();
  for (auto& l : c.kv_len) l = static_cast<std::int64_t>(rng.uniform() * double(p.shape.Tk + 1));
  round_to_storage(c);
  c.id = "random/" + std::to_string(seed);
  return c;
}

namespace {
bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}
}  // namespace

Case with_dout(Case c, std::uint64_t seed) {
  gen::Rng rng(seed ^ 0x9e3779b97f4a7c15ULL);
  c.dout.assign(static_cast<std::size_t>(out_elements(c.problem.shape)), 0);
  for (double& x : c.dout) x = rng.normal();
  round_to_storage(c);
  return c;
}

std::vector<Isa> runnable_isas() {
  std::vector<Isa> v;
  for (Isa i : {Isa::portable, Isa::avx2, Isa::avx512})
    if (missing_features(i, cpu_features()).empty()) v.push_back(i);
  return v;
}

std::vector<Isa> runnable_isas(DType storage) {
  std::vector<Isa> v = runnable_isas();
  if (storage == DType::bf16 && missing_features(Isa::avx512_bf16, cpu_features()).empty())
    v.push_back(Isa::avx512_bf16);
  return v;
}

bool same_gradients(const Outputs& a, const Outputs& b) {
  return same_bits(a.dq, b.dq) && same_bits(a.dk, b.dk) && same_bits(a.dv, b.dv);
}

bool bitwise_equal(const Outputs& a, const Outputs& b) {
  return same_bits(a.out, b.out) && same_bits(a.lse, b.lse);
}

}  // namespace attnv::core::testing
