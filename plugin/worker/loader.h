#pragma once
// Loads a plugin in this process (the worker): dlopen + dlsym(ATTNV_ENTRY_SYMBOL), the version
// and size checks, the options (set_option, ABI version 2), then the declaration checks of
// abi_convert.h. Never unloaded: the worker exits instead.
#include <string>
#include <utility>
#include <vector>

#include "attnv_plugin.h"

namespace attnv::plugin {

using KernelOptions = std::vector<std::pair<std::string, std::string>>;  // key, value; in order

// The kernel as this attnv reads it (normalized_kernel: a version 1 plugin's struct with the
// version 2 fields zero). InputError naming the path (and quoting dlerror() or last_error) when
// the library cannot be loaded, lacks the entry symbol, declares something invalid or rejects
// an option (or takes none and is given some).
attnv_kernel load_plugin(const std::string& path, const KernelOptions& options = {});

}  // namespace attnv::plugin
