#include "loader.h"

#include <dlfcn.h>

#include "abi_convert.h"
#include "problem/error.h"

namespace attnv::plugin {

attnv_kernel load_plugin(const std::string& path, const KernelOptions& options) {
  const std::string who = "plugin " + path;
  // A bare file name would make dlopen search the library path; the user named a file.
  const std::string file = path.find('/') == std::string::npos ? "./" + path : path;
  void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* err = dlerror();
    throw InputError(who + ": cannot load: " + (err ? err : "unknown dlopen error"));
  }
  dlerror();
  void* sym = dlsym(handle, ATTNV_ENTRY_SYMBOL);
  if (!sym) {
    const char* err = dlerror();
    throw InputError(who + ": no symbol " ATTNV_ENTRY_SYMBOL " (" + (err ? err : "not exported") +
                     "); a plugin exports it with ATTNV_PLUGIN_EXPORT and C linkage");
  }
  const auto entry = reinterpret_cast<attnv_kernel_entry_fn>(sym);
  const attnv_kernel* k = entry();
  if (!k) throw InputError(who + ": " ATTNV_ENTRY_SYMBOL "() returned NULL");
  if (std::string bad = check_kernel_header(*k, who); !bad.empty()) throw InputError(bad);
  // The options come before anything else is read: an option may change the claims.
  if (!options.empty()) {
    const attnv_kernel head = normalized_kernel(*k);
    if (!head.set_option)
      throw InputError(who + ": takes no options (" +
                       (k->abi_version < 2 ? std::string("an ABI version 1 plugin") : std::string("set_option is NULL")) +
                       "), given --kernel-option " + options.front().first + "=" + options.front().second);
    for (const auto& [key, value] : options) {
      if (head.set_option(key.c_str(), value.c_str()) != 0) {
        const char* why = head.last_error ? head.last_error() : nullptr;
        throw InputError(who + ": rejected --kernel-option " + key + "=" + value +
                         (why && *why ? ": " + std::string(why) : std::string(" (no last_error message)")));
      }
    }
  }
  require_valid_kernel(k, who);
  return normalized_kernel(*k);
}

}  // namespace attnv::plugin
