#include "io/npy.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <system_error>

#include "io/npy_header.h"
#include "problem/error.h"

namespace attnv::io {

static_assert(std::endian::native == std::endian::little,
              "the .npy codec copies little-endian data as is; a big-endian host needs byte swaps");

namespace {

constexpr unsigned char kMagic[] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

[[noreturn]] void fail(std::string_view name, const std::string& what) {
  throw InputError(std::string(name) + ": " + what);
}

std::uint32_t read_le(std::span<const unsigned char> b, std::size_t at, int bytes) {
  std::uint32_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | b[at + static_cast<std::size_t>(i)];
  return v;
}

// Element count of a shape, or nullopt on overflow. A zero dimension makes the count 0 however
// large the others are, as in NumPy.
std::optional<std::int64_t> checked_count(std::span<const std::int64_t> shape) {
  for (std::int64_t d : shape)
    if (d == 0) return 0;
  std::int64_t n = 1;
  for (std::int64_t d : shape)
    if (__builtin_mul_overflow(n, d, &n)) return std::nullopt;
  return n;
}

template <class T>
T load(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <class T>
void store(std::vector<unsigned char>& out, T v) {
  unsigned char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  out.insert(out.end(), b, b + sizeof(T));
}

void decode(NpyArray& a, const unsigned char* p, std::int64_t n, std::string_view name) {
  const auto count = static_cast<std::size_t>(n);
  const auto w = static_cast<std::size_t>(npy_item_bytes(a.type));
  if (npy_is_float(a.type)) {
    a.floats.resize(count);
    for (std::size_t i = 0; i < count; ++i) {
      const unsigned char* e = p + i * w;
      switch (a.type) {
        case NpyType::f64: a.floats[i] = load<double>(e); break;
        case NpyType::f32: a.floats[i] = static_cast<double>(load<float>(e)); break;
        default: a.floats[i] = f16_value(load<std::uint16_t>(e)); break;
      }
    }
    return;
  }
  a.ints.resize(count);
  for (std::size_t i = 0; i < count; ++i) {
    const unsigned char* e = p + i * w;
    switch (a.type) {
      case NpyType::b1:
        if (*e > 1)
          fail(name, "element " + format_index(a.shape, static_cast<std::int64_t>(i)) + " is the byte " +
                         std::to_string(*e) + ", not a bool (0 or 1)");
        a.ints[i] = *e;
        break;
      case NpyType::u8: a.ints[i] = *e; break;
      case NpyType::i32: a.ints[i] = load<std::int32_t>(e); break;
      case NpyType::i64: a.ints[i] = load<std::int64_t>(e); break;
      default: a.ints[i] = load<std::uint16_t>(e); break;
    }
  }
}

std::vector<unsigned char> encode_header(std::span<const std::int64_t> shape, NpyType type) {
  std::string dict = "{'descr': '" + std::string(npy_descr(type)) +
                     "', 'fortran_order': False, 'shape': " + format_shape(shape) + ", }";
  // Pad with spaces and end with '\n' so the data starts at a multiple of 64 bytes (NumPy's
  // alignment); version 1.0 has a 2-byte length field, 2.0 a 4-byte one.
  auto padded = [&](std::size_t prefix) {
    const std::size_t unpadded = prefix + dict.size() + 1;
    return dict + std::string((64 - unpadded % 64) % 64, ' ') + "\n";
  };
  std::string header = padded(10);
  int major = 1;
  if (header.size() > 0xFFFF) {
    header = padded(12);
    major = 2;
  }
  std::vector<unsigned char> out(std::begin(kMagic), std::end(kMagic));
  out.push_back(static_cast<unsigned char>(major));
  out.push_back(0);
  const auto len = static_cast<std::uint32_t>(header.size());
  for (int i = 0; i < (major == 1 ? 2 : 4); ++i) out.push_back(static_cast<unsigned char>(len >> (8 * i)));
  out.insert(out.end(), header.begin(), header.end());
  return out;
}

std::int64_t encoder_count(std::span<const std::int64_t> shape, std::size_t given, std::string_view name) {
  if (shape.size() > kMaxNpyRank)
    fail(name, "rank " + std::to_string(shape.size()) + " exceeds the limit of " + std::to_string(kMaxNpyRank));
  for (std::int64_t d : shape)
    if (d < 0) fail(name, "shape " + format_shape(shape) + " has a negative dimension");
  const auto n = checked_count(shape);
  if (!n) fail(name, "the element count of shape " + format_shape(shape) + " overflows 64 bits");
  if (static_cast<std::uint64_t>(*n) != given)
    fail(name, "shape " + format_shape(shape) + " has " + std::to_string(*n) + " elements but " +
                   std::to_string(given) + " values were given");
  return *n;
}

std::string name_of(const std::filesystem::path& p) { return p.string(); }

}  // namespace

std::string_view npy_descr(NpyType t) {
  switch (t) {
    case NpyType::f64: return "<f8";
    case NpyType::f32: return "<f4";
    case NpyType::f16: return "<f2";
    case NpyType::b1: return "|b1";
    case NpyType::u8: return "|u1";
    case NpyType::i32: return "<i4";
    case NpyType::i64: return "<i8";
    case NpyType::u16: return "<u2";
  }
  return "?";
}

int npy_item_bytes(NpyType t) {
  switch (t) {
    case NpyType::f64:
    case NpyType::i64: return 8;
    case NpyType::f32:
    case NpyType::i32: return 4;
    case NpyType::f16:
    case NpyType::u16: return 2;
    case NpyType::b1:
    case NpyType::u8: return 1;
  }
  return 1;
}

bool npy_is_float(NpyType t) { return t == NpyType::f64 || t == NpyType::f32 || t == NpyType::f16; }

std::int64_t NpyArray::elements() const { return checked_count(shape).value_or(-1); }

std::string format_index(std::span<const std::int64_t> shape, std::int64_t flat) {
  std::vector<std::int64_t> idx(shape.size(), 0);
  for (std::size_t d = shape.size(); d-- > 0;) {
    if (shape[d] <= 0) break;
    idx[d] = flat % shape[d];
    flat /= shape[d];
  }
  std::string s = "[";
  for (std::size_t d = 0; d < idx.size(); ++d) {
    if (d) s += ',';
    s += std::to_string(idx[d]);
  }
  return s + "]";
}

std::string format_value(double x) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, x);
  return std::string(buf, r.ptr);
}

