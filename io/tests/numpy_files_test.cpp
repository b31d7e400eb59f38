// Files written by real NumPy 1.24 (io/tests/data/make_numpy_files.py, run once and committed)
// read as NumPy meant them, and what attnv writes is byte-identical to what NumPy writes.
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "io/exchange.h"
#include "io/npy.h"
#include "io/tests/test_util.h"

namespace attnv::io {
namespace {

using test::data_dir;
using test::throws_input_error;

std::filesystem::path np_file(const std::string& name) { return data_dir() / "numpy" / name; }

std::vector<unsigned char> file_bytes(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

std::vector<double> sevenths() {
  std::vector<double> v;
  for (int i = 0; i < 6; ++i) v.push_back(i / 7.0);
  return v;
}

TEST(NumpyFiles, FloatFilesOfEveryVersion) {
  for (const char* name : {"f64_2x3.npy", "f64_2x3_v2.npy", "f64_2x3_v3.npy"}) {
    const NpyArray a = read_npy(np_file(name));
    EXPECT_EQ(a.type, NpyType::f64) << name;
    EXPECT_EQ(a.shape, (std::vector<std::int64_t>{2, 3})) << name;
    EXPECT_EQ(a.floats, sevenths()) << name;
  }
  const NpyArray s = read_npy(np_file("f32_scalar.npy"));
  EXPECT_TRUE(s.shape.empty());
  EXPECT_EQ(s.floats, std::vector<double>{static_cast<double>(0.1f)});
  const NpyArray e = read_npy(np_file("f64_empty_0x3.npy"));
  EXPECT_EQ(e.shape, (std::vector<std::int64_t>{0, 3}));
  EXPECT_TRUE(e.floats.empty());
}

TEST(NumpyFiles, HalfPrecisionSpecials) {
  const NpyArray a = read_npy(np_file("f16_special.npy"));
  ASSERT_EQ(a.type, NpyType::f16);
  ASSERT_EQ(a.floats.size(), 8u);
  EXPECT_EQ(a.floats[0], 1.0);
  EXPECT_TRUE(a.floats[1] == 0.0 && std::signbit(a.floats[1]));
  EXPECT_EQ(a.floats[2], std::ldexp(1.0, -24));  // smallest subnormal
  EXPECT_EQ(a.floats[3], 65504.0);
  EXPECT_EQ(a.floats[4], HUGE_VAL);
  EXPECT_EQ(a.floats[5], -HUGE_VAL);
  EXPECT_TRUE(std::isnan(a.floats[6]));
  EXPECT_EQ(a.floats[7], 0.333251953125);
}

TEST(NumpyFiles, IntegerAndBoolFiles) {
  EXPECT_EQ(read_npy(np_file("bool_2x2.npy")).ints, (std::vector<std::int64_t>{1, 0, 0, 1}));
  EXPECT_EQ(read_npy(np_file("u1_3.npy")).ints, (std::vector<std::int64_t>{0, 1, 255}));
  EXPECT_EQ(read_npy(np_file("i4_3.npy")).ints, (std::vector<std::int64_t>{INT32_MIN, 0, INT32_MAX}));
  EXPECT_EQ(read_npy(np_file("i8_3.npy")).ints, (std::vector<std::int64_t>{INT64_MIN, 5, INT64_MAX}));
  const NpyArray u = read_npy(np_file("u2_3.npy"));
  EXPECT_EQ(u.type, NpyType::u16);
  EXPECT_EQ(bf16_value(static_cast<std::uint16_t>(u.ints[0])), 1.0);
  EXPECT_EQ(bf16_value(static_cast<std::uint16_t>(u.ints[1])), -2.0);
  EXPECT_EQ(bf16_value(static_cast<std::uint16_t>(u.ints[2])), HUGE_VAL);
}

TEST(NumpyFiles, RejectedFilesSayWhy) {
  EXPECT_TRUE(throws_input_error([] { read_npy(np_file("f64_big_endian.npy")); }, {"f64_big_endian.npy: big-endian data ('>f8')"}));
  EXPECT_TRUE(throws_input_error([] { read_npy(np_file("f64_fortran.npy")); },
                                 {"f64_fortran.npy: fortran_order is True; attnv needs C order (numpy.ascontiguousarray)"}));
  EXPECT_TRUE(throws_input_error([] { read_npy(np_file("object.npy")); }, {"object.npy", "object arrays"}));
  EXPECT_TRUE(throws_input_error([] { read_npy(np_file("structured.npy")); }, {"structured.npy", "structured dtypes"}));
  EXPECT_TRUE(throws_input_error([] { read_npy(np_file("complex.npy")); }, {"complex.npy", "'<c16' is not supported"}));
  EXPECT_TRUE(throws_input_error([] { read_npy(np_file("no_such.npy")); }, {"no_such.npy: no such file"}));
  EXPECT_TRUE(throws_input_error([] { read_npy(data_dir() / "numpy"); }, {"not a regular file"}));
}

TEST(NumpyFiles, OurEncoderWritesNumpysBytes) {
  const std::vector<std::int64_t> s23 = {2, 3}, s22 = {2, 2}, s3 = {3}, s8 = {8};
  EXPECT_EQ(encode_npy_floats(s23, NpyType::f64, sevenths(), "x"), file_bytes(np_file("f64_2x3.npy")));
  EXPECT_EQ(encode_npy_ints(s22, NpyType::b1, std::vector<std::int64_t>{1, 0, 0, 1}, "x"), file_bytes(np_file("bool_2x2.npy")));
  EXPECT_EQ(encode_npy_ints(s3, NpyType::i64,
                            std::vector<std::int64_t>{INT64_MIN, 5, INT64_MAX}, "x"),
            file_bytes(np_file("i8_3.npy")));
  const NpyArray f16 = read_npy(np_file("f16_special.npy"));
  EXPECT_EQ(encode_npy_floats(s8, NpyType::f16, f16.floats, "x"), file_bytes(np_file("f16_special.npy")));
}

// numpy_exchange_values.txt: "case/file v v v ..." with every value NumPy saved.
std::map<std::string, std::vector<double>> expected_values() {
  std::ifstream f(data_dir() / "numpy_exchange_values.txt");
  std::map<std::string, std::vector<double>> m;
  std::string line;
  while (std::getline(f, line)) {
    std::istringstream in(line);
    std::string key, tok;
    in >> key;
    while (in >> tok) m[key].push_back(std::strtod(tok.c_str(), nullptr));  // strtod reads "inf", "-inf"
  }
  return m;
}

TEST(NumpyFiles, ExchangeFolderWrittenWithNumpy) {
  const auto want = expected_values();
  ASSERT_EQ(want.size(), 10u);
  const std::vector<ExchangeCase> xs = read_exchange_cases(data_dir() / "numpy_exchange");
  ASSERT_EQ(xs.size(), 2u);

  const Case& a = xs[0].c;
  EXPECT_EQ(a.id, "numpy/f16_masked");
  EXPECT_EQ(xs[0].dir, "f16_masked");
  EXPECT_EQ(xs[0].meta_json, R"({"seed":20261121,"writer":"numpy"})");
  EXPECT_EQ(a.problem.dtype, DType::f16);
  EXPECT_EQ(a.problem.shape, (Shape{2, 4, 2, 3, 5, 8, 4}));
  EXPECT_EQ(a.q, want.at("f16_masked/q.npy"));
  EXPECT_EQ(a.k, want.at("f16_masked/k.npy"));
  EXPECT_EQ(a.v, want.at("f16_masked/v.npy"));
  EXPECT_EQ(a.dout, want.at("f16_masked/dout.npy"));
  EXPECT_EQ(a.kv_len, (std::vector<std::int64_t>{5, 3}));
  const std::vector<double>& m = want.at("f16_masked/mask.npy");
  EXPECT_EQ(std::vector<double>(a.mask.begin(), a.mask.end()), m);

  const Case& b = xs[1].c;
  EXPECT_EQ(b.problem.dtype, DType::bf16);
  EXPECT_EQ(b.problem.scale, 0.5);
  EXPECT_EQ(b.problem.softcap, 30.0);
  EXPECT_TRUE(b.problem.causal);
  EXPECT_EQ(b.problem.alignment, Alignment::bottom_right);
  EXPECT_EQ(b.problem.window, (Window{1, 0}));
  EXPECT_EQ(b.q, want.at("bf16_bias/q.npy"));  // from <u2 raw bits
  EXPECT_EQ(b.k, want.at("bf16_bias/k.npy"));  // from <f4
  EXPECT_EQ(b.v, want.at("bf16_bias/v.npy"));  // from <f8
  EXPECT_EQ(b.bias, want.at("bf16_bias/bias.npy"));
  EXPECT_EQ(b.bias[1], -HUGE_VAL);
  EXPECT_TRUE(b.mask.empty() && b.kv_len.empty() && b.dout.empty());
}

}  // namespace
}  // namespace attnv::io
