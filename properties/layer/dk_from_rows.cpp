#include "properties/layer/dk_from_rows.h"

#include <algorithm>
#include <cmath>

#include "reference/bound/logit_error.h"

namespace attnv::layer {

DkFromRows::DkFromRows(const Shape& s, std::int64_t G, double u)
    : s_(s),
      g3_(bound::detail::gamma(3, u)),
      gN_(bound::detail::gamma(static_cast<double>(G * s.Tq + 2), u)),
      rho_((1 + gN_) / (1 + g3_)),
      sum_slack_(1 + 4 * static_cast<double>(G * s.Tq + 4) * std::ldexp(1.0, -53)) {
  const std::size_t n = static_cast<std::size_t>(s.B * s.Hkv * s.Tk * s.Dk);
  sum_.assign(n, 0.0);
  comp_.assign(n, 0.0);
  bound_.assign(n, 0.0);
}

std::size_t DkFromRows::at(std::int64_t b, std::int64_t g, std::int64_t j, std::int64_t d) const {
  return static_cast<std::size_t>(((b * s_.Hkv + g) * s_.Tk + j) * s_.Dk + d);
}

void DkFromRows::add_row(std::int64_t b, std::int64_t g, const std::vector<double>& exact_dk,
                         const std::vector<double>& bound_dk) {
  const double keep = 1 - std::ldexp(1.0, -48);
  for (std::int64_t j = 0; j < s_.Tk; ++j)
    for (std::int64_t d = 0; d < s_.Dk; ++d) {
      const std::size_t one = static_cast<std::size_t>(j * s_.Dk + d), full = at(b, g, j, d);
      const double t = exact_dk[one], a = std::abs(t);
      // Neumaier's compensated sum: the exact dK to about 2^-53 relative whatever cancels.
      const double sum = sum_[full] + t;
      comp_[full] += std::abs(sum_[full]) >= a ? (sum_[full] - sum) + t : (t - sum) + sum_[full];
      sum_[full] = sum;
      bound_[full] += rho_ * std::max(0.0, bound_dk[one] - g3_ * a * keep) + gN_ * a;
    }
}

double DkFromRows::exact(std::int64_t b, std::int64_t g, std::int64_t j, std::int64_t d) const {
  const std::size_t i = at(b, g, j, d);
  return sum_[i] + comp_[i];
}

double DkFromRows::bound(std::int64_t b, std::int64_t g, std::int64_t j, std::int64_t d) const {
  return bound_[at(b, g, j, d)] * sum_slack_;
}

}  // namespace attnv::layer