std::string format_shape(std::span<const std::int64_t> shape) {
  std::string s = "(";
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (d) s += ", ";
    s += std::to_string(shape[d]);
  }
  return s + (shape.size() == 1 ? ",)" : ")");
}

NpyArray parse_npy(std::span<const unsigned char> bytes, std::string_view name) {
  if (bytes.size() < 8 || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    fail(name, bytes.size() < sizeof kMagic ? "too short to be a .npy file (" + std::to_string(bytes.size()) + " bytes)"
                                            : "bad magic: a .npy file starts with \\x93NUMPY");
  const int major = bytes[6], minor = bytes[7];
  if (!((major == 1 || major == 2 || major == 3) && minor == 0))
    fail(name, "unsupported .npy format version " + std::to_string(major) + "." + std::to_string(minor) +
                   " (attnv reads 1.0, 2.0 and 3.0)");
  const std::size_t len_bytes = major == 1 ? 2 : 4;
  const std::size_t header_at = 8 + len_bytes;
  if (bytes.size() < header_at) fail(name, "truncated: the file ends inside the header length field");
  const std::size_t header_len = read_le(bytes, 8, static_cast<int>(len_bytes));
  if (header_len > bytes.size() - header_at)
    fail(name, "truncated header: the header length field says " + std::to_string(header_len) +
                   " bytes but only " + std::to_string(bytes.size() - header_at) + " follow it");
  const std::string_view text(reinterpret_cast<const char*>(bytes.data() + header_at), header_len);
  const NpyHeader h = parse_npy_header(text, name);

  NpyArray a;
  a.type = h.type;
  a.shape = h.shape;
  const auto n = checked_count(a.shape);
  std::int64_t want = 0;
  if (!n || __builtin_mul_overflow(*n, npy_item_bytes(a.type), &want))
    fail(name, "shape " + format_shape(a.shape) + (n ? " times the item size" : "") +
                   " overflows 64 bits: the " + (n ? "byte" : "element") + " count is too large");
  const std::size_t data_at = header_at + header_len;
  const std::size_t have = bytes.size() - data_at;
  if (have != static_cast<std::uint64_t>(want))
    fail(name, std::string(have < static_cast<std::uint64_t>(want) ? "truncated data" : "excess data") +
                   ": shape " + format_shape(a.shape) + " of " + std::string(npy_descr(a.type)) + " needs " +
                   std::to_string(want) + " bytes after the header, the file has " + std::to_string(have));
  if (*n > kMaxTensorElements)
    fail(name, "shape " + format_shape(a.shape) + " has " + std::to_string(*n) + " elements, more than the limit of " +
                   std::to_string(kMaxTensorElements) + " per tensor");
  decode(a, bytes.data() + data_at, *n, name);
  return a;
}

std::string unreadable_reason(const std::filesystem::path& path) {
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (st.type() == std::filesystem::file_type::not_found) return "no such file";
  if (ec) return "cannot access it: " + ec.message();
  if (st.type() != std::filesystem::file_type::regular) return "not a regular file";
  return {};
}

NpyArray read_npy(const std::filesystem::path& path) {
  const std::string name = name_of(path);
  if (std::string why = unreadable_reason(path); !why.empty()) fail(name, why);
  std::ifstream f(path, std::ios::binary);
  if (!f) fail(name, "cannot open for reading: " + std::string(std::strerror(errno)));
  f.seekg(0, std::ios::end);
  const std::streamoff size = f.tellg();
  f.seekg(0, std::ios::beg);
  if (size < 0) fail(name, "cannot determine the file size");
  // Checked before anything is allocated: a sparse or runaway file must not take the memory.
  if (size > kMaxNpyFileBytes)
    fail(name, std::to_string(size) + " bytes, more than the limit of " + std::to_string(kMaxNpyFileBytes) +
                   " bytes for one .npy file (" + std::to_string(kMaxTensorElements) + " elements of 8 bytes plus the header)");
  try {
    std::vector<unsigned char> bytes(static_cast<std::size_t>(size));
    if (size > 0 && !f.read(reinterpret_cast<char*>(bytes.data()), size))
      fail(name, "read error after " + std::to_string(f.gcount()) + " bytes");
    return parse_npy(bytes, name);
  } catch (const std::bad_alloc&) {
    fail(name, "out of memory reading it: its " + std::to_string(size) +
                   " bytes are held whole, then decoded to 8 bytes per element");
  }
}

std::vector<unsigned char> encode_npy_floats(std::span<const std::int64_t> shape, NpyType type,
                                             std::span<const double> values, std::string_view name) {
  if (!npy_is_float(type))
    fail(name, "encode_npy_floats needs a float type, got " + std::string(npy_descr(type)));
  encoder_count(shape, values.size(), name);
  const DType as = type == NpyType::f64 ? DType::f64 : type == NpyType::f32 ? DType::f32 : DType::f16;
  std::vector<unsigned char> out = encode_header(shape, type);
  out.reserve(out.size() + values.size() * static_cast<std::size_t>(npy_item_bytes(type)));
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double x = values[i];
    if (!representable(as, x))
      fail(name, "element " + format_index(shape, static_cast<std::int64_t>(i)) + " = " + format_value(x) +
                     " is not representable in " + std::string(dtype_name(as)));
    switch (type) {
      case NpyType::f64: store(out, x); break;
      case NpyType::f32: store(out, static_cast<float>(x)); break;
      default: store(out, f16_bits(x)); break;
    }
  }
  return out;
}

