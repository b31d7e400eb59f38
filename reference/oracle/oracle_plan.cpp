#include "reference/oracle/oracle_plan.h"

#include <cmath>
#include <sstream>
#include <string>

#include "problem/error.h"
#include "problem/validate.h"
#include "reference/oracle/oracle_visibility.h"

namespace attnv::reference::oracle_detail {
namespace {

void check_sizes(const Case& c, bool need_dout) {
  const std::vector<std::string> errs = check_shapes(c, need_dout);
  if (errs.empty()) return;
  std::string msg = "oracle: invalid case " + c.id + ": ";
  for (std::size_t n = 0; n < errs.size(); ++n) msg += (n ? "; " : "") + errs[n];
  throw InputError(msg);
}

[[noreturn]] void non_finite(const Case& c, const char* tensor, std::size_t index, double value,
                             const std::string& coords, const std::string& why) {
  std::ostringstream o;
  o << "oracle: " << tensor << coords << " (element " << index << ") is " << value
    << " but is read: " << why;
  if (!c.id.empty()) o << " [case " << c.id << "]";
  throw InputError(o.str());
}

std::string coords(std::initializer_list<std::int64_t> xs) {
  std::string s = "[";
  // Appended piece by piece: GCC 12 warns (-Wrestrict, a known false positive) on "," + to_string(x).
  for (auto it = xs.begin(); it != xs.end(); ++it) {
    if (it != xs.begin()) s += ',';
    s += std::to_string(*it);
  }
  return s + "]";
}

void check_q_row(const Case& c, std::int64_t b, std::int64_t h, std::int64_t i) {
  for (std::int64_t d = 0; d < c.problem.shape.Dk; ++d) {
    const std::size_t at = c.qi(b, h, i, d);
    if (!std::isfinite(c.q[at]))
      non_finite(c, "q", at, c.q[at], coords({b, h, i, d}), "row (b,h,i) has visible keys");
  }
}

void check_kv_row(const Case& c, std::int64_t b, std::int64_t kvh, std::int64_t j) {
  const Shape& s = c.problem.shape;
  for (std::int64_t d = 0; d < s.Dk; ++d) {
    const std::size_t at = c.ki(b, kvh, j, d);
    if (!std::isfinite(c.k[at]))
      non_finite(c, "k", at, c.k[at], coords({b, kvh, j, d}), "key j is visible");
  }
  for (std::int64_t d = 0; d < s.Dv; ++d) {
    const std::size_t at = c.vi(b, kvh, j, d);
    if (!std::isfinite(c.v[at]))
      non_finite(c, "v", at, c.v[at], coords({b, kvh, j, d}), "key j is visible");
  }
}

// Element `at` of the bias named in its own coordinates: [i,j], or [b|0,h|0,i,j] with planes.
std::string bias_coords(const Case& c, std::size_t at) {
  const Shape& s = c.problem.shape;
  const Leading d = c.problem.bias_dims;
  const auto n = static_cast<std::int64_t>(at);
  const std::int64_t i = (n / s.Tk) % s.Tq, j = n % s.Tk, plane = n / (s.Tq * s.Tk);
  if (!d.any()) return coords({i, j});
  const std::int64_t heads = d.heads ? s.Hq : 1;
  return coords({plane / heads, plane % heads, i, j});
}

void check_bias(const Case& c, std::size_t at) {
  // -inf hides the key (visibility), so a visible bias that is not finite is NaN or +inf.
  if (!std::isfinite(c.bias[at]))
    non_finite(c, "bias", at, c.bias[at], bias_coords(c, at), "key j is visible to query i");
}

}  // namespace

ReadPlan plan_reads(const Case& c, bool need_dout) {
  check_sizes(c, need_dout);
  const Shape& s = c.problem.shape;
  ReadPlan plan;
  plan.Hq = s.Hq;
  plan.Hkv = s.Hkv;
  plan.Tq = s.Tq;
  plan.Tk = s.Tk;
  plan.keys.resize(static_cast<std::size_t>(s.B * s.Hq * s.Tq));
  plan.key_read.assign(static_cast<std::size_t>(s.B * s.Hkv * s.Tk), 0);
  plan.bias_read.assign(c.bias.size(), 0);
  const std::int64_t G = c.problem.group();
  for (std::int64_t b = 0; b < s.B; ++b)
    for (std::int64_t h = 0; h < s.Hq; ++h)
      for (std::int64_t i = 0; i < s.Tq; ++i) {
        auto& keys = plan.keys[static_cast<std::size_t>((b * s.Hq + h) * s.Tq + i)];
        keys = oracle_visible_keys(c, b, h, i);
        for (std::int64_t j : keys) {
          plan.key_read[static_cast<std::size_t>((b * s.Hkv + h / G) * s.Tk + j)] = 1;
          if (c.problem.has_bias) plan.bias_read[c.bi(b, h, i, j)] = 1;
        }
      }
  return plan;
}

void check_read_values(const Case& c, const ReadPlan& plan, bool need_dout) {
  const Shape& s = c.problem.shape;
  for (std::int64_t b = 0; b < s.B; ++b)
    for (std::int64_t h = 0; h < s.Hq; ++h)
      for (std::int64_t i = 0; i < s.Tq; ++i)
        if (!plan.visible(b, h, i).empty()) check_q_row(c, b, h, i);
  for (std::int64_t b = 0; b < s.B; ++b)
    for (std::int64_t kvh = 0; kvh < s.Hkv; ++kvh)
      for (std::int64_t j = 0; j < s.Tk; ++j)
        if (plan.key_read[static_cast<std::size_t>((b * s.Hkv + kvh) * s.Tk + j)]) check_kv_row(c, b, kvh, j);
  for (std::size_t at = 0; at < plan.bias_read.size(); ++at)
    if (plan.bias_read[at]) check_bias(c, at);
  if (!need_dout) return;
  for (std::int64_t b = 0; b < s.B; ++b)
    for (std::int64_t h = 0; h < s.Hq; ++h)
      for (std::int64_t i = 0; i < s.Tq; ++i) {
        if (plan.visible(b, h, i).empty()) continue;
        for (std::int64_t d = 0; d < s.Dv; ++d) {
          const std::size_t at = c.oi(b, h, i, d);
          if (!std::isfinite(c.dout[at]))
            non_finite(c, "dout", at, c.dout[at], coords({b, h, i, d}), "row (b,h,i) has visible keys");
        }
      }
}

std::vector<std::int64_t> plan_and_check_row(const Case& c, std::int64_t b, std::int64_t h,
                                             std::int64_t i) {
  check_sizes(c, false);
  const Shape& s = c.problem.shape;
  if (b < 0 || b >= s.B || h < 0 || h >= s.Hq || i < 0 || i >= s.Tq)
    throw InputError("oracle: row (b=" + std::to_string(b) + ", h=" + std::to_string(h) +
                     ", i=" + std::to_string(i) + ") is outside B=" + std::to_string(s.B) +
                     " Hq=" + std::to_string(s.Hq) + " Tq=" + std::to_string(s.Tq));
  std::vector<std::int64_t> keys = oracle_visible_keys(c, b, h, i);
  if (keys.empty()) return keys;
  check_q_row(c, b, h, i);
  const std::int64_t kvh = h / c.problem.group();
  for (std::int64_t j : keys) {
    check_kv_row(c, b, kvh, j);
    if (c.problem.has_bias) check_bias(c, c.bi(b, h, i, j));
  }
  return keys;
}

}  // namespace attnv::reference::oracle_detail
