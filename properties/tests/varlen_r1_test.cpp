// R1 on packed variable-length sequences, case by case as the quick tier draws them in f32: the
// naive kernel (correct) passes every packed case, and varlen_global_alignment (the causal rule,
// window and ALiBi aligned by the packed corner) is caught; the catching case is printed.
#include <cstdio>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "kernels/mutants.h"
#include "kernels/naive_kernel.h"
#include "properties/conformance/conformance.h"

namespace attnv::checks {

using namespace generators;  // the cases the checks run on
using namespace kernels;  // the kernels under test (kernels/)
namespace {

TEST(VarlenR1, NaivePassesEveryPackedCaseAndTheGlobalAlignmentMutantIsCaught) {
  const conformance::Requirement& r1 = conformance::requirement("matches_reference");
  GenOptions opt = r1.options;
  opt.dtypes = {DType::f32};
  std::unique_ptr<Kernel> mutant;
  for (const Mutant& m : mutant_zoo())
    if (m.name == "varlen_global_alignment") mutant = m.make();
  ASSERT_TRUE(mutant);
  NaiveKernel naive;
  CaseStream stream(opt, 20261121);  // the kill table's seed
  int packed = 0, caught_at = 0, caught = 0;
  std::string first;
  constexpr int kCases = 200;
  for (int n = 1; n <= kCases; ++n) {
    const PropertyCase pc = stream.next();
    if (pc.c.problem.varlen_sequences == 0) continue;
    ++packed;
    EXPECT_TRUE(r1.check(naive, pc).ok) << pc.c.id;
    if (r1.check(*mutant, pc).ok) continue;
    ++caught;
    if (caught_at == 0) {
      caught_at = n;
      first = pc.c.id;
    }
  }
  std::printf("[ measured ] R1, quick stream, f32: %d of %d cases packed; naive passes all; the mutant fails %d, "
              "first at case %d: %s\n", packed, kCases, caught, caught_at, first.c_str());
  EXPECT_GT(packed, 20);
  EXPECT_GT(caught_at, 0);
}

}  // namespace
}  // namespace attnv::checks
