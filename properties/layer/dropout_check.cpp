#include "properties/layer/dropout_check.h"

#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "problem/buffers.h"
#include "properties/layer/dk_from_rows.h"
#include "reference/bound/bound.h"
#include "reference/dropout/dropout_mask.h"
#include "reference/fast/fast.h"
#include "problem/visibility.h"

namespace attnv::layer {
namespace {

// The problem of one query row of one head alone: its visibility is spelled out as a mask
// (problem/visibility.h: kv_len, causal, window, mask, -inf bias; the reference and the bound
// treat a hidden key the same whatever hides it), everything else as in p.
Problem one_row_problem(const Problem& p) {
  Problem sp = p;
  sp.shape.B = sp.shape.Hq = sp.shape.Hkv = sp.shape.Tq = 1;
  sp.scale = p.effective_scale();
  sp.causal = false;
  sp.window = Window{};
  sp.alignment = Alignment::top_left;
  sp.has_mask = true;
  sp.mask_dims = sp.bias_dims = Leading{};  // one row: the row's own plane is spelled out
  sp.has_kv_len = false;
  return sp;
}

// Row (b, h, i)'s visibility (and bias row) into the one-row case's mask (and bias).
void spell_out_row(const Case& c, std::int64_t b, std::int64_t h, std::int64_t i, Case& one) {
  for (std::int64_t j = 0; j < c.problem.shape.Tk; ++j) {
    one.mask[static_cast<std::size_t>(j)] = visible(c, b, h, i, j) ? 1 : 0;
    if (c.problem.has_bias) one.bias[static_cast<std::size_t>(j)] = c.bias[c.bi(b, h, i, j)];
  }
}

void judge(DropoutCheck& r, const char* what, std::int64_t index, double out, double exact, double b, DType dt) {
  ++r.elements;
  const double thr = bound::threshold(out, exact, b, dt);
  const bool ok = bound::accept(out, exact, b, dt);
  double ratio = 0;
  if (!std::isfinite(exact)) ratio = ok ? 0 : std::numeric_limits<double>::infinity();
  else if (!std::isfinite(out)) ratio = std::numeric_limits<double>::infinity();
  else ratio = thr > 0 ? std::abs(out - exact) / thr : (out == exact ? 0 : std::numeric_limits<double>::infinity());
  if (!ok) ++r.failures;
  if (ratio > r.worst_ratio || (!ok && r.failures == 1)) {
    r.worst_ratio = std::max(r.worst_ratio, ratio);
    std::ostringstream o;
    o << what << "[" << index << "] kernel " << out << " exact " << exact << " threshold " << thr;
    r.worst = o.str();
  }
}

}  // namespace

DropoutCheck check_dropout_forward(const Case& c, const Outputs& got, double p, std::uint64_t seed,
                                   const PrecisionModel& m) {
  DropoutCheck r;
  const Shape& s = c.problem.shape;
  const DType dt = c.problem.dtype;
  if (got.out.size() != static_cast<std::size_t>(out_elements(s)) ||
      got.lse.size() != static_cast<std::size_t>(lse_elements(s))) {
    r.failures = 1;
    r.worst = "kernel outputs of the wrong size";
    return r;
  }
  // LSE: the no-dropout one (the normaliser keeps every weight).
  {
    const Outputs exact = reference::fast_forward(c);
    const bound::Bounds b = bound::forward_bound(c, exact, m);
    for (std::size_t x = 0; x < exact.lse.size(); ++x)
      judge(r, "lse", static_cast<std::int64_t>(x), got.lse[x], exact.lse[x], b.lse[x], lse_dtype(dt));
  }
  const double u = unit_roundoff(m.accum), u_r = u + std::ldexp(1.0, -52);
  const double grow = (1 + u_r) * (1 + u);
  const double inv = 1.0 / (1.0 - p);
  // Row (b, h, i) alone (one_row_problem), with V replaced by m_i o V.
  Case one = make_zero_case(one_row_problem(c.problem));
  one.id = c.id + "/dropout_row";
  for (std::int64_t b = 0; b < s.B; ++b)
    for (std::int64_t i = 0; i < s.Tq; ++i) {
      for (std::int64_t h = 0; h < s.Hq; ++h) {
        spell_out_row(c, b, h, i, one);
        const std::int64_t hk = h / c.problem.group();
        for (std::int64_t d = 0; d < s.Dk; ++d) one.q[one.qi(0, 0, 0, d)] = c.q[c.qi(b, h, i, d)];
        for (std::int64_t j = 0; j < s.Tk; ++j) {
          const bool kept = reference::dropout_kept(p, seed, b, h, i, j);
          (kept ? r.kept : r.dropped) += 1;
          for (std::int64_t d = 0; d < s.Dk; ++d) one.k[one.ki(0, 0, j, d)] = c.k[c.ki(b, hk, j, d)];
          for (std::int64_t d = 0; d < s.Dv; ++d)
            one.v[one.vi(0, 0, j, d)] = kept ? c.v[c.vi(b, hk, j, d)] : 0.0;
        }
        const Outputs exact = reference::fast_forward(one);
        const bound::Bounds bb = bound::forward_bound(one, exact, m);
        for (std::int64_t d = 0; d < s.Dv; ++d) {
          const std::size_t at = one.oi(0, 0, 0, d);
          const double o1 = exact.out[at];  // O' correctly rounded
          const double o1_abs = std::abs(o1) * (1 + std::ldexp(1.0, -52));
          // docs/dropout.md: the rescale's roundings, plus this double evaluation of O'/(1-p)
          // (O' rounded, the division rounded: 3 2^-53 relative, one of them counted by accept).
          const double bound = grow * bb.out[at] * inv + (grow - 1) * o1_abs * inv +
                               3 * std::ldexp(1.0, -53) * o1_abs * inv;
          const std::int64_t idx = static_cast<std::int64_t>(c.oi(b, h, i, d));
          judge(r, "out", idx, got.out[static_cast<std::size_t>(idx)], o1 * inv, bound, dt);
        }
      }
    }
  return r;
}

DropoutCheck check_dropout_backward(const Case& c, const Outputs& got, double p, std::uint64_t seed,
                                    const PrecisionModel& m) {
  const double rescale = 1.0 / (1.0 - p);
  int e = 0;
  if (!(p > 0 && p < 1) || std::frexp(rescale, &e) != 0.5)
    throw std::invalid_argument("check_dropout_backward: 1/(1-p) must be a power of two");
  DropoutCheck r;
  const Shape& s = c.problem.shape;
  const DType dt = c.problem.dtype;
  const std::int64_t G = c.problem.group();
  if (!got.dk.empty() && got.dk.size() != static_cast<std::size_t>(k_elements(s))) {
    r.failures = 1;
    r.worst = "kernel dk of the wrong size";
    return r;
  }
  if (got.dq.size() != static_cast<std::size_t>(q_elements(s)) ||
      got.dv.size() != static_cast<std::size_t>(v_elements(s))) {
    r.failures = 1;
    r.worst = "kernel gradients of the wrong size";
    return r;
  }
  // dV: per (batch, KV head, key) a case of that batch and KV head with dO scaled by r m_hij.
  {
    Problem sp = c.problem;
    sp.shape.B = 1;
    sp.shape.Hq = G;
    sp.shape.Hkv = 1;
    Case one = make_zero_case(sp, true);
    one.id = c.id + "/dropout_dv";
    for (std::int64_t b = 0; b < s.B; ++b) {
      if (c.problem.has_kv_len) one.kv_len = {c.kv_len[static_cast<std::size_t>(b)]};
      for (std::int64_t g = 0; g < s.Hkv; ++g) {
        // The mask and bias planes of batch b's query heads g*G .. g*G+G-1.
        for (std::int64_t hh = 0; hh < G; ++hh)
          for (std::int64_t i = 0; i < s.Tq; ++i)
            for (std::int64_t j = 0; j < s.Tk; ++j) {
              if (sp.has_mask) one.mask[one.mi(0, hh, i, j)] = c.mask[c.mi(b, g * G + hh, i, j)];
              if (sp.has_bias) one.bias[one.bi(0, hh, i, j)] = c.bias[c.bi(b, g * G + hh, i, j)];
            }
        for (std::int64_t hh = 0; hh < G; ++hh)
          for (std::int64_t i = 0; i < s.Tq; ++i)
            for (std::int64_t d = 0; d < s.Dk; ++d) one.q[one.qi(0, hh, i, d)] = c.q[c.qi(b, g * G + hh, i, d)];
        for (std::int64_t j = 0; j < s.Tk; ++j) {
          for (std::int64_t d = 0; d < s.Dk; ++d) one.k[one.ki(0, 0, j, d)] = c.k[c.ki(b, g, j, d)];
          for (std::int64_t d = 0; d < s.Dv; ++d) one.v[one.vi(0, 0, j, d)] = c.v[c.vi(b, g, j, d)];
        }
        for (std::int64_t j = 0; j < s.Tk; ++j) {
          for (std::int64_t hh = 0; hh < G; ++hh)
            for (std::int64_t i = 0; i < s.Tq; ++i) {
              const bool kept = reference::dropout_kept(p, seed, b, g * G + hh, i, j);
              for (std::int64_t d = 0; d < s.Dv; ++d)
                one.dout[one.oi(0, hh, i, d)] = kept ? rescale * c.dout[c.oi(b, g * G + hh, i, d)] : 0.0;
            }
          const Outputs exact = reference::fast_backward(one);
          const bound::Bounds bb = bound::backward_bound(one, exact, m);
          for (std::int64_t d = 0; d < s.Dv; ++d) {
            const std::size_t at = one.vi(0, 0, j, d);
            const std::int64_t idx = static_cast<std::int64_t>(c.vi(b, g, j, d));
            judge(r, "dv", idx, got.dv[static_cast<std::size_t>(idx)], exact.dv[at], bb.dv[at], dt);
          }
        }
      }
    }
  }
  // dQ: per row, the one-row case with V <- r m_i o V (visibility spelled out as a mask). The
  // same one-row cases give each row's term of dK (dk_one_row.h); summed over a KV head's rows.
  const bool with_dk = got.dk.size() == static_cast<std::size_t>(k_elements(s));
  DkFromRows dk_sum(s, G, unit_roundoff(m.accum));
  {
    Case one = make_zero_case(one_row_problem(c.problem), true);
    one.id = c.id + "/dropout_dq";
    for (std::int64_t b = 0; b < s.B; ++b)
      for (std::int64_t i = 0; i < s.Tq; ++i) {
        for (std::int64_t h = 0; h < s.Hq; ++h) {
          spell_out_row(c, b, h, i, one);
          const std::int64_t hk = h / G;
          for (std::int64_t d = 0; d < s.Dk; ++d) one.q[one.qi(0, 0, 0, d)] = c.q[c.qi(b, h, i, d)];
          for (std::int64_t d = 0; d < s.Dv; ++d) one.dout[one.oi(0, 0, 0, d)] = c.dout[c.oi(b, h, i, d)];
          for (std::int64_t j = 0; j < s.Tk; ++j) {
            const bool kept = reference::dropout_kept(p, seed, b, h, i, j);
            for (std::int64_t d = 0; d < s.Dk; ++d) one.k[one.ki(0, 0, j, d)] = c.k[c.ki(b, hk, j, d)];
            for (std::int64_t d = 0; d < s.Dv; ++d)
              one.v[one.vi(0, 0, j, d)] = kept ? rescale * c.v[c.vi(b, hk, j, d)] : 0.0;
          }
          const Outputs exact = reference::fast_backward(one);
          const bound::Bounds bb = bound::backward_bound(one, exact, m);
          for (std::int64_t d = 0; d < s.Dk; ++d) {
            const std::size_t at = one.qi(0, 0, 0, d);
            const std::int64_t idx = static_cast<std::int64_t>(c.qi(b, h, i, d));
            judge(r, "dq", idx, got.dq[static_cast<std::size_t>(idx)], exact.dq[at], bb.dq[at], dt);
          }
          if (with_dk) dk_sum.add_row(b, hk, exact.dk, bb.dk);
        }
      }
  }
  if (with_dk)
    for (std::int64_t b = 0; b < s.B; ++b)
      for (std::int64_t g = 0; g < s.Hkv; ++g)
        for (std::int64_t j = 0; j < s.Tk; ++j)
          for (std::int64_t d = 0; d < s.Dk; ++d) {
            const std::int64_t idx = static_cast<std::int64_t>(c.ki(b, g, j, d));
            judge(r, "dk", idx, got.dk[static_cast<std::size_t>(idx)], dk_sum.exact(b, g, j, d), dk_sum.bound(b, g, j, d),
                  dt);
          }
  return r;
}

}  // namespace attnv::layer
