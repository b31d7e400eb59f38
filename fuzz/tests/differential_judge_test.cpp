// The shared differential judge: correct kernels give no finding on random genomes (so a finding
// means something), and each kind of finding is produced by a kernel with that planted bug:
// forward and backward bound violations, NaN, a written input, nondeterminism, a throwing or
// refusing kernel.
#include <gtest/gtest.h>

#include <random>
#include <stdexcept>

#include "core/core_kernel.h"
#include "fuzz/numeric/genome_mutator.h"
#include "fuzz/numeric/differential_judge.h"
#include "problem/error.h"
#include "kernels/mutants.h"
#include "kernels/naive_kernel.h"

namespace attnv::fuzz {
namespace {

Genome random_genome(std::mt19937_64& rng) {
  Genome g;
  for (auto& b : g.header) b = static_cast<std::uint8_t>(rng());
  g.codes.resize(std::min<std::size_t>(value_count(g), rng() % 64));
  for (auto& c : g.codes) c = static_cast<std::uint16_t>(rng());
  if (rng() % 2) mutate(g, rng);
  return g;
}

std::unique_ptr<Kernel> mutant(const std::string& name) {
  for (const kernels::Mutant& m : kernels::mutant_zoo())
    if (m.name == name) return m.make();
  throw std::runtime_error("no mutant " + name);
}

// The first finding over up to n random genomes (nullopt when none), and how many were judged.
std::optional<Finding> hunt(Kernel& k, std::optional<DType> dtype, int n, std::uint64_t seed, int* judged = nullptr,
                            int* backward = nullptr) {
  const Capabilities claims = fuzzed_claims(k, dtype);
  std::mt19937_64 rng(seed);
  for (int i = 0; i < n; ++i) {
    const Verdict v = judge_genome(k, random_genome(rng), claims, DifferentialOptions{});
    if (judged && v.judged) ++*judged;
    if (backward && v.backward) ++*backward;
    if (v.finding) return v.finding;
  }
  return std::nullopt;
}

TEST(DifferentialJudge, CorrectKernelsGiveNoFinding) {
  kernels::NaiveKernel naive;
  core::CoreKernel core(core::ForwardOptions{.threads = 1});
  for (Kernel* k : {static_cast<Kernel*>(&naive), static_cast<Kernel*>(&core)}) {
    int judged = 0, backward = 0;
    const auto f = hunt(*k, std::nullopt, 300, 7, &judged, &backward);
    EXPECT_FALSE(f) << k->name() << ": " << fail_kind_id(f->kind) << ": " << f->message << "\n" << f->worst << "\n"
                    << case_line(f->c, f->layout);
    EXPECT_GT(judged, 250) << k->name() << ": the reference should decline few random cases";
    if (k->capabilities().backward) {
      EXPECT_GT(backward, 4) << k->name() << ": the backward should be judged sometimes";
    }
  }
}

// Genomes in the ordinary range (tensor exponents in [-4, 0], seeded values): the backward is
// judged on most, so a correct backward must pass them all.
TEST(DifferentialJudge, CorrectBackwardsGiveNoFindingInTheOrdinaryRange) {
  kernels::NaiveKernel naive;
  core::CoreKernel core(core::ForwardOptions{.threads = 1});
  for (Kernel* k : {static_cast<Kernel*>(&naive), static_cast<Kernel*>(&core)}) {
    const Capabilities claims = fuzzed_claims(*k, std::nullopt);
    ASSERT_TRUE(claims.backward) << k->name();
    std::mt19937_64 rng(9);
    int backward = 0;
    for (int i = 0; i < 150; ++i) {
      Genome g;
      for (auto& b : g.header) b = static_cast<std::uint8_t>(rng());
      for (Field f : {kExpQ, kExpK, kExpV, kExpBias}) g.header[f] = code_for_exponent(static_cast<int>(rng() % 5) - 4);
      g.header[kB] &= static_cast<std::uint8_t>(~kDecodeBit);  // a forward and backward, not a decode
      const Verdict v = judge_genome(*k, g, claims, DifferentialOptions{});
      backward += v.backward;
      ASSERT_FALSE(v.finding) << k->name() << ": " << fail_kind_id(v.finding->kind) << ": " << v.finding->message
                              << "\n" << v.finding->worst << "\n" << case_line(v.finding->c, v.finding->layout);
    }
    EXPECT_GT(backward, 75) << k->name();
  }
}

TEST(DifferentialJudge, BackwardMutantIsCaughtInTheGradients) {
  const auto k = mutant("dk_missing_scale");
  ASSERT_TRUE(k->capabilities().backward);
  const auto f = hunt(*k, DType::f32, 1000, 3);
  ASSERT_TRUE(f) << "dK without the scale was not caught";
  EXPECT_EQ(f->kind, FailKind::outside_bound) << f->message;
  EXPECT_TRUE(f->backward);
  EXPECT_NE(f->message.find("dk"), std::string::npos) << f->message;
  EXPECT_EQ(f->worst.rfind("dk[", 0), 0u) << f->worst;
}

TEST(DifferentialJudge, BackwardIsOnlyJudgedWhenAsked) {
  const auto k = mutant("dk_missing_scale");
  const Capabilities claims = fuzzed_claims(*k, DType::f32);
  DifferentialOptions opt;
  opt.backward = false;
  std::mt19937_64 rng(3);
  for (int i = 0; i < 100; ++i) {
    const Verdict v = judge_genome(*k, random_genome(rng), claims, opt);
    ASSERT_FALSE(v.backward);
    ASSERT_FALSE(v.finding) << v.finding->message;  // its forward is correct
  }
}

struct Expected {
  const char* mutant;
  DType dtype;
  std::vector<FailKind> kinds;
};

TEST(DifferentialJudge, EachFindingKindHasAPlantedBugThatProducesIt) {
  const Expected cases[] = {
      {"no_max_subtraction", DType::f32, {FailKind::fp_exception, FailKind::non_finite, FailKind::outside_bound}},
      {"zero_padded_tail", DType::f32, {FailKind::outside_bound}},
      {"writes_q", DType::f32, {FailKind::input_written}},
      {"nondeterministic", DType::f32, {FailKind::nondeterministic}},
      {"nan_on_fully_masked", DType::f32, {FailKind::fp_exception, FailKind::non_finite}},
  };
  for (const Expected& e : cases) {
    const auto k = mutant(e.mutant);
    const auto f = hunt(*k, e.dtype, 3000, 11);
    ASSERT_TRUE(f) << e.mutant << " not caught in 3000 random genomes";
    EXPECT_NE(std::find(e.kinds.begin(), e.kinds.end(), f->kind), e.kinds.end())
        << e.mutant << ": " << fail_kind_id(f->kind) << ": " << f->message;
  }
}

class Throws : public kernels::NaiveKernel {
 public:
  explicit Throws(bool input_error) : input_error_(input_error) {}
  void forward(const Problem&, const KernelViews&) override {
    if (input_error_) throw InputError("declined");
    throw std::runtime_error("boom");
  }

