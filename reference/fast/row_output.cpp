#include "reference/fast/row_output.h"

#include <cmath>

namespace attnv::reference::fast_detail {

void write_row_output(const RowContext& ctx, std::int64_t b, std::int64_t h, std::int64_t i,
                      const RowWeights& w, Accumulators& acc, ElementSink& sink) {
  const Case& c = *ctx.c;
  const std::int64_t Dv = c.problem.shape.Dv;
  const std::int64_t hk = h / c.problem.group();
  sink.put(&Outputs::lse, c.li(b, h, i),
           {dd::to_double(w.lse), dd::decides_rounding(w.lse, w.lse_radius), w.lse_radius});
  const std::size_t o0 = c.oi(b, h, i, 0);
  if (w.keys.empty()) {  // SPEC: O = 0, exactly
    for (std::int64_t d = 0; d < Dv; ++d) sink.put(&Outputs::out, o0 + static_cast<std::size_t>(d), {0.0, true, 0.0});
    return;
  }
  // Radius of O_d: sum_j p_err_j |v_jd| (the weights' errors, accumulated as err) plus the
  // accumulation's own error (finish()).
  acc.reset(static_cast<std::size_t>(Dv));
  for (std::size_t jj = 0; jj < w.keys.size(); ++jj)
    ctx.kernels->axpy(w.p[jj], w.p_err[jj], c.v.data() + c.vi(b, hk, w.keys[jj], 0), Dv,
                      acc.hi.data(), acc.lo.data(), acc.abs.data(), acc.live.data(), acc.err.data());
  const auto n = static_cast<std::int64_t>(w.keys.size());
  for (std::int64_t d = 0; d < Dv; ++d) {
    const auto e = static_cast<std::size_t>(d);
    if (!acc.finite(e)) {
      for (const std::int64_t j : w.keys) {
        const std::size_t v0 = c.vi(b, hk, j, 0);
        for (std::int64_t d2 = 0; d2 < Dv; ++d2)
          if (!std::isfinite(c.v[v0 + static_cast<std::size_t>(d2)]))
            throw_non_finite("v", c, c.v, v0, Dv, b, hk, j, "a value row visible to some query");
      }
      throw_non_finite("v", c, c.v, c.vi(b, hk, w.keys[0], 0), Dv, b, hk, w.keys[0],
                       "weighted sum of the visible values of query " + std::to_string(i));
    }
    sink.put(&Outputs::out, o0 + e, finish(acc, e, n, 1.0));
  }
}

}  // namespace attnv::reference::fast_detail
