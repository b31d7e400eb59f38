#include "problem/problem.h"

#include <cmath>
#include <sstream>
#include <utility>

#include "problem/error.h"
#include "problem/precision.h"
#include "problem/features/registry.h"

namespace attnv {

std::string_view alignment_name(Alignment a) {
  return a == Alignment::top_left ? "top_left" : "bottom_right";
}

std::optional<Alignment> parse_alignment(std::string_view s) {
  if (s == "top_left") return Alignment::top_left;
  if (s == "bottom_right") return Alignment::bottom_right;
  return std::nullopt;
}

double Problem::effective_scale() const {
  // The contract's default (docs/semantics.md, "The default scale"): sqrt, then the division, in
  // double; not always the double nearest to 1/sqrt(Dk).
  return scale ? *scale : 1.0 / std::sqrt(static_cast<double>(shape.Dk));
}

std::int64_t q_elements(const Shape& s) { return s.B * s.Hq * s.Tq * s.Dk; }
std::int64_t k_elements(const Shape& s) { return s.B * s.Hkv * s.Tk * s.Dk; }
std::int64_t v_elements(const Shape& s) { return s.B * s.Hkv * s.Tk * s.Dv; }
std::int64_t out_elements(const Shape& s) { return s.B * s.Hq * s.Tq * s.Dv; }
std::int64_t lse_elements(const Shape& s) { return s.B * s.Hq * s.Tq; }
std::array<std::int64_t, 4> broadcast_extents(const Shape& s, Leading d) {
  return {d.batch ? s.B : 1, d.heads ? s.Hq : 1, s.Tq, s.Tk};
}
std::int64_t mask_elements(const Problem& p) {
  const auto e = broadcast_extents(p.shape, p.mask_dims);
  return e[0] * e[1] * e[2] * e[3];
}
std::int64_t bias_elements(const Problem& p) {
  const auto e = broadcast_extents(p.shape, p.bias_dims);
  return e[0] * e[1] * e[2] * e[3];
}

namespace {
// " [B,Hq,Tq,Tk]"-style suffix naming a mask's or bias's own leading extents; "" for [Tq,Tk].
std::string leading_suffix(Leading d) {
  if (!d.any()) return "";
  return std::string("[") + (d.batch ? "B" : "1") + "," + (d.heads ? "Hq" : "1") + "]";
}
}  // namespace

std::string describe(const Problem& p) {
  const Shape& s = p.shape;
  std::ostringstream o;
  o << "B=" << s.B << " Hq=" << s.Hq << " Hkv=" << s.Hkv << " Tq=" << s.Tq << " Tk=" << s.Tk
    << " Dk=" << s.Dk << " Dv=" << s.Dv << ' ' << dtype_name(p.dtype);
  if (p.scale) o << " scale=" << *p.scale;
  if (p.softcap) o << " softcap=" << *p.softcap;
  if (p.causal) o << " causal";
  // Said wherever the alignment decides something: the causal rule, a window, ALiBi's distances.
  if (p.causal || p.window.bounded() || p.has_alibi) o << '(' << alignment_name(p.alignment) << ')';
  if (p.window.bounded()) o << " window(" << p.window.left << ',' << p.window.right << ')';
  if (p.has_mask) o << " mask" << leading_suffix(p.mask_dims);
  if (p.has_bias) o << " bias" << leading_suffix(p.bias_dims);
  if (p.has_kv_len) o << " kv_len";
  for (const ProblemOption& opt : kProblemOptions) {
    const std::int64_t value = opt.get(p);
    if (opt.word.empty() || value == 0) continue;
    o << ' ' << opt.word;
    if (opt.kind == ProblemOption::Kind::count) o << '(' << value << ')';
  }
  return o.str();
}

PrecisionModel PrecisionModel::natural(DType storage, std::int64_t block) {
  PrecisionModel m;
  m.storage = storage;
  m.accum = storage == DType::f64 ? DType::f64 : DType::f32;
  m.p_dtype = m.accum;
  m.out = storage;
  m.block = block;
  return m;
}

bool PrecisionModel::staged() const {
  return dot_dtype() != accum || score_dtype() != accum || softmax_dtype() != accum ||
         pv_dtype() != accum;
}

PrecisionModel PrecisionModel::unstaged() const {
  PrecisionModel m = *this;
  bool f16 = accum == DType::f16, bf16 = accum == DType::bf16;
  for (DType t : {dot_dtype(), score_dtype(), softmax_dtype(), pv_dtype()}) {
    f16 = f16 || t == DType::f16;
    bf16 = bf16 || t == DType::bf16;
    if (mantissa_bits(t) < mantissa_bits(m.accum)) m.accum = t;
  }
  // bf16 has the fewer bits, f16 the narrower range (its underflow and overflow): neither
  // covers the other.
  if (f16 && bf16)
    throw InputError("precision model " + describe(*this) +
                     ": stages in both f16 and bf16 have no one-dtype model that covers them");
  m.dot = m.score = m.softmax = m.pv = std::nullopt;
  return m;
}

std::string describe(const PrecisionModel& m) {
  std::ostringstream o;
  o << "storage=" << dtype_name(m.storage) << " accum=" << dtype_name(m.accum)
    << " p=" << dtype_name(m.p_dtype) << " out=" << dtype_name(m.out);
  if (m.block > 0) o << " block=" << m.block; else o << " single-pass";
  if (m.exp_ulps != 2) o << " exp_ulps=" << m.exp_ulps;
  // Only the stages that differ from accum.
  const std::pair<const char*, DType> stages[] = {{"dot", m.dot_dtype()},
                                                  {"score", m.score_dtype()},
                                                  {"softmax", m.softmax_dtype()},
                                                  {"pv", m.pv_dtype()}};
  for (const auto& [name, t] : stages)
    if (t != m.accum) o << ' ' << name << '=' << dtype_name(t);
  if (m.flush_subnormals) o << " ftz+daz";
  return o.str();
}

}  // namespace attnv
