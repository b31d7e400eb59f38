#include "problem/kernel_configuration.h"

#include "problem/error.h"

namespace attnv {

void require_same_configuration(const std::optional<std::string>& recorded, bool same_kernel, const Kernel& k,
                                const std::string& where) {
  if (!same_kernel || !recorded || *recorded == k.configuration()) return;
  const auto named = [](const std::string& c) { return c.empty() ? std::string("none") : "'" + c + "'"; };
  throw InputError(where + ": the failure was recorded with kernel configuration " + named(*recorded) + ", and this run's " +
                   k.name() + " has " + named(k.configuration()) +
                   ": other code is another kernel, whose verdict would not say whether this failure is fixed; run "
                   "attnv repro again " +
                   (recorded->empty() ? std::string("without --kernel-option flags, in the setting the failure was recorded in")
                                      : "with " + *recorded));
}

}  // namespace attnv
