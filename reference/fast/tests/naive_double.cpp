#include "reference/fast/tests/naive_double.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "problem/visibility.h"

namespace attnv::reference::test {

Outputs naive_double_forward(const Case& c) {
  const Problem& p = c.problem;
  const Shape& s = p.shape;
  const double scale = p.effective_scale();
  Outputs o;
  o.out.assign(static_cast<std::size_t>(out_elements(s)), 0.0);
  o.lse.assign(static_cast<std::size_t>(lse_elements(s)), 0.0);
  std::vector<double> t;
  for (std::int64_t b = 0; b < s.B; ++b)
    for (std::int64_t h = 0; h < s.Hq; ++h)
      for (std::int64_t i = 0; i < s.Tq; ++i) {
        const std::vector<std::int64_t> keys = visible_keys(c, b, h, i);
        const std::int64_t hk = h / p.group();
        if (keys.empty()) {
          o.lse[c.li(b, h, i)] = -std::numeric_limits<double>::infinity();
          continue;
        }
        t.assign(keys.size(), 0.0);
        double m = -std::numeric_limits<double>::infinity();
        for (std::size_t n = 0; n < keys.size(); ++n) {
          double dot = 0;
          for (std::int64_t d = 0; d < s.Dk; ++d) dot += c.q[c.qi(b, h, i, d)] * c.k[c.ki(b, hk, keys[n], d)];
          double x = scale * dot;
          if (p.softcap) x = *p.softcap * std::tanh(x / *p.softcap);
          if (p.has_bias) x += c.bias[c.bi(b, h, i, keys[n])];
          t[n] = x;
          m = std::max(m, x);
        }
        double sum = 0;
        for (double& x : t) sum += (x = std::exp(x - m));
        o.lse[c.li(b, h, i)] = m + std::log(sum);
        for (std::int64_t d = 0; d < s.Dv; ++d) {
          double acc = 0;
          for (std::size_t n = 0; n < keys.size(); ++n) acc += t[n] * c.v[c.vi(b, hk, keys[n], d)];
          o.out[c.oi(b, h, i, d)] = acc / sum;
        }
      }
  return o;
}

}  // namespace attnv::reference::test
