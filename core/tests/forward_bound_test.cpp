// The core's forward on every case family, storage dtype and layout, judged by the error bound
// of its own declared precision model (never a hand-picked epsilon).
#include <string>

#include <gtest/gtest.h>

#include "core/core_kernel.h"
#include "core_test_util.h"
#include "gen/families.h"

namespace attnv::core {
namespace {

using testing::runnable_isas;
using testing::forward_within_bound;

struct FamilyParam {
  gen::Family family;
  DType dtype;
};

class CoreFamilies : public ::testing::TestWithParam<FamilyParam> {};

// Small cases (Tk <= 48, several query heads, every option) in all three layouts, a few seeds.
TEST_P(CoreFamilies, SmallCasesAllLayoutsWithinBound) {
  CoreKernel core;
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    const Case c = gen::make_case(GetParam().family, seed,
                                  {GetParam().dtype, gen::Size::small, false, true});
    for (Layout layout : {Layout::bhtd, Layout::bthd, Layout::gapped})
      EXPECT_TRUE(forward_within_bound(core, c, layout));
  }
}

// Medium cases (up to 2048 keys: many key tiles and rescales), one layout each.
TEST_P(CoreFamilies, MediumCaseWithinBound) {
  CoreKernel core;
  const Case c = gen::make_case(GetParam().family, 11, {GetParam().dtype, gen::Size::medium, false, true});
  EXPECT_TRUE(forward_within_bound(core, c, Layout::gapped));
}

// Every ISA path this CPU runs (the tests above take the widest) on the same small cases.
TEST_P(CoreFamilies, EveryIsaPathWithinBound) {
  const Case c = gen::make_case(GetParam().family, 5, {GetParam().dtype, gen::Size::small, false, true});
  for (Isa isa : runnable_isas(GetParam().dtype)) {
    CoreKernel core({.threads = 0, .isa = isa});
    EXPECT_TRUE(forward_within_bound(core, c, Layout::bthd)) << isa_name(isa);
  }
}

std::vector<FamilyParam> all_params() {
  std::vector<FamilyParam> v;
  for (gen::Family f : gen::all_families())
    for (DType t : {DType::f32, DType::f16, DType::bf16, DType::f64}) v.push_back({f, t});
  return v;
}

INSTANTIATE_TEST_SUITE_P(AllFamilies, CoreFamilies, ::testing::ValuesIn(all_params()),
                         [](const ::testing::TestParamInfo<FamilyParam>& p) {
                           return std::string(gen::family_name(p.param.family)) + "_" +
                                  std::string(dtype_name(p.param.dtype));
                         });

}  // namespace
}  // namespace attnv::core
