#pragma once
// Text that came from outside attnv (case ids and dirs from a manifest, paths from the command
// line, names and messages from a plugin) on its way to a terminal or into a message. Printed
// raw, a crafted id could move the cursor, clear or retitle the screen, rewrite an earlier line
// (ESC sequences, CR) or hide itself (NUL, BEL), so every such string goes through printable().
#include <string>
#include <string_view>

namespace attnv::io {

// `s` with every byte that could control a terminal replaced by '?': C0 control characters
// (except '\n' when keep_newlines), DEL, and any byte that is not part of well-formed UTF-8.
// Well-formed UTF-8 is kept (paths and ids in other scripts stay readable) except the C1
// controls U+0080..U+009F (some terminals act on them like ESC sequences) and the
// bidirectional overrides U+202A..U+202E and U+2066..U+2069 (they reorder what is shown).
std::string printable(std::string_view s, bool keep_newlines = false);
// printable(s) in single quotes, the way messages name an id or a key: 'a/1'. (Not "quoted":
// std::quoted would win overload resolution by argument-dependent lookup on std::string.)
std::string single_quoted(std::string_view s);

// Text over several lines with every line after the first indented by `indent` (a finding's
// message carries the comparison summary, one line per tensor); no trailing newline.
std::string indent_lines(const std::string& text, const std::string& indent);

}  // namespace attnv::io
