#include <bit>
#include <cmath>
#include <cstdint>

#include "problem/error.h"
#include "kernels/emulated/emulated_arith.h"

namespace attnv::kernels::emulated::detail {

double Arith::exp_in(DType t, double x) const {
  const double e = std::exp(x);
  if (!sloppy_exp) return in(t, e);
  // A sloppy exp: 1e-3 relative error whose sign depends on the argument's bits. A constant
  // factor would cancel in the normalisation; a varying one is what a poor polynomial does.
  std::uint64_t h = std::bit_cast<std::uint64_t>(x);
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  const double sign = (h & 1) ? 1.0 : -1.0;
  return in(t, e * (1 + 1e-3 * sign));
}

Arith arith_of(const Config& cfg) {
  const PrecisionModel& m = cfg.model;
  if (mantissa_bits(m.accum) < mantissa_bits(m.storage) || m.accum == DType::f16 ||
      m.accum == DType::bf16)
    throw InputError("emulated kernel: accumulator " + std::string(dtype_name(m.accum)) +
                     " is not emulated for storage " + std::string(dtype_name(m.storage)) +
                     " (use f32 or f64 accumulation, at least as wide as the storage)");
  Arith a;
  a.acc = m.accum;
  a.dot = m.dot_dtype();
  a.score = m.score_dtype();
  a.sm = m.softmax_dtype();
  a.pv = m.pv_dtype();
  a.pv_acc = cfg.bugs.pv_accum_f16 ? DType::f16 : m.pv_dtype();
  a.p = m.p_dtype;
  a.out = m.out;
  a.sloppy_exp = cfg.bugs.sloppy_exp;
  a.truncate_output = cfg.bugs.truncate_output;
  return a;
}

Logit logit(const Case& c, const Config& cfg, const Arith& a, std::int64_t b, std::int64_t h,
            std::int64_t i, std::int64_t j) {
  const Problem& p = c.problem;
  const Shape& s = p.shape;
  const std::int64_t hk = h / p.group();
  double dot = 0;
  for (std::int64_t d = 0; d < s.Dk; ++d)
    dot = Arith::in(a.dot, dot + Arith::in(a.dot, c.q[c.qi(b, h, i, d)] * c.k[c.ki(b, hk, j, d)]));
  const double scale = cfg.bugs.d_model_scale ? 1 / std::sqrt(8.0 * static_cast<double>(s.Dk))
                                              : p.effective_scale();
  // The score steps in the score dtype, then the logit enters the softmax's dtype.
  const DType st = a.score;
  Logit l;
  l.s = Arith::in(st, Arith::in(st, dot) * Arith::in(st, scale));
  l.t = l.s;
  if (p.softcap) {
    const double cap = Arith::in(st, *p.softcap);
    l.t = Arith::in(st, cap * Arith::in(st, std::tanh(Arith::in(st, l.s / cap))));
  }
  if (p.has_bias) l.t = Arith::in(st, l.t + c.bias[c.bi(b, h, i, j)]);
  l.t = Arith::in(a.sm, l.t);
  return l;
}

}  // namespace attnv::kernels::emulated::detail