std::vector<unsigned char> encode_npy_ints(std::span<const std::int64_t> shape, NpyType type,
                                           std::span<const std::int64_t> values, std::string_view name) {
  if (npy_is_float(type)) fail(name, "encode_npy_ints needs an integer type, got " + std::string(npy_descr(type)));
  encoder_count(shape, values.size(), name);
  std::int64_t lo = 0, hi = 0;
  switch (type) {
    case NpyType::b1: hi = 1; break;
    case NpyType::u8: hi = 255; break;
    case NpyType::u16: hi = 0xFFFF; break;
    case NpyType::i32: lo = std::numeric_limits<std::int32_t>::min(), hi = std::numeric_limits<std::int32_t>::max(); break;
    default: lo = std::numeric_limits<std::int64_t>::min(), hi = std::numeric_limits<std::int64_t>::max(); break;
  }
  std::vector<unsigned char> out = encode_header(shape, type);
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::int64_t v = values[i];
    if (v < lo || v > hi)
      fail(name, "element " + format_index(shape, static_cast<std::int64_t>(i)) + " = " + std::to_string(v) +
                     " does not fit " + std::string(npy_descr(type)));
    switch (type) {
      case NpyType::b1:
      case NpyType::u8: out.push_back(static_cast<unsigned char>(v)); break;
      case NpyType::u16: store(out, static_cast<std::uint16_t>(v)); break;
      case NpyType::i32: store(out, static_cast<std::int32_t>(v)); break;
      default: store(out, v); break;
    }
  }
  return out;
}

