#pragma once
// Helpers shared by the io tests: a scratch folder per test, the data folder, and checks that
// an InputError carries the words a user needs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "problem/error.h"
#include "util/sanitized.h"

namespace attnv::io::test {
using attnv::kSanitized;  // util/sanitized.h

inline std::filesystem::path data_dir() {
  if (const char* src = std::getenv("ATTNV_SOURCE_DIR"); src && *src)
    return std::filesystem::path(src) / "io" / "tests" / "data";
  return ATTNV_IO_TEST_DATA;
}

// A fresh empty folder, removed when the test ends.
class ScratchDir {
 public:
  ScratchDir() {
    static std::atomic<int> n{0};
    path_ = std::filesystem::temp_directory_path() /
            ("attnv_io_test_" + std::to_string(::getpid()) + "_" + std::to_string(n.fetch_add(1)));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& s) const { return path_ / s; }

 private:
  std::filesystem::path path_;
};

// Runs f, expects an InputError whose message contains every one of `parts`.
inline testing::AssertionResult throws_input_error(const std::function<void()>& f,
                                                   std::initializer_list<std::string> parts) {
  try {
    f();
  } catch (const InputError& e) {
    const std::string msg = e.what();
    for (const std::string& p : parts)
      if (msg.find(p) == std::string::npos)
        return testing::AssertionFailure() << "message \"" << msg << "\" lacks \"" << p << "\"";
    return testing::AssertionSuccess() << msg;
  } catch (const std::exception& e) {
    return testing::AssertionFailure() << "threw a non-InputError: " << e.what();
  }
  return testing::AssertionFailure() << "did not throw";
}

// Every file name in a folder (not recursive), sorted.
inline std::vector<std::string> file_names(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// Bitwise equality of doubles (NaN equals NaN of the same bits, -0 differs from +0).
inline bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

}  // namespace attnv::io::test
