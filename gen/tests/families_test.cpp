#include "gen/families.h"

#include <gtest/gtest.h>

#include <cmath>

#include "problem/validate.h"

namespace attnv::gen {
namespace {

TEST(Families, SameSeedSameCase) {
  for (Family f : all_families()) {
    const Case a = make_case(f, 7, {DType::f16, Size::small});
    const Case b = make_case(f, 7, {DType::f16, Size::small});
    EXPECT_EQ(a.problem, b.problem) << family_name(f);
    EXPECT_EQ(a.q, b.q) << family_name(f);
    EXPECT_EQ(a.v, b.v) << family_name(f);
    const Case other = make_case(f, 8, {DType::f16, Size::small});
    EXPECT_TRUE(other.q != a.q || !(other.problem == a.problem)) << family_name(f);
  }
}

TEST(Families, EveryCaseIsValidAndStoredExactly) {
  for (DType t : kAllDTypes)
    for (Family f : all_families())
      for (std::uint64_t seed = 0; seed < 20; ++seed) {
        const Case c = make_case(f, seed, {t, Size::small});
        EXPECT_TRUE(check_case(c).empty()) << c.id;
        for (double x : c.q) ASSERT_TRUE(std::isfinite(x)) << c.id;
        for (double x : c.v) ASSERT_TRUE(std::isfinite(x)) << c.id;
      }
}

TEST(Families, LongRowsHaveAtLeast4096Keys) {
  for (std::uint64_t seed = 0; seed < 5; ++seed)
    EXPECT_GE(make_case(Family::long_rows, seed, {DType::f32, Size::small}).problem.shape.Tk, 4096);
}

TEST(Families, FullyMaskedFamilyAsksForAnEmptyRowMechanism) {
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    const Problem& p = make_case(Family::fully_masked, seed, {DType::f32, Size::small}).problem;
    EXPECT_TRUE(p.has_kv_len || p.has_mask || p.has_bias) << seed;
  }
}

}  // namespace
}  // namespace attnv::gen
