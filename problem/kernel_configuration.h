#pragma once
// Judging a saved failure again only with the code that failed (attnv repro, attnv.repro): the
// kernel's configuration (Kernel::configuration(): the core's ISA path, a plugin's options) is
// recorded with the failure, and another configuration of the same kernel is other code.
#include <optional>
#include <string>

#include "problem/kernel.h"

namespace attnv {

// InputError when `k` is the kernel a failure was recorded with (same_kernel) but runs in another
// configuration than `recorded` (when that names one): judging the failure again with other code
// (another core path, other plugin options) would not say whether it is fixed. Another kernel
// altogether is judged: the output names both. `where` names the folder or case for the message.
void require_same_configuration(const std::optional<std::string>& recorded, bool same_kernel, const Kernel& k,
                                const std::string& where);

}  // namespace attnv
