#pragma once
// Mutations of the numeric fuzz input, without libFuzzer: the structure-aware edits that push a
// case toward the places attention kernels break (used by the libFuzzer custom mutator,
// edge_mutator.cpp, and by `attnv fuzz`), and plain byte-level edits that stand in for
// LLVMFuzzerMutate where libFuzzer is absent.
#include <cstdint>
#include <random>
#include <vector>

#include "fuzz/numeric/case_genome.h"

namespace attnv::fuzz {

// One to three structure-aware edits: huge logits, all-negative logits, near-ties (a key row
// copied onto another, one mantissa bit off), subnormals of the storage dtype, V at the top of
// the f16 range, Tq / Tk around the tile sizes (16, 64, 192), head dims, options, kv_len 0 / Tk
// / Tk - 1, mask density (fully masked rows), single extreme values, bias -inf, NaN / inf in
// keys that kv_len hides, new seeds. Codes past the new shape's count are dropped.
void mutate(Genome& g, std::mt19937_64& rng);

// One to four byte-level edits of an encoded input: bit flips, random and "interesting" bytes
// (0, 1, 0x7f, 0x80, 0xff), a 16-bit value set, a run copied within the input or from `other`
// (crossover; may be null), bytes inserted or erased. The result is at most max_size bytes.
void mutate_bytes(std::vector<std::uint8_t>& bytes, std::mt19937_64& rng, const std::vector<std::uint8_t>* other,
                  std::size_t max_size);

}  // namespace attnv::fuzz
