#pragma once
// Loads a plugin in this process (the worker): dlopen + dlsym(ATTNV_ENTRY_SYMBOL) + the
// declaration checks of abi_convert.h. Never unloaded: the worker exits instead.
#include <string>

#include "attnv_plugin.h"

namespace attnv::plugin {

// InputError naming the path (and quoting dlerror()) when the library cannot be loaded, lacks
// the entry symbol or declares something invalid.
const attnv_kernel* load_plugin(const std::string& path);

}  // namespace attnv::plugin
