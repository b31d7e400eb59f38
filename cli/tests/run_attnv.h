#pragma once
// Runs the attnv binary (ATTNV_BIN, a compile definition) the way a user would, for the
// end-to-end tests of the subcommands.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "util/sanitized.h"

namespace attnv::testing {

struct CommandResult {
  int status;          // exit status, -1 when killed by a signal
  std::string output;  // stdout and stderr together
};

inline std::string read_text(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

using attnv::kSanitized;  // util/sanitized.h: tests that limit the address space skip themselves there

// address_space_kib > 0 runs attnv under `ulimit -v` (its virtual memory, in KiB).
inline CommandResult run_attnv(const std::string& args, const std::filesystem::path& work, long address_space_kib = 0) {
  const std::filesystem::path log = work / "attnv.log";
  const std::string limit = address_space_kib > 0 ? "ulimit -v " + std::to_string(address_space_kib) + " && " : "";
  const std::string cmd = limit + std::string(ATTNV_BIN) + " " + args + " > " + log.string() + " 2>&1";
  const int raw = std::system(cmd.c_str());
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, read_text(log)};
}

inline bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

// An empty scratch folder unique to this process.
inline std::filesystem::path fresh_dir(const std::string& name) {
  const auto d = std::filesystem::temp_directory_path() / ("attnv_test_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

}  // namespace attnv::testing
