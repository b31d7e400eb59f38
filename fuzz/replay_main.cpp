// Replays fuzz inputs without libFuzzer (as fmt's test/fuzzing/main.cc does): the same target
// source linked into a plain executable that calls LLVMFuzzerTestOneInput once per file. Every
// argument is a file or a folder (all regular files in it, recursively, sorted so runs are
// reproducible). ctest runs it over each target's corpus and regressions with any compiler, so
// a fixed crash stays fixed under the normal g++ presets, ASan included.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace fs = std::filesystem;

int main(int argc, char** argv) {
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    const fs::path arg(argv[i]);
    if (fs::is_directory(arg)) {
      for (const auto& e : fs::recursive_directory_iterator(arg))
        if (e.is_regular_file()) files.push_back(e.path());
    } else if (fs::is_regular_file(arg)) {
      files.push_back(arg);
    } else {
      std::fprintf(stderr, "replay: %s is neither a file nor a folder\n", argv[i]);
      return 2;
    }
  }
  // Replaying nothing would report "0 inputs ran without a finding" and pass: a deleted or
  // misplaced corpus must fail the test instead.
  if (files.empty()) {
    std::fprintf(stderr, "replay: no input file in the %d path%s given: nothing was replayed\n", argc - 1,
                 argc == 2 ? "" : "s");
    return 2;
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    std::ifstream in(f, std::ios::binary);
    const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::fprintf(stderr, "replay: %s (%zu bytes)\n", f.string().c_str(), bytes.size());
    // An empty vector's data() may be null; libFuzzer never passes null, so neither do we.
    static const std::uint8_t empty = 0;
    LLVMFuzzerTestOneInput(bytes.empty() ? &empty : bytes.data(), bytes.size());
  }
  std::printf("replay: %zu inputs ran without a finding\n", files.size());
  return 0;
}
