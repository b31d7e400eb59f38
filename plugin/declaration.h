#pragma once
// What a plugin declares about itself, as the parent reads it from the worker's Hello. The
// worker runs the plugin's code, so its Hello is outside input like any file: every field is
// checked here (text NUL-terminated inside its array, known capability and dtype bits only, a
// well-formed precision model per declared dtype) before PluginKernel believes it.
#include <array>
#include <cstddef>
#include <string>

#include "problem/kernel.h"
#include "worker/protocol.h"

namespace attnv::plugin {

struct Declaration {
  std::string name, version;
  Capabilities caps;
  bool decode = false;                     // ATTNV_CAP_DECODE
  unsigned abi_version = 1;                // 1 or 2
  bool has_supports = false;               // supports() is set (version 2)
  bool has_precision_for = false;          // precision_for() is set (version 2, later field)
  std::array<PrecisionModel, 4> precision;  // index: ATTNV_F64 .. ATTNV_BF16
  std::string configuration;               // attnv_kernel::configuration ("" when none)
};

// The text of a fixed-size char array from the worker, cut at its end when the terminator is
// missing (for messages, where a cut text is still worth showing).
template <std::size_t N>
std::string received_text(const char (&field)[N]) {
  std::size_t n = 0;
  while (n < N && field[n] != '\0') ++n;
  return std::string(field, n);
}

// InputError starting with `who` on anything malformed. h.kind must be ReplyKind::ok (a load
// error is the caller's to report with h.text).
Declaration read_declaration(const wire::Hello& h, const std::string& who);

}  // namespace attnv::plugin
