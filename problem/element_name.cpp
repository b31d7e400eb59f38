#include "problem/element_name.h"

#include <cstring>
#include <sstream>

namespace attnv {

std::string element_name(const Case& c, const std::string& tensor, std::size_t index) {
  const Shape& s = c.problem.shape;
  std::int64_t n = static_cast<std::int64_t>(index);
  std::ostringstream o;
  o << tensor << '[';
  if (tensor == "lse") {
    o << "b=" << n / (s.Hq * s.Tq) << ",h=" << (n / s.Tq) % s.Hq << ",i=" << n % s.Tq;
  } else if (tensor == "dsinks") {
    o << "h=" << n;
  } else {
    const bool kv = tensor == "dk" || tensor == "dv";
    const std::int64_t H = kv ? s.Hkv : s.Hq, T = kv ? s.Tk : s.Tq;
    const std::int64_t D = (tensor == "dq" || tensor == "dk") ? s.Dk : s.Dv;
    o << "b=" << n / (H * T * D) << ",h=" << (n / (T * D)) % H << (kv ? ",j=" : ",i=") << (n / D) % T << ",d=" << n % D;
  }
  o << ']';
  return o.str();
}

namespace {
bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }
}  // namespace

std::string bitwise_difference(const Case& c, const std::string& tensor, const std::vector<double>& a,
                               const std::vector<double>& b, const std::vector<bool>* which, ZeroSign zeros) {
  if (a.size() != b.size()) return tensor + ": sizes differ";
  for (std::size_t n = 0; n < a.size(); ++n) {
    if (which && !(*which)[n]) continue;
    if (!same_bits(a[n], b[n]) && !(zeros == ZeroSign::same && a[n] == 0 && b[n] == 0)) {
      std::ostringstream o;
      o.precision(17);
      o << element_name(c, tensor, n) << " was " << a[n] << ", now " << b[n];
      return o.str();
    }
  }
  return "";
}

}  // namespace attnv
