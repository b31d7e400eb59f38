#pragma once
// The drivers behind each backend (private to the oracle): convert the inputs, run
// oracle_impl.h, round every element with the backend's rounding, and (when asked) say which
// elements the error radius cannot resolve. Included only by the two backend .cpp files.
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "reference/oracle/oracle.h"
#include "reference/oracle/oracle_impl.h"

namespace attnv::reference::oracle_detail {

// Drivers shared by the backends: Real work, then each element rounded with Round. With an
// OracleAccuracy, also each element's radius (rounded up) and whether the interval
// [x - r, x + r] rounds to one double (resolved) or straddles a rounding boundary.
template <class Real, double (*Round)(const Real&)>
std::vector<double> round_all(const std::vector<Real>& xs, const std::vector<Real>* radii,
                              std::vector<double>* radius_out, OracleAccuracy* acc) {
  std::vector<double> r(xs.size());
  for (std::size_t n = 0; n < xs.size(); ++n) r[n] = Round(xs[n]);
  if (!acc || !radii) return r;
  radius_out->resize(xs.size());
  for (std::size_t n = 0; n < xs.size(); ++n) {
    const Real& rad = (*radii)[n];
    const double up = Round(rad);
    (*radius_out)[n] = Real(up) < rad ? std::nextafter(up, std::numeric_limits<double>::infinity()) : up;
    ++acc->elements;
    if (std::isinf(r[n]) || rad == 0) continue;
    const double lo = Round(xs[n] - rad), hi = Round(xs[n] + rad);
    if (std::bit_cast<std::uint64_t>(lo) != std::bit_cast<std::uint64_t>(hi)) ++acc->unresolved;
  }
  return r;
}

template <class Real, double (*Round)(const Real&)>
Outputs rounded(const RealOutputs<Real>& res, bool backward, OracleAccuracy* acc) {
  Outputs o;
  Outputs* rad = acc ? &acc->radius : nullptr;
  if (acc) *acc = OracleAccuracy{};
  auto go = [&](const std::vector<Real>& xs, const std::vector<Real>& rs, std::vector<double>& dst,
                std::vector<double>* rdst) { dst = round_all<Real, Round>(xs, &rs, rdst, acc); };
  go(res.out, res.r_out, o.out, rad ? &rad->out : nullptr);
  go(res.lse, res.r_lse, o.lse, rad ? &rad->lse : nullptr);
  if (backward) {
    go(res.dq, res.r_dq, o.dq, rad ? &rad->dq : nullptr);
    go(res.dk, res.r_dk, o.dk, rad ? &rad->dk : nullptr);
    go(res.dv, res.r_dv, o.dv, rad ? &rad->dv : nullptr);
    if (!res.dsinks.empty()) go(res.dsinks, res.r_dsinks, o.dsinks, rad ? &rad->dsinks : nullptr);
  }
  return o;
}

template <class Real, double (*Round)(const Real&)>
Outputs run_forward(const Case& c, const ReadPlan& plan, OracleAccuracy* acc) {
  const RealInputs<Real> in = to_real_inputs<Real>(c, plan, false);
  return rounded<Real, Round>(forward_all(c, plan, in, 0, acc != nullptr), false, acc);
}

template <class Real, double (*Round)(const Real&)>
Outputs run_backward(const Case& c, const ReadPlan& plan, OracleAccuracy* acc) {
  const RealInputs<Real> in = to_real_inputs<Real>(c, plan, true);
  return rounded<Real, Round>(backward_all(c, plan, in, 0, acc != nullptr), true, acc);
}

// One row: converts only the q row and the visible keys' k, v and bias (packed by key order).
template <class Real, double (*Round)(const Real&)>
OracleRow run_row(const Case& c, std::int64_t b, std::int64_t h, std::int64_t i,
                  const std::vector<std::int64_t>& keys, bool with_radius) {
  const Problem& p = c.problem;
  const Shape& s = p.shape;
  OracleRow row;
  row.out.assign(static_cast<std::size_t>(s.Dv), 0.0);
  if (with_radius) row.out_radius.assign(static_cast<std::size_t>(s.Dv), 0.0);
  if (keys.empty() && !p.has_sinks) {
    row.lse = -std::numeric_limits<double>::infinity();
    return row;
  }
  const std::int64_t kvh = h / p.group();
  const std::size_t nk = keys.size();
  const auto dk = static_cast<std::size_t>(s.Dk), dv = static_cast<std::size_t>(s.Dv);
  std::vector<Real> q(dk), k(nk * dk), v(nk * dv), bias;
  for (std::int64_t d = 0; d < s.Dk; ++d) q[d] = c.q[c.qi(b, h, i, d)];
  for (std::size_t n = 0; n < nk; ++n) {
    for (std::int64_t d = 0; d < s.Dk; ++d) k[n * dk + d] = c.k[c.ki(b, kvh, keys[n], d)];
    for (std::int64_t d = 0; d < s.Dv; ++d) v[n * dv + d] = c.v[c.vi(b, kvh, keys[n], d)];
  }
  if (p.has_bias || p.has_alibi)
    row_additive_terms<Real>(c, b, h, i, keys, [&](std::size_t n) { return Real(c.bias[c.bi(b, h, i, keys[n])]); }, bias);
  warm_up<Real>();
  const RowParams<Real> rp(p, with_radius);
  RowSoftmax<Real> sm;
  const Real sink = p.has_sinks ? Real(c.sinks[static_cast<std::size_t>(h)]) : Real(0);
  row_softmax(
      rp, q.data(), nk, [&](std::size_t n) { return &k[n * dk]; },
      [&](std::size_t n) -> const Real& { return bias[n]; }, p.has_sinks ? &sink : nullptr, sm);
  RealOutputs<Real> res;
  res.out.resize(dv);
  res.lse = {sm.lse};
  if (with_radius) {
    res.r_out.resize(dv);
    res.r_lse = {sm.r_lse};
  }
  row_output(rp, sm, [&](std::size_t n) { return &v[n * dv]; }, res.out.data(),
             with_radius ? res.r_out.data() : nullptr);
  OracleAccuracy acc;
  const Outputs o = rounded<Real, Round>(res, false, with_radius ? &acc : nullptr);
  row.out = o.out;
  row.lse = o.lse[0];
  if (with_radius) {
    row.out_radius = acc.radius.out;
    row.lse_radius = acc.radius.lse[0];
    row.unresolved = acc.unresolved;
  }
  return row;
}

}  // namespace attnv::reference::oracle_detail
