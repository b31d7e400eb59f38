#include "declaration.h"

#include <cstring>

#include "abi_convert.h"
#include "problem/error.h"

namespace attnv::plugin {

namespace {

// The text of a fixed-size char array that must hold its own terminator.
std::string fixed_text(const char* field, std::size_t n, const char* what, const std::string& who) {
  const void* end = std::memchr(field, '\0', n);
  if (!end) throw InputError(who + ": the worker sent a " + what + " that is not NUL-terminated within " + std::to_string(n) + " bytes");
  return std::string(field, static_cast<const char*>(end));
}

}  // namespace

Declaration read_declaration(const wire::Hello& h, const std::string& who) {
  if (h.magic != wire::kMagic) throw InputError(who + ": the worker's hello has a bad magic number");
  Declaration d;
  d.name = fixed_text(h.name, sizeof h.name, "name", who);
  d.version = fixed_text(h.version, sizeof h.version, "version", who);
  d.configuration = fixed_text(h.configuration, sizeof h.configuration, "configuration", who);
  if (d.name.empty() || d.name.find_first_of(" \t\n\r") != std::string::npos)
    throw InputError(who + ": name '" + d.name + "' is empty or has spaces");
  // The same bit checks the worker made on the plugin's struct (check_kernel), made again on
  // what actually arrived.
  attnv_kernel k{};
  k.abi_version = ATTNV_ABI_VERSION;
  k.struct_size = sizeof(attnv_kernel);
  k.name = d.name.c_str();
  k.version = d.version.c_str();
  k.dtypes = h.dtypes;
  // No entry points travel in a Hello: backward is left out, and decode stands in for the one the
  // worker saw, so that the claims that need decode (ATTNV_CAP_PAGED_KV) are checked again.
  k.caps = h.caps & ~ATTNV_CAP_BACKWARD;
  k.forward = [](const attnv_problem*, const attnv_views*) { return 0; };
  if (h.caps & ATTNV_CAP_DECODE) k.decode = [](const attnv_problem*, const attnv_decode_views*) { return 0; };
  if (const std::vector<std::string> e = check_kernel(k, who); !e.empty()) throw InputError(e.front());
  if (h.abi_version != 1 && h.abi_version != 2)
    throw InputError(who + ": the worker sent ABI version " + std::to_string(h.abi_version) + " (1 or 2)");
  if (h.abi_version < 2 && h.has_supports) throw InputError(who + ": the worker sent supports() for an ABI version 1 plugin");
  d.abi_version = h.abi_version;
  d.has_supports = h.has_supports != 0;
  if (h.abi_version < 2 && h.has_precision_for)
    throw InputError(who + ": the worker sent precision_for() for an ABI version 1 plugin");
  d.has_precision_for = h.has_precision_for != 0;
  d.caps = caps_from_abi(h.caps, h.dtypes);
  if (h.abi_version < 2 && (h.withdrawn[0] | h.withdrawn[1] | h.withdrawn[2] | h.withdrawn[3]))
    throw InputError(who + ": the worker sent withdrawn claims for an ABI version 1 plugin");
  try {
    withdrawn_from_abi(h.withdrawn, d.caps);
  } catch (const InputError& e) {
    throw InputError(who + ": " + e.what());
  }
  if (const std::string e = check_withdrawn(d.caps); !e.empty()) throw InputError(who + ": " + e);
  d.decode = claims_decode(h.caps);
  for (DType t : kAllDTypes) {
    const int i = dtype_to_abi(t);
    PrecisionModel& m = d.precision[static_cast<std::size_t>(i)];
    m = PrecisionModel::natural(t);
    if (!h.has_precision || !(h.dtypes & ATTNV_DTYPE_BIT(static_cast<unsigned>(i)))) continue;
    if (h.precision_rc[i] != 0)
      throw InputError(who + ": precision(" + std::string(dtype_name(t)) + ") returned " + std::to_string(h.precision_rc[i]) +
                       " for a dtype it declares");
    m = precision_from_abi(h.precision[i], t, who);
  }
  return d;
}

}  // namespace attnv::plugin
