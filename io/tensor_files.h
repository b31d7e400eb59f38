#pragma once
// One tensor file of a case: read with its shape and dtype checked against what the case says,
// and turned into the exact doubles (or flags, or lengths) a Case holds.
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "problem/dtype.h"

namespace attnv::io {

// An expected shape with the names of its dimensions, for messages: "[B,Hq,Tq,Dk] = (1, 2, 3, 4)".
struct ExpectedShape {
  const char* names;  // "[B,Hq,Tq,Dk]"
  std::vector<std::int64_t> dims;
};

// q, k, v, bias, dout: a float file of the storage dtype or a wider float whose every value is
// representable in `storage`; for bf16 also '<u2' raw bit patterns.
std::vector<double> read_storage_tensor(const std::filesystem::path& file, DType storage, const ExpectedShape& want);
// mask: '|b1', or '|u1' holding only 0 and 1.
std::vector<std::uint8_t> read_mask_tensor(const std::filesystem::path& file, const ExpectedShape& want);
// kv_len: '<i4' or '<i8'.
std::vector<std::int64_t> read_length_tensor(const std::filesystem::path& file, const ExpectedShape& want);
// Results: any float dtype, values as stored; '<u2' as bf16 bits when `bf16_bits_ok`.
std::vector<double> read_result_tensor(const std::filesystem::path& file, const ExpectedShape& want, bool bf16_bits_ok);

}  // namespace attnv::io
