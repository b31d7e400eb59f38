#pragma once
// The content hash of one kernel call: how a replayed call finds the case folder that a recorded
// call was written to. It covers exactly what a program answering through files receives (the
// problem and the values of q, k, v, mask, bias, kv_len and dout), never the outputs a kernel
// wrote earlier, so the calls a check makes are found again whichever correct kernel answered
// the earlier ones (cases/README.md).
#include <cstdint>
#include <filesystem>
#include <string>

#include "problem/case.h"

namespace attnv::cases {

// 64-bit hash of a canonical byte serialization: a version tag, the kind (forward, or backward
// when the case has dout), every Problem field, then the values as f64 bit patterns (every NaN
// as one pattern; -0 and +0 stay distinct), mask bytes and kv_len. Not the case id.
std::uint64_t call_hash(const Case& c);
// 64-bit hash of a file's bytes (the same mixing, over 8-byte words and the length): export
// records one per input file so check can tell whether the program changed it (R14 through
// files). InputError naming the file when it cannot be read.
std::uint64_t file_hash(const std::filesystem::path& file);
// 16 lowercase hex digits.
std::string hash_hex(std::uint64_t h);

}  // namespace attnv::cases
