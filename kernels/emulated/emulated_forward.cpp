// Forward of the emulated kernels: naive two-pass and tiled online softmax (see emulated.h).
#include <algorithm>
#include <cmath>
#include <limits>

#include "problem/error.h"
#include "kernels/emulated/emulated_arith.h"
#include "problem/visibility.h"
#include "util/parallel.h"

namespace attnv::kernels::emulated {
namespace detail {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

double naive_row(const Case& c, const Config& cfg, const Arith& a, std::int64_t b,
                 std::int64_t h, std::int64_t i, const std::vector<std::int64_t>& keys,
                 std::vector<double>& acc) {
  const Shape& s = c.problem.shape;
  const std::int64_t hk = h / c.problem.group();
  std::vector<double> t(keys.size());
  double m = kNegInf;
  for (std::size_t jj = 0; jj < keys.size(); ++jj) {
    t[jj] = logit(c, cfg, a, b, h, i, keys[jj]).t;
    m = std::max(m, t[jj]);
  }
  const DType sm = a.sm;
  double l = 0;
  for (std::size_t jj = 0; jj < keys.size(); ++jj) {
    t[jj] = a.exp_in(sm, Arith::in(sm, t[jj] - m));  // reuse: now the unnormalised weight
    l = Arith::in(sm, l + t[jj]);
  }
  for (std::size_t jj = 0; jj < keys.size(); ++jj) {
    const double pj = a.to_p(Arith::in(sm, t[jj] / l));
    for (std::int64_t d = 0; d < s.Dv; ++d) {
      const double prod = Arith::in(a.pv, Arith::in(a.pv, pj) * Arith::in(a.pv, c.v[c.vi(b, hk, keys[jj], d)]));
      acc[static_cast<std::size_t>(d)] = round_to(a.pv_acc, acc[static_cast<std::size_t>(d)] + prod);
    }
  }
  return Arith::in(sm, m + Arith::in(sm, std::log(l)));
}

double tiled_row(const Case& c, const Config& cfg, const Arith& a, std::int64_t b,
                 std::int64_t h, std::int64_t i, const std::vector<std::int64_t>& keys,
                 std::vector<double>& acc) {
  const Shape& s = c.problem.shape;
  const std::int64_t hk = h / c.problem.group();
  const std::int64_t block = cfg.model.block > 0 ? cfg.model.block : s.Tk;
  double m = kNegInf, l = 0;
  std::vector<double> t;
  std::size_t next = 0;  // first visible key not yet consumed
  for (std::int64_t j0 = 0; j0 < s.Tk; j0 += block) {
    t.clear();
    const std::size_t first = next;
    while (next < keys.size() && keys[next] < j0 + block) {
      t.push_back(logit(c, cfg, a, b, h, i, keys[next]).t);
      ++next;
    }
    if (t.empty()) continue;  // a fully hidden block is skipped, as FlashAttention does
    const DType sm = a.sm;
    const double m_new = std::max(m, *std::max_element(t.begin(), t.end()));
    if (m_new > m && m != kNegInf) {
      const double alpha = a.exp_in(sm, Arith::in(sm, m - m_new));
      l = Arith::in(sm, alpha * l);
      for (double& x : acc) x = round_to(a.pv_acc, Arith::in(a.pv, alpha) * x);
    }
    m = m_new;
    for (std::size_t jj = 0; jj < t.size(); ++jj) {
      const double e = a.exp_in(sm, Arith::in(sm, t[jj] - m));
      l = Arith::in(sm, l + e);
      const double pj = a.to_p(e);
      for (std::int64_t d = 0; d < s.Dv; ++d) {
        const double prod =
            Arith::in(a.pv, Arith::in(a.pv, pj) * Arith::in(a.pv, c.v[c.vi(b, hk, keys[first + jj], d)]));
        acc[static_cast<std::size_t>(d)] = round_to(a.pv_acc, acc[static_cast<std::size_t>(d)] + prod);
      }
    }
  }
  for (double& x : acc) x = Arith::in(a.pv, x / l);
  return Arith::in(a.sm, m + Arith::in(a.sm, std::log(l)));
}

}  // namespace

double forward_row(const Case& c, const Config& cfg, const Arith& a, std::int64_t b,
                   std::int64_t h, std::int64_t i, double* out_row) {
  const Shape& s = c.problem.shape;
  const std::vector<std::int64_t> keys = visible_keys(c, b, h, i);
  if (keys.empty()) {  // SPEC: a row with no visible key gives O = 0, L = -inf
    std::fill(out_row, out_row + s.Dv, 0.0);
    return kNegInf;
  }
  std::vector<double> acc(static_cast<std::size_t>(s.Dv), 0.0);
  const double lse = cfg.structure == Structure::naive ? naive_row(c, cfg, a, b, h, i, keys, acc)
                                                       : tiled_row(c, cfg, a, b, h, i, keys, acc);
  for (std::int64_t d = 0; d < s.Dv; ++d) out_row[d] = a.to_out(acc[static_cast<std::size_t>(d)]);
  return lse;
}

}  // namespace detail

Outputs forward(const Case& c, const Config& cfg) {
  const detail::Arith a = detail::arith_of(cfg);
  const Shape& s = c.problem.shape;
  Outputs o;
  o.out.assign(static_cast<std::size_t>(out_elements(s)), 0.0);
  o.lse.assign(static_cast<std::size_t>(lse_elements(s)), 0.0);
  parallel_for(s.B * s.Hq * s.Tq, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t row = begin; row < end; ++row) {
      const std::int64_t i = row % s.Tq, h = (row / s.Tq) % s.Hq, b = row / (s.Tq * s.Hq);
      const double lse = detail::forward_row(c, cfg, a, b, h, i, o.out.data() + c.oi(b, h, i, 0));
      o.lse[c.li(b, h, i)] = a.to_out(lse);
    }
  }, 0, 8);
  return o;
}

}  // namespace attnv::kernels::emulated
