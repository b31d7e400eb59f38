#include "cli/output_target.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string_view>

#include "io/text.h"
#include "problem/error.h"
#include "report/certificate.h"

namespace attnv::cli {
namespace fs = std::filesystem;

void require_regular_target(const std::string& file, const char* option) {
  if (file.empty() || is_stdout(file)) return;
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(file, ec);
  if (ec || st.type() == fs::file_type::not_found || st.type() == fs::file_type::regular) return;
  const char* what = st.type() == fs::file_type::directory ? "a folder"
                     : st.type() == fs::file_type::symlink ? "a symbolic link"
                     : st.type() == fs::file_type::fifo    ? "a pipe"
                                                           : "a device or other special file";
  throw InputError(std::string(option) + " " + file + ": is " + what +
                   ", not a regular file; attnv writes reports atomically (a new file renamed into place) and "
                   "will not replace it: give a file name, or - for standard output");
}

namespace {
bool env_set(const char* name, std::string_view value = {}) {
  const char* v = std::getenv(name);
  if (!v || !*v) return false;
  return value.empty() || value == v;
}
}  // namespace

bool can_redraw(int fd) { return isatty(fd) != 0 && !env_set("TERM", "dumb"); }

bool use_color(const std::string& mode, int fd) {
  if (mode == "always") return true;
  if (mode == "never") return false;
  return can_redraw(fd) && !env_set("NO_COLOR");
}

std::string path_note() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  const char* path = std::getenv("PATH");
  std::string_view rest = path ? path : "";
  while (true) {
    const auto colon = rest.find(':');
    const std::string dir(rest.substr(0, colon));
    const fs::path candidate = fs::path(dir.empty() ? "." : dir) / "attnv";
    if (access(candidate.c_str(), X_OK) == 0) {
      if (fs::equivalent(candidate, self, ec)) return {};
      return "note: `attnv` on your PATH is " + io::printable(candidate.string()) + ", not this program (" +
             io::printable(self.string()) + "); to run the commands below with this one: export PATH=" +
             io::printable(report::shell_quote(self.parent_path().string())) + ":\"$PATH\"\n";
    }
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  return "note: `attnv` is not on your PATH; to paste the commands below: export PATH=" +
         io::printable(report::shell_quote(self.parent_path().string())) + ":\"$PATH\"\n";
}

}  // namespace attnv::cli
