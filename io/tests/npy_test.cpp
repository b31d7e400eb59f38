// Round trips of the .npy writer and reader, and the writer's atomicity.
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>

#include "io/npy.h"
#include "io/tests/test_util.h"

namespace attnv::io {
namespace {

using test::ScratchDir;
using test::throws_input_error;

const double kNaN = std::numeric_limits<double>::quiet_NaN();

std::vector<double> tricky_values(DType t) {
  // Extremes of each dtype: smallest subnormal, smallest normal, largest finite, -0, +-inf, NaN.
  const double sub = std::ldexp(1.0, min_exponent(t) - mantissa_bits(t) + 1);
  return {0.0, -0.0, 1.0, -2.5, sub, -sub, min_normal(t), max_finite(t), -max_finite(t), kInf, -kInf, kNaN};
}

TEST(NpyRoundTrip, EveryFloatTypeKeepsEveryBit) {
  ScratchDir dir;
  const std::pair<NpyType, DType> types[] = {{NpyType::f64, DType::f64}, {NpyType::f32, DType::f32}, {NpyType::f16, DType::f16}};
  for (auto [nt, dt] : types) {
    std::vector<double> vals = tricky_values(dt);
    const std::vector<std::int64_t> shape = {3, 4};
    const auto file = dir / (std::string("a") + std::string(dtype_name(dt)) + ".npy");
    write_npy(file, shape, nt, vals);
    const NpyArray a = read_npy(file);
    EXPECT_EQ(a.type, nt);
    EXPECT_EQ(a.shape, shape);
    EXPECT_TRUE(a.ints.empty());
    EXPECT_TRUE(test::same_bits(a.floats, vals)) << dtype_name(dt);
  }
}

TEST(NpyRoundTrip, ShapesScalarVectorEmptyAndRank4) {
  ScratchDir dir;
  const std::vector<std::vector<std::int64_t>> shapes = {{}, {5}, {0, 3}, {2, 1, 3, 2}, {1}};
  for (const auto& shape : shapes) {
    std::int64_t n = 1;
    for (auto d : shape) n *= d;
    std::vector<double> vals(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < vals.size(); ++i) vals[i] = static_cast<double>(i) / 7.0;
    write_npy(dir / "s.npy", shape, NpyType::f64, vals);
    const NpyArray a = read_npy(dir / "s.npy");
    EXPECT_EQ(a.shape, shape);
    EXPECT_EQ(a.elements(), n);
    EXPECT_TRUE(test::same_bits(a.floats, vals));
  }
}

TEST(NpyRoundTrip, IntegerTypes) {
  const std::vector<std::int64_t> shape = {3};
  const std::tuple<NpyType, std::vector<std::int64_t>> cases[] = {
      {NpyType::b1, {1, 0, 1}},
      {NpyType::u8, {0, 128, 255}},
      {NpyType::u16, {0, 0x3F80, 0xFFFF}},
      {NpyType::i32, {std::numeric_limits<std::int32_t>::min(), -1, std::numeric_limits<std::int32_t>::max()}},
      {NpyType::i64, {std::numeric_limits<std::int64_t>::min(), 0, std::numeric_limits<std::int64_t>::max()}}};
  for (const auto& [type, vals] : cases) {
    const auto bytes = encode_npy_ints(shape, type, vals, "x.npy");
    const NpyArray a = parse_npy(bytes, "x.npy");
    EXPECT_EQ(a.type, type);
    EXPECT_EQ(a.ints, vals) << npy_descr(type);
    EXPECT_TRUE(a.floats.empty());
  }
}

TEST(NpyRoundTrip, BoolAndInt64Writers) {
  ScratchDir dir;
  const std::vector<std::int64_t> shape = {2, 2};
  const std::vector<std::uint8_t> mask = {1, 0, 0, 1};
  write_npy_bool(dir / "m.npy", shape, mask);
  const NpyArray m = read_npy(dir / "m.npy");
  EXPECT_EQ(m.type, NpyType::b1);
  EXPECT_EQ(m.ints, (std::vector<std::int64_t>{1, 0, 0, 1}));
  const std::vector<std::int64_t> lens = {7, -3, 0, 1LL << 40};
  write_npy_int64(dir / "l.npy", shape, lens);
  EXPECT_EQ(read_npy(dir / "l.npy").ints, lens);
}

TEST(NpyWriter, HeaderIsNumpysAndDataIs64ByteAligned) {
  const std::vector<std::int64_t> shape = {2, 3};
  const std::vector<double> vals(6, 1.0);
  const auto bytes = encode_npy_floats(shape, NpyType::f64, vals, "x");
  const std::size_t header_len = bytes[8] | (bytes[9] << 8);
  EXPECT_EQ((10 + header_len) % 64, 0u);
  const std::string header(bytes.begin() + 10, bytes.begin() + 10 + static_cast<std::ptrdiff_t>(header_len));
  EXPECT_EQ(header.rfind("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", 0), 0u) << header;
  EXPECT_EQ(header.back(), '\n');
  EXPECT_EQ(bytes.size(), 10 + header_len + 6 * 8);
}

TEST(NpyWriter, BF16StorageIsWrittenAsF32) {
  ScratchDir dir;
  const std::vector<std::int64_t> shape = {3};
  const std::vector<double> vals = {1.0, bf16_value(0x3F81), -kInf};
  write_npy_storage(dir / "b.npy", shape, DType::bf16, vals);
  const NpyArray a = read_npy(dir / "b.npy");
  EXPECT_EQ(a.type, NpyType::f32);
  EXPECT_TRUE(test::same_bits(a.floats, vals));
  // 1 + 2^-10 is an f32 but not a bf16 (bf16 has 8 bits of precision).
  const std::vector<double> bad = {1.0, 1.0 + std::ldexp(1.0, -10), 0.0};
  EXPECT_TRUE(throws_input_error([&] { write_npy_storage(dir / "c.npy", shape, DType::bf16, bad); },
                                 {"c.npy", "element [1]", "not representable in bf16"}));
  EXPECT_FALSE(std::filesystem::exists(dir / "c.npy"));
}

TEST(NpyWriter, UnrepresentableValueLeavesNoFileAndKeepsTheOldOne) {
  ScratchDir dir;
  const std::vector<std::int64_t> shape = {2, 2};
  const std::vector<double> good = {1.0, 2.0, 3.0, 4.0};
  write_npy(dir / "x.npy", shape, NpyType::f16, good);
  const std::vector<double> bad = {1.0, 0.1, 3.0, 4.0};
  EXPECT_TRUE(throws_input_error([&] { write_npy(dir / "x.npy", shape, NpyType::f16, bad); },
                                 {"x.npy", "element [0,1] = 0.1 is not representable in f16"}));
  EXPECT_TRUE(throws_input_error([&] { write_npy(dir / "y.npy", shape, NpyType::f16, bad); }, {"y.npy"}));
  // The old x.npy is intact, y.npy never appeared, and no temporary file is left behind.
  EXPECT_EQ(read_npy(dir / "x.npy").floats, good);
  EXPECT_EQ(test::file_names(dir.path()), std::vector<std::string>{"x.npy"});
  // f32 rejects a double that is not a float, and 1e300 (overflow) too.
  EXPECT_TRUE(throws_input_error([&] { write_npy(dir / "z.npy", std::vector<std::int64_t>{1}, NpyType::f32, std::vector<double>{1e300}); },
                                 {"element [0] = 1e+300 is not representable in f32"}));
}

TEST(NpyWriter, RejectsBadShapesAndIntegerRanges) {
  ScratchDir dir;
  const std::vector<double> four(4, 0.0);
  EXPECT_TRUE(throws_input_error([&] { write_npy(dir / "a.npy", std::vector<std::int64_t>{3}, NpyType::f64, four); },
                                 {"shape (3,) has 3 elements but 4 values were given"}));
  EXPECT_TRUE(throws_input_error([&] { write_npy(dir / "a.npy", std::vector<std::int64_t>{-1, -4}, NpyType::f64, four); },
                                 {"negative"}));
  const std::vector<std::uint8_t> two = {0, 2};
  EXPECT_TRUE(throws_input_error([&] { write_npy_bool(dir / "m.npy", std::vector<std::int64_t>{2}, two); },
                                 {"element [1] = 2 does not fit |b1"}));
  EXPECT_TRUE(throws_input_error(
      [&] { encode_npy_ints(std::vector<std::int64_t>{1}, NpyType::i32, std::vector<std::int64_t>{1LL << 31}, "i.npy"); },
      {"i.npy", "does not fit <i4"}));
  EXPECT_TRUE(test::file_names(dir.path()).empty());
}

TEST(NpyWriter, MissingFolderIsAnInputError) {
  ScratchDir dir;
  EXPECT_TRUE(throws_input_error(
      [&] { write_npy(dir / "no/such/folder/a.npy", std::vector<std::int64_t>{1}, NpyType::f64, std::vector<double>{1}); },
      {"a.npy", "cannot create a temporary file"}));
}

// rename(2) over a symlink, a device or a FIFO would replace it (as root, `--json /dev/stdout`
// destroyed the /dev/stdout link for the whole machine): write_file_atomic refuses, and the
// target and what it points to are left as they were.
TEST(WriteFileAtomic, RefusesToReplaceWhatIsNotARegularFile) {
  ScratchDir dir;
  const std::vector<unsigned char> bytes = {'h', 'i'};
  std::ofstream(dir / "real.txt") << "old";
  std::filesystem::create_symlink(dir / "real.txt", dir / "link.txt");
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  std::filesystem::create_directory(dir / "folder");
  for (const char* target : {"link.txt", "fifo", "folder"}) {
    EXPECT_TRUE(throws_input_error([&] { write_file_atomic(dir / target, bytes); }, {target, "is not a regular file", "refusing"}))
        << target;
  }
  EXPECT_TRUE(std::filesystem::is_symlink(dir / "link.txt"));
  EXPECT_TRUE(std::filesystem::is_fifo(dir / "fifo"));
  std::ifstream in(dir / "real.txt");
  std::string old;
  in >> old;
  EXPECT_EQ(old, "old");
  // A regular file is replaced as before.
  write_file_atomic(dir / "real.txt", bytes);
  std::ifstream again(dir / "real.txt");
  std::string now;
  again >> now;
  EXPECT_EQ(now, "hi");
}

// An allocation that fails while a file is read is an InputError naming the file and its size,
// never a bare std::bad_alloc. A child process (death test) limits its address space to 256 MiB
// beyond what it uses, so a sparse 1 GiB file cannot be held.
TEST(NpyReaderDeathTest, OutOfMemoryNamesTheFileAndItsSize) {
  if (test::kSanitized) GTEST_SKIP() << "sanitizer shadow memory needs the address space a limit would take";
  ScratchDir dir;
  const std::filesystem::path file = dir / "big.npy";
  write_npy(file, std::vector<std::int64_t>{1}, NpyType::f64, std::vector<double>{0.0});
  std::filesystem::resize_file(file, std::uintmax_t{1} << 30);
  auto read_with_little_memory = [&] {
    long pages = 0;
    std::ifstream("/proc/self/statm") >> pages;  // the address space in use, in pages
    const auto in_use = static_cast<rlim_t>(pages) * static_cast<rlim_t>(::sysconf(_SC_PAGESIZE));
    const rlimit lim{in_use + (rlim_t{256} << 20), in_use + (rlim_t{256} << 20)};
    if (::setrlimit(RLIMIT_AS, &lim) != 0) std::_Exit(2);
    try {
      read_npy(file);
    } catch (const InputError& e) {
      std::fputs(e.what(), stderr);
      std::_Exit(0);
    } catch (...) {
      std::_Exit(1);
    }
    std::_Exit(1);
  };
  EXPECT_EXIT(read_with_little_memory(), testing::ExitedWithCode(0),
              "big.npy: out of memory reading it: its 1073741824 bytes are held whole");
}

TEST(NpyFormat, IndexValueAndShapeText) {
  const std::vector<std::int64_t> shape = {2, 3, 4, 5};
  EXPECT_EQ(format_index(shape, 0), "[0,0,0,0]");
  EXPECT_EQ(format_index(shape, 1 * 60 + 2 * 20 + 3 * 5 + 4), "[1,2,3,4]");
  EXPECT_EQ(format_index(std::vector<std::int64_t>{}, 0), "[]");
  EXPECT_EQ(format_value(0.1), "0.1");
  EXPECT_EQ(format_value(-kInf), "-inf");
  EXPECT_EQ(format_shape(std::vector<std::int64_t>{}), "()");
  EXPECT_EQ(format_shape(std::vector<std::int64_t>{5}), "(5,)");
  EXPECT_EQ(format_shape(std::vector<std::int64_t>{2, 3}), "(2, 3)");
}

}  // namespace
}  // namespace attnv::io
