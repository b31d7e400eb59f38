// The ABI conversions round-trip, and bad declarations get their messages.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <set>
#include <string>

#include "abi_convert.h"
#include "attnv_mutant_plugins.h"
#include "problem/error.h"
#include "kernels/mutants.h"

namespace attnv::plugin {
namespace {

TEST(AbiConvert, ProblemRoundTrips) {
  Problem p;
  p.shape = {2, 8, 2, 5, 7, 16, 32};
  p.dtype = DType::bf16;
  p.causal = true;
  p.alignment = Alignment::bottom_right;
  p.window = {3, -1};
  p.has_mask = p.has_bias = p.has_kv_len = true;
  p.softcap = 30.0;
  EXPECT_EQ(problem_from_abi(problem_to_abi(p)), p);  // default scale stays unset
  p.scale = 0.3;
  EXPECT_EQ(problem_from_abi(problem_to_abi(p)), p);
  EXPECT_EQ(problem_to_abi(p).scale, 0.3);
}

// Sinks are appended fields: read only when the sender's struct_size covers them, so a sender
// whose struct ends before them (a v1 problem, struct_size 0) never says "sinks".
TEST(AbiConvert, SinksCrossTheAbiOnlyWhereStructSizeCoversThem) {
  Problem p;
  p.shape = {1, 4, 2, 3, 3, 8, 8};
  p.has_sinks = true;
  attnv_problem a = problem_to_abi(p);
  EXPECT_EQ(a.has_sinks, 1);
  EXPECT_EQ(problem_from_abi(a), p);
  a.struct_size = static_cast<std::uint32_t>(offsetof(attnv_problem, has_sinks));
  EXPECT_FALSE(problem_from_abi(a).has_sinks);
  a.struct_size = 0;
  EXPECT_FALSE(problem_from_abi(a).has_sinks);

  float sinks[4] = {}, dsinks[4] = {};
  KernelViews v;
  v.sinks.data = sinks;
  v.dsinks.data = dsinks;
  for (TensorRef* t : {&v.sinks, &v.dsinks}) {
    t->rank = 1;
    t->shape = {4, 0, 0, 0};
    t->stride = {1, 0, 0, 0};
  }
  attnv_views av = views_to_abi(v);
  EXPECT_EQ(av.sinks.data, sinks);
  EXPECT_EQ(av.dsinks.rank, 1);
  const KernelViews back = views_from_abi(av, DType::f32);
  EXPECT_EQ(back.sinks.data, sinks);
  EXPECT_EQ(back.dsinks.data, dsinks);
  EXPECT_EQ(back.dsinks.shape[0], 4);
  av.struct_size = static_cast<std::uint32_t>(offsetof(attnv_views, sinks));
  EXPECT_FALSE(views_from_abi(av, DType::f32).sinks.present());
  EXPECT_EQ(ATTNV_CAP_SINKS, 1u << 14);
  EXPECT_TRUE(caps_from_abi(ATTNV_CAP_SINKS, ATTNV_DTYPE_BIT(ATTNV_F32)).sinks);
}

TEST(AbiConvert, CapabilitiesRoundTripBitByBit) {
  for (std::uint32_t bit = 1; bit <= ATTNV_CAP_SINKS; bit <<= 1) {
    const Capabilities c = caps_from_abi(bit, ATTNV_DTYPE_BIT(ATTNV_F16));
    EXPECT_EQ(caps_to_abi(c), bit);
    EXPECT_EQ(c.dtypes, std::vector<DType>{DType::f16});
  }
  EXPECT_EQ(dtypes_to_abi({DType::f64, DType::bf16}), ATTNV_DTYPE_BIT(ATTNV_F64) | ATTNV_DTYPE_BIT(ATTNV_BF16));
}

TEST(AbiConvert, PrecisionRoundTripsAndJunkIsRejected) {
  PrecisionModel m = PrecisionModel::natural(DType::f16, 64);
  m.p_dtype = DType::f16;
  m.exp_ulps = 4;
  EXPECT_EQ(precision_from_abi(precision_to_abi(m), DType::f16, "plugin x"), m);
  attnv_precision bad = precision_to_abi(m);
  bad.accum = ATTNV_U8;
  EXPECT_THROW(precision_from_abi(bad, DType::f16, "plugin x"), InputError);
  bad = precision_to_abi(m);
  bad.exp_ulps = NAN;
  EXPECT_THROW(precision_from_abi(bad, DType::f16, "plugin x"), InputError);
}

TEST(AbiConvert, WithdrawnClaimsRoundTripAndJunkBitsAreRejected) {
  Capabilities c;
  c.dtypes = {DType::f32, DType::f16};
  c.bias = c.softcap = true;
  c.withdrawn[DType::f16] = {"bias", "softcap"};
  std::uint32_t w[4];
  withdrawn_to_abi(c, w);
  EXPECT_EQ(w[ATTNV_F16], ATTNV_CAP_BIAS | ATTNV_CAP_SOFTCAP);
  EXPECT_EQ(w[ATTNV_F32], 0u);
  Capabilities back;
  withdrawn_from_abi(w, back);
  EXPECT_EQ(back.withdrawn, c.withdrawn);
  w[ATTNV_F32] = 1u << 30;
  EXPECT_THROW(withdrawn_from_abi(w, back), InputError);
}

TEST(AbiConvert, DeclarationChecks) {
  auto fwd = [](const attnv_problem*, const attnv_views*) { return 0; };
  attnv_kernel k{ATTNV_ABI_VERSION, sizeof(attnv_kernel), "k", "1", ATTNV_DTYPE_BIT(ATTNV_F32), 0,
                 nullptr, +fwd, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, {}};
  EXPECT_TRUE(check_kernel(k, "plugin p").empty());
  attnv_kernel b = k;
  b.caps = ATTNV_CAP_BACKWARD;
  EXPECT_EQ(check_kernel(b, "plugin p"), std::vector<std::string>{"plugin p: declares ATTNV_CAP_BACKWARD but backward is NULL"});
  b = k;
  b.abi_version = 3;
  EXPECT_EQ(check_kernel(b, "plugin p").size(), 1u);
  b = k;
  b.name = nullptr;
  b.forward = nullptr;
  b.dtypes = ATTNV_DTYPE_BIT(ATTNV_U8);
  EXPECT_EQ(check_kernel(b, "plugin p").size(), 3u);
  b = k;
  b.struct_size = 8;
  EXPECT_EQ(check_kernel(b, "plugin p").size(), 1u);
  EXPECT_THROW(require_valid_kernel(nullptr, "plugin p"), InputError);
}

// The CMake list of mutant plugins is read from mutants.cpp: it must be the zoo, in order.
TEST(MutantPlugins, OnePerMutantOfTheZoo) {
  std::vector<std::string> cmake, zoo;
  for (const AttnvMutantPlugin& m : kAttnvMutantPlugins) cmake.push_back(m.name);
  for (const props::Mutant& m : props::mutant_zoo()) zoo.push_back(m.name);
  EXPECT_EQ(cmake, zoo);
}

}  // namespace
}  // namespace attnv::plugin
