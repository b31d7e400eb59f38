#pragma once
// The numeric seed corpus (fuzz/corpus/numeric, the inputs libFuzzer and attnv fuzz kept for
// reaching new numeric signal) built into the library, so an installed attnv, or the Python
// module, away from any checkout fuzzes from the same seeds as a run in the source tree. The
// files are assembled into the binary as they were at build time (fuzz/CMakeLists.txt,
// .incbin), in file-name order, so a seed reproduces.
#include <cstdint>
#include <vector>

namespace attnv::fuzz {

std::vector<std::vector<std::uint8_t>> builtin_seed_corpus();

}  // namespace attnv::fuzz
