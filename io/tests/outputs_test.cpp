// Result files (<prefix>out.npy, lse, dq, dk, dv) written and read back against a case's shapes.
#include <cmath>

#include "io/exchange.h"
#include "io/npy.h"
#include "io/tests/test_util.h"

namespace attnv::io {
namespace {

using test::ScratchDir;
using test::throws_input_error;

Case small_case(DType t) {
  Problem p;
  p.shape = {1, 2, 1, 3, 4, 2, 3};
  p.dtype = t;
  Case c = make_zero_case(p, true);
  c.id = "small";
  return c;
}

Outputs outputs_for(const Case& c, DType t) {
  const Shape& s = c.problem.shape;
  Outputs o;
  auto fill = [t](std::vector<double>& v, std::int64_t n, double salt) {
    v.resize(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = round_to(t, std::cos(static_cast<double>(i) + salt));
  };
  fill(o.out, out_elements(s), 0.1);
  fill(o.lse, lse_elements(s), 0.2);
  fill(o.dq, q_elements(s), 0.3);
  fill(o.dk, k_elements(s), 0.4);
  fill(o.dv, v_elements(s), 0.5);
  o.lse[1] = -HUGE_VAL;  // a row with no visible key
  o.out[0] = std::nan("");
  return o;
}

TEST(Outputs, RoundTripWithEveryPrefixAndDtype) {
  ScratchDir dir;
  for (DType t : kAllDTypes) {
    const Case c = small_case(t);
    const Outputs o = outputs_for(c, t);
    for (const char* prefix : {"", "ref_", "bound_"}) {
      write_outputs(dir.path(), prefix, c, o, t);
      const Outputs back = read_outputs(dir.path(), prefix, c);
      EXPECT_TRUE(test::same_bits(back.out, o.out)) << dtype_name(t) << prefix;
      EXPECT_TRUE(test::same_bits(back.lse, o.lse));
      EXPECT_TRUE(test::same_bits(back.dq, o.dq));
      EXPECT_TRUE(test::same_bits(back.dk, o.dk));
      EXPECT_TRUE(test::same_bits(back.dv, o.dv));
    }
    EXPECT_EQ(read_npy(dir / "ref_dk.npy").shape, (std::vector<std::int64_t>{1, 1, 4, 2}));
    EXPECT_EQ(read_npy(dir / "lse.npy").shape, (std::vector<std::int64_t>{1, 2, 3}));
  }
}

TEST(Outputs, LseIsAtLeastF32AndBF16IsF32OnDisk) {
  ScratchDir dir;
  const Case c = small_case(DType::f16);
  Outputs o = outputs_for(c, DType::f16);
  o.lse[0] = 1.0 + std::ldexp(1.0, -20);  // an f32 LSE, not an f16 value
  write_outputs(dir.path(), "", c, o, DType::f16);
  EXPECT_EQ(read_npy(dir / "out.npy").type, NpyType::f16);
  EXPECT_EQ(read_npy(dir / "lse.npy").type, NpyType::f32);
  EXPECT_EQ(read_outputs(dir.path(), "", c).lse[0], o.lse[0]);
  const Case b = small_case(DType::bf16);
  write_outputs(dir.path(), "k_", b, outputs_for(b, DType::bf16), DType::bf16);
  EXPECT_EQ(read_npy(dir / "k_out.npy").type, NpyType::f32);
  // bf16 results may also come back as raw bits from another tool.
  write_file_atomic(dir / "x_out.npy", encode_npy_ints(std::vector<std::int64_t>{1, 2, 3, 3}, NpyType::u16,
                                                       std::vector<std::int64_t>(18, 0x3F80), "x"));
  EXPECT_EQ(read_outputs(dir.path(), "x_", b).out, std::vector<double>(18, 1.0));
  EXPECT_TRUE(throws_input_error([&] { read_outputs(dir.path(), "x_", c); }, {"x_out.npy", "results must be floats"}));
}

TEST(Outputs, MissingFilesStayEmpty) {
  ScratchDir dir;
  const Case c = small_case(DType::f32);
  Outputs o;
  o.out = outputs_for(c, DType::f32).out;
  write_outputs(dir.path(), "ref_", c, o, DType::f64);
  EXPECT_EQ(test::file_names(dir.path()), std::vector<std::string>{"ref_out.npy"});
  const Outputs back = read_outputs(dir.path(), "ref_", c);
  EXPECT_TRUE(test::same_bits(back.out, o.out));
  EXPECT_TRUE(back.lse.empty() && back.dq.empty() && back.dk.empty() && back.dv.empty());
}

TEST(Outputs, WrongSizesShapesValuesAndPrefixes) {
  ScratchDir dir;
  const Case c = small_case(DType::f16);
  Outputs o = outputs_for(c, DType::f16);
  o.dq.pop_back();
  EXPECT_TRUE(throws_input_error([&] { write_outputs(dir.path(), "", c, o, DType::f16); },
                                 {"dq.npy: 11 values for shape [B,Hq,Tq,Dk] = (1, 2, 3, 2)"}));
  o = outputs_for(c, DType::f16);
  o.dv[2] = 0.1;
  EXPECT_TRUE(throws_input_error([&] { write_outputs(dir.path(), "", c, o, DType::f16); },
                                 {"dv.npy", "element [0,0,0,2] = 0.1 is not representable in f16"}));
  EXPECT_FALSE(std::filesystem::exists(dir / "dv.npy"));
  write_npy(dir / "out.npy", std::vector<std::int64_t>{1, 2, 3, 2}, NpyType::f64, std::vector<double>(12, 0.0));
  EXPECT_TRUE(throws_input_error([&] { read_outputs(dir.path(), "", c); },
                                 {"out.npy: shape (1, 2, 3, 2), expected [B,Hq,Tq,Dv] = (1, 2, 3, 3)"}));
  for (const char* bad : {"../", "a/b", "x y"}) {
    EXPECT_TRUE(throws_input_error([&] { write_outputs(dir.path(), bad, c, o, DType::f16); }, {"result prefix"}));
    EXPECT_TRUE(throws_input_error([&] { read_outputs(dir.path(), bad, c); }, {"result prefix"}));
  }
}

// Flags (decided_*.npy) are bool files with the results' shapes; only 0 and 1 are flags.
TEST(Outputs, FlagsAreBoolFilesWithTheResultShapes) {
  ScratchDir dir;
  const Case c = small_case(DType::f16);
  Outputs flags = outputs_for(c, DType::f64);
  for (auto* v : {&flags.out, &flags.lse, &flags.dq, &flags.dk, &flags.dv})
    for (std::size_t i = 0; i < v->size(); ++i) (*v)[i] = static_cast<double>(i % 3 == 1);
  flags.dv.clear();  // an empty field is skipped
  write_output_flags(dir.path(), "decided_", c, flags);
  EXPECT_EQ(test::file_names(dir.path()),
            (std::vector<std::string>{"decided_dk.npy", "decided_dq.npy", "decided_lse.npy", "decided_out.npy"}));
  const NpyArray dq = read_npy(dir / "decided_dq.npy");
  EXPECT_EQ(dq.type, NpyType::b1);
  EXPECT_EQ(dq.shape, (std::vector<std::int64_t>{1, 2, 3, 2}));
  EXPECT_EQ(read_npy(dir / "decided_lse.npy").shape, (std::vector<std::int64_t>{1, 2, 3}));
  ASSERT_EQ(dq.ints.size(), flags.dq.size());
  for (std::size_t i = 0; i < dq.ints.size(); ++i) EXPECT_EQ(static_cast<double>(dq.ints[i]), flags.dq[i]) << i;

  flags.out[4] = 0.5;
  EXPECT_TRUE(throws_input_error([&] { write_output_flags(dir.path(), "x_", c, flags); },
                                 {"x_out.npy: element [0,0,1,1] = 0.5 is not a flag (0 or 1)"}));
  flags.out.pop_back();
  EXPECT_TRUE(throws_input_error([&] { write_output_flags(dir.path(), "x_", c, flags); }, {"x_out.npy: 17 values"}));
  EXPECT_TRUE(throws_input_error([&] { write_output_flags(dir.path(), "../", c, flags); }, {"result prefix"}));
  EXPECT_FALSE(std::filesystem::exists(dir / "x_out.npy"));
}

}  // namespace
}  // namespace attnv::io
