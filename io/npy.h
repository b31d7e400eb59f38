#pragma once
// Reading and writing NumPy .npy files (format versions 1.0, 2.0, 3.0).
//
// Only what attnv exchanges is accepted: little-endian C-order arrays of f64, f32, f16, bool,
// u8, int32, int64 and u16 (u16 only as raw bf16 bit patterns, which NumPy has no dtype for).
// Anything else gets an InputError naming the file and saying what is wrong and how to fix it.
// The parser never reads outside its input: it is fuzzed under ASan (fuzz/).
//
// Writers build the whole file in memory first, then write a temporary file in the same folder
// and rename it over the target, so a reader never sees a partial file, and a writer that fails
// (an unrepresentable value, a full disk) leaves the previous file, or none, in place.
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "problem/dtype.h"

namespace attnv::io {

// The element types attnv reads and writes, named by their .npy descr.
enum class NpyType : std::uint8_t {
  f64,   // '<f8'
  f32,   // '<f4'
  f16,   // '<f2'
  b1,    // '|b1'
  u8,    // '|u1'
  i32,   // '<i4'
  i64,   // '<i8'
  u16,   // '<u2': raw bf16 bit patterns
};

std::string_view npy_descr(NpyType t);  // "<f8", "|b1", ...
int npy_item_bytes(NpyType t);
bool npy_is_float(NpyType t);           // f64, f32, f16

// A decoded array. Float types land in `floats` as exact doubles (f16 decoded bit-exactly);
// bool, u8, int32, int64 and u16 land in `ints` (u16 as the raw 16-bit pattern). The other
// vector stays empty.
struct NpyArray {
  NpyType type = NpyType::f64;
  std::vector<std::int64_t> shape;  // () for a scalar
  std::vector<double> floats;
  std::vector<std::int64_t> ints;

  std::int64_t elements() const;  // product of shape (1 for a scalar)
};

// Largest rank accepted (NumPy's own limit is 32 in 1.x).
inline constexpr std::size_t kMaxNpyRank = 32;
// Largest element count of one tensor attnv reads, and of any tensor of a case in a manifest:
// 2^31 (16 GiB as f64). Far above what the reference can compute in reasonable time, it exists
// so that a wrong shape is refused with a message before an allocation of that size is tried.
inline constexpr std::int64_t kMaxTensorElements = std::int64_t{1} << 31;
// Largest .npy file read_npy reads into memory: kMaxTensorElements 8-byte elements plus 1 MiB
// for the header (NumPy's own headers are under 64 KiB). Checked before reading.
inline constexpr std::int64_t kMaxNpyFileBytes = kMaxTensorElements * 8 + (std::int64_t{1} << 20);

// Parse a whole .npy file held in memory; `name` is used in messages ("q.npy: ...").
NpyArray parse_npy(std::span<const unsigned char> bytes, std::string_view name);
// Read and parse a file; messages name the file by its file name.
NpyArray read_npy(const std::filesystem::path& path);

// "[0,1,2,3]": the multi-index of flat element `flat` in a C-order array of this shape.
std::string format_index(std::span<const std::int64_t> shape, std::int64_t flat);
// Shortest text that reads back as exactly x ("0.1", "-inf", "nan").
std::string format_value(double x);
// "(2, 3)" / "()" / "(5,)", as NumPy prints a shape.
std::string format_shape(std::span<const std::int64_t> shape);

// Serialize to .npy bytes (format 1.0 when the header fits, else 2.0; header padded to 64).
// Float values must be exactly representable in `type` (NaN and +-inf always are), else
// InputError naming `name`, the element index and the value.
std::vector<unsigned char> encode_npy_floats(std::span<const std::int64_t> shape, NpyType type,
                                             std::span<const double> values, std::string_view name);
std::vector<unsigned char> encode_npy_ints(std::span<const std::int64_t> shape, NpyType type,
                                           std::span<const std::int64_t> values, std::string_view name);

// Atomic writers. Floats: type f64, f32 or f16. Bools: every value 0 or 1. Int64: any value.
void write_npy(const std::filesystem::path& path, std::span<const std::int64_t> shape, NpyType type,
               std::span<const double> values);
void write_npy_bool(const std::filesystem::path& path, std::span<const std::int64_t> shape,
                    std::span<const std::uint8_t> values);
void write_npy_int64(const std::filesystem::path& path, std::span<const std::int64_t> shape,
                     std::span<const std::int64_t> values);
// Values of a storage dtype: f64/f32/f16 as themselves, bf16 as '<f4' holding bf16 values
// (readable by any NumPy). Values must be representable in `storage`.
void write_npy_storage(const std::filesystem::path& path, std::span<const std::int64_t> shape,
                       DType storage, std::span<const double> values);

// Why `path` cannot be read as a file: "no such file", "not a regular file", "cannot access it:
// Permission denied" (a folder on the way that is not searchable); "" when it is a regular file.
std::string unreadable_reason(const std::filesystem::path& path);

// Write bytes to `path` through a temporary file in the same folder and a rename. Refuses
// (InputError) a `path` that exists and is not a regular file: a rename would replace the
// device, pipe, socket, folder or symbolic link itself (as root, `/dev/stdout` for everyone).
void write_file_atomic(const std::filesystem::path& path, std::span<const unsigned char> bytes);
// The same for text (a manifest, a certificate, a report): its bytes as they are.
void write_text_atomic(const std::filesystem::path& path, std::string_view text);

}  // namespace attnv::io
