// Backward of the emulated kernels, FlashAttention-2 style (see emulated.h).
#include <cmath>
#include <vector>

#include "problem/error.h"
#include "kernels/emulated/emulated_arith.h"
#include "problem/visibility.h"
#include "util/parallel.h"

namespace attnv::kernels::emulated {

Outputs backward(const Case& c, const Config& cfg) {
  if (!c.has_dout()) throw InputError("emulated backward: the case has no dout");
  const detail::Arith a = detail::arith_of(cfg);
  const Problem& p = c.problem;
  const Shape& s = p.shape;
  const std::int64_t G = p.group();
  Outputs o;
  o.out.assign(static_cast<std::size_t>(out_elements(s)), 0.0);
  o.lse.assign(static_cast<std::size_t>(lse_elements(s)), 0.0);
  o.dq.assign(static_cast<std::size_t>(q_elements(s)), 0.0);
  o.dk.assign(static_cast<std::size_t>(k_elements(s)), 0.0);
  o.dv.assign(static_cast<std::size_t>(v_elements(s)), 0.0);
  const double scale = a.r(cfg.bugs.d_model_scale ? 1 / std::sqrt(8.0 * static_cast<double>(s.Dk))
                                                  : p.effective_scale());
  // One task per (b, KV head): its dK and dV collect from the G*Tq rows of its query heads.
  parallel_for(s.B * s.Hkv, [&](std::int64_t begin, std::int64_t end) {
    std::vector<double> dk_acc, dv_acc, dq_acc(static_cast<std::size_t>(s.Dk));
    for (std::int64_t task = begin; task < end; ++task) {
      const std::int64_t b = task / s.Hkv, hk = task % s.Hkv;
      dk_acc.assign(static_cast<std::size_t>(s.Tk * s.Dk), 0.0);
      dv_acc.assign(static_cast<std::size_t>(s.Tk * s.Dv), 0.0);
      for (std::int64_t h = hk * G; h < (hk + 1) * G; ++h)
        for (std::int64_t i = 0; i < s.Tq; ++i) {
          double* O = o.out.data() + c.oi(b, h, i, 0);
          const double L = detail::forward_row(c, cfg, a, b, h, i, O);  // L kept in accum
          o.lse[c.li(b, h, i)] = a.to_out(L);
          const std::vector<std::int64_t> keys = visible_keys(c, b, h, i);
          if (keys.empty()) continue;  // no visible key: dQ row stays 0
          const double* dO = c.dout.data() + c.oi(b, h, i, 0);
          double D = 0;
          for (std::int64_t d = 0; d < s.Dv; ++d) D = a.add(D, a.mul(dO[d], O[d]));
          std::fill(dq_acc.begin(), dq_acc.end(), 0.0);
          for (const std::int64_t j : keys) {
            const detail::Logit lg = detail::logit(c, cfg, a, b, h, i, j);
            const double P = a.exp(a.sub(lg.t, L));
            double dP = 0;
            for (std::int64_t d = 0; d < s.Dv; ++d)
              dP = a.add(dP, a.mul(dO[d], c.v[c.vi(b, hk, j, d)]));
            double dS = a.mul(P, a.sub(dP, D));
            if (p.softcap) {
              const double cap = a.r(*p.softcap);
              const double th = a.tanh(a.div(lg.s, cap));
              dS = a.mul(dS, a.sub(1.0, a.mul(th, th)));
            }
            const double dSp = a.to_p(dS), Pp = a.to_p(P);
            for (std::int64_t d = 0; d < s.Dk; ++d) {
              const auto dd = static_cast<std::size_t>(d);
              dq_acc[dd] = a.add(dq_acc[dd], a.mul(dSp, c.k[c.ki(b, hk, j, d)]));
              auto& dk = dk_acc[static_cast<std::size_t>(j * s.Dk + d)];
              dk = a.add(dk, a.mul(dSp, c.q[c.qi(b, h, i, d)]));
            }
            for (std::int64_t d = 0; d < s.Dv; ++d) {
              auto& dv = dv_acc[static_cast<std::size_t>(j * s.Dv + d)];
              dv = a.add(dv, a.mul(Pp, dO[d]));
            }
          }
          for (std::int64_t d = 0; d < s.Dk; ++d)
            o.dq[c.qi(b, h, i, d)] = a.to_out(a.mul(dq_acc[static_cast<std::size_t>(d)], scale));
        }
      for (std::int64_t j = 0; j < s.Tk; ++j) {
        for (std::int64_t d = 0; d < s.Dk; ++d) {
          const double acc = dk_acc[static_cast<std::size_t>(j * s.Dk + d)];
          o.dk[c.ki(b, hk, j, d)] = a.to_out(cfg.bugs.dk_missing_scale ? acc : a.mul(acc, scale));
        }
        for (std::int64_t d = 0; d < s.Dv; ++d)
          o.dv[c.vi(b, hk, j, d)] = a.to_out(dv_acc[static_cast<std::size_t>(j * s.Dv + d)]);
      }
    }
  }, 0, 1);
  return o;
}

}  // namespace attnv::kernels::emulated