 private:
  bool input_error_;
};

// A kernel that refuses a case within its claims fails, as certify says (one judge); a case the
// kernel may honestly decline is one its claims leave out, which the genome never draws.
TEST(DifferentialJudge, AThrowingKernelCrashedARefusingOneRefused) {
  std::mt19937_64 rng(5);
  const Genome g = random_genome(rng);
  Throws boom(false), declines(true);
  const Verdict a = judge_genome(boom, g, fuzzed_claims(boom, std::nullopt), DifferentialOptions{});
  ASSERT_TRUE(a.finding);
  EXPECT_EQ(a.finding->kind, FailKind::crashed);
  EXPECT_NE(a.finding->message.find("boom"), std::string::npos) << a.finding->message;
  const Verdict b = judge_genome(declines, g, fuzzed_claims(declines, std::nullopt), DifferentialOptions{});
  EXPECT_TRUE(b.judged);
  ASSERT_TRUE(b.finding);
  EXPECT_EQ(b.finding->kind, FailKind::refused);
}

TEST(DifferentialJudge, NarrowingToAnUnclaimedDtypeIsAnInputError) {
  const auto k = mutant("no_max_subtraction");
  const Capabilities all = k->capabilities();
  for (DType d : {DType::f64, DType::f32, DType::f16, DType::bf16}) {
    if (std::find(all.dtypes.begin(), all.dtypes.end(), d) != all.dtypes.end()) {
      EXPECT_EQ(fuzzed_claims(*k, d).dtypes, std::vector<DType>{d});
    } else {
      EXPECT_THROW(fuzzed_claims(*k, d), InputError);
    }
  }
}

}  // namespace
}  // namespace attnv::fuzz
