#include "io/tensor_files.h"

#include "io/npy.h"
#include "problem/error.h"

namespace attnv::io {
namespace {

[[noreturn]] void fail(const std::filesystem::path& file, const std::string& what) {
  throw InputError(file.string() + ": " + what);
}

NpyArray read_shaped(const std::filesystem::path& file, const ExpectedShape& want) {
  NpyArray a = read_npy(file);
  if (a.shape != want.dims)
    fail(file, "shape " + format_shape(a.shape) + ", expected " + want.names + " = " + format_shape(want.dims));
  return a;
}

std::vector<double> bf16_from_bits(const NpyArray& a) {
  std::vector<double> v(a.ints.size());
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = bf16_value(static_cast<std::uint16_t>(a.ints[i]));
  return v;
}

// How many bits of precision a float file type carries; storage must not be wider than the file.
int precision_of(NpyType t) { return t == NpyType::f64 ? 53 : t == NpyType::f32 ? 24 : 11; }

}  // namespace

std::vector<double> read_storage_tensor(const std::filesystem::path& file, DType storage, const ExpectedShape& want) {
  NpyArray a = read_shaped(file, want);
  if (a.type == NpyType::u16) {
    if (storage != DType::bf16)
      fail(file, "holds <u2, which attnv reads only as raw bf16 bits, but the case dtype is " +
                     std::string(dtype_name(storage)));
    return bf16_from_bits(a);
  }
  if (!npy_is_float(a.type))
    fail(file, "holds " + std::string(npy_descr(a.type)) + "; expected floats of the case dtype " +
                   std::string(dtype_name(storage)) + " (or a wider float)");
  // f16 and bf16 both have fewer bits than f32, but neither holds the other: f16 files are
  // accepted only for f16 cases, and bf16 cases take f32/f64 (or raw bits).
  const bool f16_for_bf16 = a.type == NpyType::f16 && storage == DType::bf16;
  if (precision_of(a.type) < mantissa_bits(storage) || f16_for_bf16)
    fail(file, "holds " + std::string(npy_descr(a.type)) + " but the case dtype is " +
                   std::string(dtype_name(storage)) + ": store " + std::string(dtype_name(storage)) +
                   " values in that dtype or a wider float" +
                   (storage == DType::bf16 ? " (bf16: <f4 or <f8 holding bf16 values, or <u2 raw bits)" : ""));
  for (std::size_t i = 0; i < a.floats.size(); ++i)
    if (!representable(storage, a.floats[i]))
      fail(file, "element " + format_index(a.shape, static_cast<std::int64_t>(i)) + " = " +
                     format_value(a.floats[i]) + " is not representable in " + std::string(dtype_name(storage)));
  return std::move(a.floats);
}

std::vector<std::uint8_t> read_mask_tensor(const std::filesystem::path& file, const ExpectedShape& want) {
  NpyArray a = read_shaped(file, want);
  if (a.type != NpyType::b1 && a.type != NpyType::u8)
    fail(file, "holds " + std::string(npy_descr(a.type)) + "; a mask must be bool (|b1) or uint8 (|u1) 0/1");
  std::vector<std::uint8_t> m(a.ints.size());
  for (std::size_t i = 0; i < m.size(); ++i) {
    if (a.ints[i] != 0 && a.ints[i] != 1)
      fail(file, "element " + format_index(a.shape, static_cast<std::int64_t>(i)) + " = " +
                     std::to_string(a.ints[i]) + " is not 0 or 1");
    m[i] = static_cast<std::uint8_t>(a.ints[i]);
  }
  return m;
}

std::vector<std::int64_t> read_length_tensor(const std::filesystem::path& file, const ExpectedShape& want) {
  NpyArray a = read_shaped(file, want);
  if (a.type != NpyType::i32 && a.type != NpyType::i64)
    fail(file, "holds " + std::string(npy_descr(a.type)) + "; kv_len must be int32 (<i4) or int64 (<i8)");
  return std::move(a.ints);
}

std::vector<double> read_result_tensor(const std::filesystem::path& file, const ExpectedShape& want, bool bf16_bits_ok) {
  NpyArray a = read_shaped(file, want);
  if (a.type == NpyType::u16 && bf16_bits_ok) return bf16_from_bits(a);
  if (!npy_is_float(a.type))
    fail(file, "holds " + std::string(npy_descr(a.type)) + "; results must be floats (<f8, <f4, <f2" +
                   (bf16_bits_ok ? ", or <u2 raw bf16 bits)" : ")"));
  return std::move(a.floats);
}

}  // namespace attnv::io
