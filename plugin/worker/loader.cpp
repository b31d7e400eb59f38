#include "loader.h"

#include <dlfcn.h>

#include "abi_convert.h"
#include "problem/error.h"

namespace attnv::plugin {

const attnv_kernel* load_plugin(const std::string& path) {
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
  require_valid_kernel(k, who);
  return k;
}

}  // namespace attnv::plugin
