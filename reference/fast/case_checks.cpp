#include "reference/fast/case_checks.h"

#include "problem/error.h"
#include "problem/validate.h"

namespace attnv::reference::fast_detail {

void require_readable(const Case& c, bool need_dout) {
  const std::vector<std::string> errs = check_shapes(c, need_dout);
  if (errs.empty()) return;
  std::string msg = "fast reference (" + (c.id.empty() ? describe(c.problem) : c.id) + "): ";
  for (std::size_t n = 0; n < errs.size(); ++n) msg += (n ? "; " : "") + errs[n];
  throw InputError(msg);
}

}  // namespace attnv::reference::fast_detail
