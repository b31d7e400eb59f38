#pragma once
// Where the CLI's output goes, as scripts rely on it: "-" is standard output, a report never
// replaces what is not a regular file, colour only where it is wanted, and the printed
// `attnv ...` commands work when pasted.
#include <string>

namespace attnv::cli {

inline bool is_stdout(const std::string& file) { return file == "-"; }

// InputError naming the option when `file` (not "-") exists and is not a regular file (a
// device such as /dev/stdout, a pipe, a link, a folder): writing it would replace it.
void require_regular_target(const std::string& file, const char* option);

// --color: "always", "never" or "auto" (colour only when `fd` is a terminal, NO_COLOR is unset
// or empty, and TERM is not "dumb": https://no-color.org).
bool use_color(const std::string& mode, int fd);

// Whether a terminal on `fd` can redraw a line in place (\r and ESC[K): a tty, TERM not dumb.
bool can_redraw(int fd);

// The certificate's commands start with `attnv`. "" when `attnv` on PATH is this program;
// otherwise one line saying how to make them work when pasted (the PATH to set).
std::string path_note();

}  // namespace attnv::cli
