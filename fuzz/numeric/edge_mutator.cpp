// The numeric target's custom mutator: decodes the input into its Genome, applies the
// structure-aware edits of genome_mutator.h and encodes it back. One call in four is left to
// libFuzzer's own byte-level mutations (LLVMFuzzerMutate), whose extremes find range bugs fast
// (shared/TOOLING.md).
// Linked into the libFuzzer executable only: the replay build has no LLVMFuzzerMutate.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>

#include "fuzz/numeric/case_genome.h"
#include "fuzz/numeric/genome_mutator.h"

extern "C" std::size_t LLVMFuzzerMutate(std::uint8_t* data, std::size_t size, std::size_t max_size);

extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size, std::size_t max_size,
                                               unsigned int seed) {
  using namespace attnv::fuzz;
  // ATTNV_FUZZ_MUTATOR=0: libFuzzer's byte mutations only (to measure what the edits buy).
  static const bool edits_on = [] {
    const char* env = std::getenv("ATTNV_FUZZ_MUTATOR");
    return !(env && env[0] == '0');
  }();
  std::mt19937_64 rng(seed);
  if (!edits_on || rng() % 4 == 0 || max_size < kHeaderBytes) return LLVMFuzzerMutate(data, size, max_size);
  Genome g = decode(data, size);
  mutate(g, rng);
  // The size limit cuts the codes that do not fit.
  g.codes.resize(std::min(g.codes.size(), (max_size - kHeaderBytes) / 2));
  const std::vector<std::uint8_t> bytes = encode(g);
  std::memcpy(data, bytes.data(), bytes.size());
  return bytes.size();
}
