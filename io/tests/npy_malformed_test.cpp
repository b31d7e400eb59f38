// Every class of malformed .npy input gets an InputError that says what is wrong; nothing else
// escapes the parser (a small deterministic mutation run stands in for the ASan fuzzer here).
#include <cstring>
#include <optional>
#include <random>

#include "io/npy.h"
#include "io/tests/test_util.h"

namespace attnv::io {
namespace {

using test::throws_input_error;
using Bytes = std::vector<unsigned char>;

// A .npy file with the given version, header text and data; `len` overrides the length field.
Bytes npy(int major, const std::string& header, std::size_t data_bytes, std::optional<std::uint32_t> len = {}) {
  Bytes b = {0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<unsigned char>(major), 0};
  const std::uint32_t l = len.value_or(static_cast<std::uint32_t>(header.size()));
  for (int i = 0; i < (major == 1 ? 2 : 4); ++i) b.push_back(static_cast<unsigned char>(l >> (8 * i)));
  b.insert(b.end(), header.begin(), header.end());
  for (std::size_t i = 0; i < data_bytes; ++i) b.push_back(static_cast<unsigned char>(i % 2 ? 0x3F : 0));
  return b;
}

std::string dict(const std::string& descr, const std::string& fortran, const std::string& shape) {
  return "{'descr': " + descr + ", 'fortran_order': " + fortran + ", 'shape': " + shape + ", }\n";
}

testing::AssertionResult rejects(const Bytes& b, std::initializer_list<std::string> parts) {
  return throws_input_error([&] { parse_npy(b, "q.npy"); }, parts);
}

TEST(NpyHeader, AcceptsEveryWayOfWritingTheDict) {
  const std::string headers[] = {
      "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }",
      "{\"shape\":(2,3),\"descr\":\"<f8\",\"fortran_order\":False}",  // any order, double quotes
      "  {  'fortran_order' : False ,\n'shape':( 2 ,3 , ) ,'descr':'<f8'}   \n",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (2L, 3L), }",  // Python 2 longs
  };
  for (const std::string& h : headers) {
    for (int major : {1, 2, 3}) {
      const NpyArray a = parse_npy(npy(major, h, 48), "q.npy");
      EXPECT_EQ(a.shape, (std::vector<std::int64_t>{2, 3})) << h;
      EXPECT_EQ(a.type, NpyType::f64);
    }
  }
  EXPECT_EQ(parse_npy(npy(1, dict("'<f4'", "False", "()"), 4), "q.npy").elements(), 1);
  EXPECT_EQ(parse_npy(npy(1, dict("'<f4'", "False", "(5,)"), 20), "q.npy").shape, std::vector<std::int64_t>{5});
  EXPECT_EQ(parse_npy(npy(1, dict("'|b1'", "False", "(0,)"), 0), "q.npy").elements(), 0);
  EXPECT_EQ(parse_npy(npy(1, dict("'|u1'", "False", "(2,)"), 2), "q.npy").type, NpyType::u8);
}

TEST(NpyMalformed, MagicVersionAndLengthField) {
  EXPECT_TRUE(rejects({}, {"q.npy", "too short"}));
  EXPECT_TRUE(rejects({'P', 'K', 3, 4, 0, 0, 0, 0, 0, 0}, {"q.npy", "bad magic"}));
  Bytes v4 = npy(1, dict("'<f8'", "False", "(1,)"), 8);
  v4[6] = 4;
  EXPECT_TRUE(rejects(v4, {"unsupported .npy format version 4.0"}));
  Bytes v11 = npy(1, dict("'<f8'", "False", "(1,)"), 8);
  v11[7] = 1;
  EXPECT_TRUE(rejects(v11, {"version 1.1"}));
  EXPECT_TRUE(rejects(Bytes{0x93, 'N', 'U', 'M', 'P', 'Y', 2, 0, 1}, {"ends inside the header length field"}));
}

TEST(NpyMalformed, HeaderLengthLies) {
  const std::string h = dict("'<f8'", "False", "(1,)");
  // Longer than the file: truncated header.
  EXPECT_TRUE(rejects(npy(1, h, 0, 5000), {"truncated header", "says 5000 bytes"}));
  // Shorter than the dict: the dict is cut off.
  EXPECT_TRUE(rejects(npy(1, h, 8, 20), {"ends inside"}));
  // Longer than the dict, eating into the data: text after '}' that is not whitespace.
  EXPECT_TRUE(rejects(npy(1, h, 8, static_cast<std::uint32_t>(h.size() + 2)), {"unexpected text after the closing '}'"}));
  EXPECT_TRUE(rejects(npy(1, "", 0), {"the header is empty"}));
  EXPECT_TRUE(rejects(npy(1, "   ", 0), {"the header is empty"}));
}

TEST(NpyMalformed, DictStructure) {
  EXPECT_TRUE(rejects(npy(1, "['descr', '<f8']", 0), {"does not start with '{'"}));
  EXPECT_TRUE(rejects(npy(1, "{'descr': '<f8', 'shape': (1,)}", 8), {"'fortran_order' is missing"}));
  EXPECT_TRUE(rejects(npy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), 'x': 1}", 8), {"unknown key 'x'"}));
  EXPECT_TRUE(rejects(npy(1, "{'descr': '<f8', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", 8),
                      {"'descr' appears twice"}));
  EXPECT_TRUE(rejects(npy(1, "{descr: '<f8'}", 8), {"a dict key must be a string"}));
  EXPECT_TRUE(rejects(npy(1, "{'descr' '<f8'}", 8), {"expected ':'"}));
  EXPECT_TRUE(rejects(npy(1, "{'descr': '<f8' 'x'}", 8), {"expected ',' or '}'"}));
  EXPECT_TRUE(rejects(npy(1, "{'descr': '<f8}", 8), {"a string"}));
  EXPECT_TRUE(rejects(npy(1, "{'descr': '<f8', 'fortran_order': Flase, 'shape': (1,)}", 8), {"unknown name 'Flase'"}));
  EXPECT_TRUE(rejects(npy(1, "{'descr': '<f8', 'fortran_order': 0, 'shape': (1,)}", 8),
                      {"'fortran_order' must be True or False, got an integer"}));
  EXPECT_TRUE(rejects(npy(1, std::string(40, '(') , 0), {"does not start with '{'"}));
  EXPECT_TRUE(rejects(npy(1, "{'shape': " + std::string(40, '(') + "}", 0), {"nesting deeper than"}));
  EXPECT_TRUE(rejects(npy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }\xff", 8), {"unexpected text"}));
  EXPECT_TRUE(rejects(npy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), } {}", 8), {"unexpected text"}));
}

TEST(NpyMalformed, UnsupportedDtypes) {
  EXPECT_TRUE(rejects(npy(1, dict("'>f8'", "False", "(1,)"), 8),
                      {"q.npy: big-endian data ('>f8') is not supported", "a.astype('<f8')"}));
  EXPECT_TRUE(rejects(npy(1, dict("'|O'", "False", "(1,)"), 8), {"object arrays"}));
  EXPECT_TRUE(rejects(npy(1, dict("[('a', '<f4'), ('b', '<i4')]", "False", "(1,)"), 8), {"structured dtypes"}));
  EXPECT_TRUE(rejects(npy(1, dict("'<c16'", "False", "(1,)"), 8), {"dtype '<c16' is not supported", "<f8, <f4"}));
  EXPECT_TRUE(rejects(npy(1, dict("'<f8'", "True", "(1,)"), 8),
                      {"q.npy: fortran_order is True; attnv needs C order (numpy.ascontiguousarray)"}));
  EXPECT_TRUE(rejects(npy(1, dict("3", "False", "(1,)"), 8), {"'descr' must be a string, got an integer"}));
}

TEST(NpyMalformed, Shapes) {
  EXPECT_TRUE(rejects(npy(1, dict("'<f8'", "False", "(2, -3)"), 0), {"shape dimension 1 is negative (-3)"}));
  EXPECT_TRUE(rejects(npy(1, dict("'<f8'", "False", "[2, 3]"), 48), {"'shape' must be a tuple of integers, got a list"}));
  EXPECT_TRUE(rejects(npy(1, dict("'<f8'", "False", "(5)"), 40), {"'shape' must be a tuple", "got an integer"}));
  EXPECT_TRUE(rejects(npy(1, dict("'<f8'", "False", "(2.5,)"), 8), {"non-integer"}));
  EXPECT_TRUE(rejects(npy(1, dict("'<f8'", "False", "('2',)"), 8), {"shape dimension 0 is a string"}));
  EXPECT_TRUE(rejects(npy(1, dict("'<f8'", "False", "(99999999999999999999,)"), 8), {"does not fit in 64 bits"}));
  EXPECT_TRUE(rejects(npy(1, dict("'<f8'", "False", "(4294967296, 4294967296)"), 8),
                      {"shape (4294967296, 4294967296)", "overflows 64 bits", "element count"}));
  EXPECT_TRUE(rejects(npy(1, dict("'<f8'", "False", "(2305843009213693952,)"), 8),
                      {"overflows 64 bits", "byte count"}));
  std::string rank33 = "(";
  for (int i = 0; i < 33; ++i) rank33 += "1,";
  EXPECT_TRUE(rejects(npy(1, dict("'<f8'", "False", rank33 + ")"), 8), {"rank 33 exceeds"}));
  // A zero dimension makes the count zero, however large the others are.
  EXPECT_EQ(parse_npy(npy(1, dict("'<f8'", "False", "(4294967296, 4294967296, 0)"), 0), "q.npy").elements(), 0);
}

TEST(NpyMalformed, DataLength) {
  EXPECT_TRUE(rejects(npy(1, dict("'<f8'", "False", "(2, 3)"), 47),
                      {"q.npy: truncated data", "needs 48 bytes", "has 47"}));
  EXPECT_TRUE(rejects(npy(1, dict("'<f8'", "False", "(2, 3)"), 49), {"excess data", "needs 48 bytes", "has 49"}));
  EXPECT_TRUE(rejects(npy(1, dict("'<f8'", "False", "()"), 0), {"truncated data"}));
  Bytes b = npy(1, dict("'|b1'", "False", "(2, 2)"), 0);
  b.insert(b.end(), {0, 1, 2, 1});
  EXPECT_TRUE(rejects(b, {"element [1,0] is the byte 2, not a bool"}));
}

// Truncations and byte flips of valid files either parse or raise InputError; nothing else
// (and, under ASan, no out-of-bounds read).
TEST(NpyMalformed, TruncationsAndMutationsOnlyEverRaiseInputError) {
  std::vector<Bytes> seeds;
  const std::vector<std::int64_t> shape = {2, 3};
  const std::vector<double> vals = {1, 2, 3, 4, 5, 6};
  seeds.push_back(encode_npy_floats(shape, NpyType::f16, vals, "s"));
  seeds.push_back(encode_npy_ints(shape, NpyType::b1, std::vector<std::int64_t>{1, 0, 1, 0, 1, 0}, "s"));
  seeds.push_back(npy(3, "{'shape':(2L,3L),'descr':'<i8','fortran_order':False}", 48));
  std::mt19937_64 rng(20261121);
  int parsed = 0, rejected = 0;
  auto attempt = [&](const Bytes& b) {
    try {
      parse_npy(b, "m.npy");
      ++parsed;
    } catch (const InputError&) {
      ++rejected;
    }
  };
  for (const Bytes& s : seeds) {
    for (std::size_t n = 0; n <= s.size(); ++n) attempt(Bytes(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(n)));
    for (int m = 0; m < 3000; ++m) {
      Bytes b = s;
      const int flips = 1 + static_cast<int>(rng() % 3);
      for (int f = 0; f < flips; ++f) {
        const std::size_t at = rng() % b.size();
        const char interesting[] = "(){}[],:'\"-0123456789 TrueFalse<>|fibu\n\xff";
        b[at] = rng() % 2 ? static_cast<unsigned char>(rng()) : static_cast<unsigned char>(interesting[rng() % (sizeof interesting - 1)]);
      }
      attempt(b);
    }
  }
  // Both outcomes occur, so the run exercised the parser rather than failing at the magic.
  EXPECT_GT(parsed, 100);
  EXPECT_GT(rejected, 1000);
}

}  // namespace
}  // namespace attnv::io