void write_file_atomic(const std::filesystem::path& path, std::span<const unsigned char> bytes) {
  static std::atomic<unsigned> counter{0};
  const std::string name = name_of(path);
  std::error_code st_ec;
  const auto st = std::filesystem::symlink_status(path, st_ec);
  if (!st_ec && st.type() != std::filesystem::file_type::not_found && st.type() != std::filesystem::file_type::regular)
    fail(name, "exists and is not a regular file (a link, device, pipe or folder); refusing to replace it");
  // Hidden, unique per process and call, in the target's folder (rename(2) cannot cross file systems).
  std::string tmp_name = ".";
  tmp_name += path.filename().string();
  tmp_name += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter.fetch_add(1));
  const std::filesystem::path tmp = path.parent_path() / tmp_name;
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) fail(name, "cannot create a temporary file next to it: " + std::string(std::strerror(errno)));
  std::size_t done = 0;
  int err = 0;
  while (done < bytes.size()) {
    const ssize_t w = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      err = errno;
      break;
    }
    done += static_cast<std::size_t>(w);
  }
  if (::close(fd) != 0 && err == 0) err = errno;
  std::error_code ec;
  if (err == 0) {
    // rename(2) replaces the target atomically: readers see the old file or the new one.
    std::filesystem::rename(tmp, path, ec);
    if (!ec) return;
  }
  std::filesystem::remove(tmp, ec);
  fail(name, "write failed: " + std::string(err ? std::strerror(err) : "cannot rename the temporary file into place"));
}

void write_text_atomic(const std::filesystem::path& path, std::string_view text) {
  write_file_atomic(path, std::span(reinterpret_cast<const unsigned char*>(text.data()), text.size()));
}

void write_npy(const std::filesystem::path& path, std::span<const std::int64_t> shape, NpyType type,
               std::span<const double> values) {
  write_file_atomic(path, encode_npy_floats(shape, type, values, name_of(path)));
}

void write_npy_bool(const std::filesystem::path& path, std::span<const std::int64_t> shape,
                    std::span<const std::uint8_t> values) {
  const std::vector<std::int64_t> wide(values.begin(), values.end());
  write_file_atomic(path, encode_npy_ints(shape, NpyType::b1, wide, name_of(path)));
}

void write_npy_int64(const std::filesystem::path& path, std::span<const std::int64_t> shape,
                     std::span<const std::int64_t> values) {
  write_file_atomic(path, encode_npy_ints(shape, NpyType::i64, values, name_of(path)));
}

void write_npy_storage(const std::filesystem::path& path, std::span<const std::int64_t> shape, DType storage,
                       std::span<const double> values) {
  const std::string name = name_of(path);
  if (storage == DType::bf16) {
    // No NumPy dtype for bf16: store the (exactly bf16) values as f32, which holds them all.
    for (std::size_t i = 0; i < values.size(); ++i)
      if (!representable(DType::bf16, values[i]))
        fail(name, "element " + format_index(shape, static_cast<std::int64_t>(i)) + " = " +
                       format_value(values[i]) + " is not representable in bf16");
  }
  const NpyType t = storage == DType::f64 ? NpyType::f64 : storage == DType::f16 ? NpyType::f16 : NpyType::f32;
  write_file_atomic(path, encode_npy_floats(shape, t, values, name));
}

}  // namespace attnv::io
