#include "reference/fast/case_checks.h"

#include <sstream>

#include "problem/error.h"
#include "problem/validate.h"

namespace attnv::ref::fast_detail {
namespace {

void require_size(const Case& c, const char* name, std::size_t got, std::int64_t want) {
  if (got == static_cast<std::size_t>(want)) return;
  std::ostringstream msg;
  msg << "fast reference (" << (c.id.empty() ? describe(c.problem) : c.id) << "): tensor " << name
      << " has " << got << " elements, the problem needs " << want;
  throw InputError(msg.str());
}

}  // namespace

void require_readable(const Case& c, bool need_dout) {
  require_valid(c.problem);
  const Shape& s = c.problem.shape;
  require_size(c, "q", c.q.size(), q_elements(s));
  require_size(c, "k", c.k.size(), k_elements(s));
  require_size(c, "v", c.v.size(), v_elements(s));
  if (c.problem.has_mask) require_size(c, "mask", c.mask.size(), mask_elements(s));
  if (c.problem.has_bias) require_size(c, "bias", c.bias.size(), mask_elements(s));
  if (c.problem.has_kv_len) {
    require_size(c, "kv_len", c.kv_len.size(), s.B);
    for (std::int64_t b = 0; b < s.B; ++b) {
      const std::int64_t len = c.kv_len[static_cast<std::size_t>(b)];
      if (len < 0 || len > s.Tk) {
        std::ostringstream msg;
        msg << "fast reference: kv_len[" << b << "] = " << len << " is outside [0, Tk=" << s.Tk << "]";
        throw InputError(msg.str());
      }
    }
  }
  if (need_dout) {
    if (!c.has_dout()) throw InputError("fast reference: the backward needs dout, the case has none");
    require_size(c, "dout", c.dout.size(), out_elements(s));
  }
}

}  // namespace attnv::ref::fast_detail
