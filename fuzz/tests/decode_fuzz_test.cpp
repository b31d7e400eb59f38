// attnv fuzz reaches Kernel::decode (issue 39, item 7): a genome with header[kB] bit 7 is a
// prompt decoded by one of four plans, contiguous or paged. Correct kernels pass every plan;
// each decode and paged mutant of kernels/ is found by a search with no seed inputs at all (the
// forward of each is correct, so only the decode finds it); the reproducer records the plan and
// `attnv repro`'s rejudge makes the same calls again (failing with the mutant, passing with the
// naive kernel). A kernel that claims no decode never gets one: the bit is ignored.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <sstream>

#include "core/core_kernel.h"
#include "fuzz/numeric/differential_judge.h"
#include "fuzz/search/fuzz_run.h"
#include "fuzz/search/reproducer.h"
#include "fuzz/search/search.h"
#include "io/exchange.h"
#include "kernels/mutants.h"
#include "kernels/naive_kernel.h"
#include "kernels/narrowed_kernel.h"
#include "problem/error.h"

namespace attnv::fuzz {
namespace {

const char* const kDecodeMutants[] = {"decode_top_left", "decode_append_shifted", "alibi_dropped_in_decode",
                                      "paged_last_page_full", "paged_table_row0"};

std::unique_ptr<Kernel> mutant(const std::string& name) {
  for (const kernels::Mutant& m : kernels::mutant_zoo())
    if (m.name == name) return m.make();
  throw std::runtime_error("no mutant " + name);
}

// A random genome asking for a decode by plan `plan` (0..3), small so that many run.
Genome decode_genome(std::mt19937_64& rng, int plan) {
  Genome g;
  for (auto& b : g.header) b = static_cast<std::uint8_t>(rng());
  g.header[kB] = static_cast<std::uint8_t>((g.header[kB] & 31u) | kDecodeBit | static_cast<unsigned>(plan) << kDecodePlanShift);
  g.header[kTk] = static_cast<std::uint8_t>(g.header[kTk] % 192);  // T <= 40
  // The ordinary range, where every element has a finite bound (huge logits: no bound applies).
  for (Field f : {kExpQ, kExpK, kExpV}) g.header[f] = code_for_exponent(static_cast<int>(rng() % 5) - 4);
  return g;
}

TEST(DecodeFuzz, CorrectKernelsPassEveryPlan) {
  kernels::NaiveKernel naive;
  core::CoreKernel core(core::ForwardOptions{.threads = 1});
  for (Kernel* k : {static_cast<Kernel*>(&naive), static_cast<Kernel*>(&core)}) {
    const Capabilities claims = fuzzed_claims(*k, std::nullopt);
    ASSERT_TRUE(claims.decode && claims.paged_kv) << k->name();
    std::mt19937_64 rng(21);
    int judged[4] = {}, paged = 0;
    for (int i = 0; i < 160; ++i) {
      const int plan = i % 4;
      const Genome g = decode_genome(rng, plan);
      const Verdict v = judge_genome(*k, g, claims, DifferentialOptions{});
      ASSERT_FALSE(v.finding) << k->name() << ": " << fail_kind_id(v.finding->kind) << ": " << v.finding->message << "\n"
                              << v.finding->worst << "\n" << case_line(v.finding->c, v.finding->layout);
      ASSERT_FALSE(v.backward);
      if (!v.judged) continue;
      ++judged[plan];
      const auto p = genome_decode_plan(g, claims, genome_case(g, claims, false));
      ASSERT_TRUE(p);
      paged += p->page_size > 0;
      EXPECT_GT(v.decode_elements, 0) << k->name() << ": a judged decode compares outputs: "
                                      << case_line(genome_case(g, claims, false), Layout::bhtd);
      const Problem prompt = genome_case(g, claims, false).problem;
      EXPECT_TRUE(prompt.causal && prompt.alignment == Alignment::bottom_right) << describe(prompt);
      EXPECT_FALSE(prompt.has_mask || prompt.has_bias || prompt.has_kv_len || prompt.varlen_sequences > 0) << describe(prompt);
    }
    for (int plan = 0; plan < 4; ++plan) EXPECT_GT(judged[plan], 20) << k->name() << " plan " << plan;
    EXPECT_GT(paged, 20) << k->name();
  }
}

// The case where decode must not be exercised: the kernel does not claim it.
TEST(DecodeFuzz, AKernelClaimingNoDecodeGetsForwardsOnly) {
  kernels::NarrowedKernel k(std::make_unique<kernels::NaiveKernel>(), [](Capabilities& c) { c.decode = c.paged_kv = false; });
  const Capabilities claims = fuzzed_claims(k, std::nullopt);
  std::mt19937_64 rng(4);
  for (int i = 0; i < 40; ++i) {
    const Genome g = decode_genome(rng, i % 4);
    EXPECT_FALSE(decodes(g, claims));
    EXPECT_FALSE(genome_decode_plan(g, claims, genome_case(g, claims, false)));
    const Verdict v = judge_genome(k, g, claims, DifferentialOptions{});
    EXPECT_EQ(v.decode_ratio, 0);
    EXPECT_FALSE(v.finding && v.finding->decode);
  }
  // And a plan that names paged caches falls back to plan 0 for a kernel without paged_kv.
  kernels::NarrowedKernel contiguous(std::make_unique<kernels::NaiveKernel>(), [](Capabilities& c) { c.paged_kv = false; });
  Genome g = decode_genome(rng, 3);
  EXPECT_EQ(decode_plan_code(g, contiguous.capabilities()), 0);
  EXPECT_EQ(genome_decode_plan(g, contiguous.capabilities(), genome_case(g, contiguous.capabilities(), false))->page_size, 0);
}

TEST(DecodeFuzz, EveryDecodeMutantIsFoundWithoutSeeds) {
  for (const char* name : kDecodeMutants) {
    SearchOptions opt;
    opt.max_seconds = 30;
    opt.seed = 3;
    const KernelFactory make = [name] { return mutant(name); };
    const SearchResult r = run_search(make, opt, nullptr);
    ASSERT_TRUE(r.finding) << name << ": not found in " << status_line(r.status);
    ASSERT_TRUE(r.finding->decode) << name << ": found by a forward: " << r.finding->message;
    EXPECT_LT(r.status.seconds, 10) << name;
    const std::string m = r.finding->message;
    if (std::string(name).rfind("paged", 0) == 0) {
      EXPECT_GT(r.finding->decode->page_size, 0) << name << ": " << m;
    }
    EXPECT_NE(m.find("call with cache_len"), std::string::npos) << m;
  }
}

// A decode that differs from one run to the next (its first output nudged from the 4th call on:
// the second run of a 3-token plan)
// and one that raises an overflow inside the call: both found, as their forwards would be.
class FlakyDecode final : public kernels::NarrowedKernel {
 public:
  explicit FlakyDecode(bool overflow)
      : NarrowedKernel(std::make_unique<kernels::NaiveKernel>(), [](Capabilities&) {}), overflow_(overflow) {}
  void decode(const Problem& p, const DecodeViews& v) override {
    NarrowedKernel::decode(p, v);
    if (overflow_) {
      volatile double big = 1e308;
      big = big * 10;  // raises FE_OVERFLOW inside the call
      (void)big;
    } else if (++calls_ > 3) {
      store(v.out, {0, 0, 0, 0}, load(v.out, {0, 0, 0, 0}) + 0.25);
    }
  }

 private:
  bool overflow_;
  int calls_ = 0;
};

TEST(DecodeFuzz, NondeterminismAndFloatingPointExceptionsInADecodeAreFound) {
  std::mt19937_64 rng(12);
  Genome g = decode_genome(rng, 2);  // one token per call
  g.header[kTk] = code_for_length(3, kSmallT, kMaxT);
  g.header[kDType] = 0;  // f32
  FlakyDecode flaky(false), overflows(true);
  DifferentialOptions opt;
  opt.fp = FpCheck::flags;
  const Verdict a = judge_genome(flaky, g, fuzzed_claims(flaky, std::nullopt), opt);
  ASSERT_TRUE(a.finding) << "an output that changes from run to run passed";
  EXPECT_EQ(a.finding->kind, FailKind::nondeterministic) << a.finding->message;
  EXPECT_NE(a.finding->message.find("decode call"), std::string::npos) << a.finding->message;
  const Verdict b = judge_genome(overflows, g, fuzzed_claims(overflows, std::nullopt), opt);
  ASSERT_TRUE(b.finding) << "an overflow inside the decode passed";
  EXPECT_EQ(b.finding->kind, FailKind::fp_exception) << b.finding->message;
  opt.fp = FpCheck::off;
  opt.twice = false;  // the case where neither is judged
  EXPECT_FALSE(judge_genome(overflows, g, fuzzed_claims(overflows, std::nullopt), opt).finding);
  FlakyDecode fresh(false);  // its first run is clean; asked once, it passes
  EXPECT_FALSE(judge_genome(fresh, g, fuzzed_claims(fresh, std::nullopt), opt).finding);
}

TEST(DecodeFuzz, TheReproducerReplaysTheSameCalls) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "attnv_decode_fuzz_repro";
  std::filesystem::remove_all(dir);
  const auto bad = mutant("paged_table_row0");
  const Capabilities claims = fuzzed_claims(*bad, std::nullopt);
  std::mt19937_64 rng(8);
  std::optional<Finding> found;
  for (int i = 0; i < 200 && !found; ++i) found = judge_genome(*bad, decode_genome(rng, 3), claims, DifferentialOptions{}).finding;
  ASSERT_TRUE(found);
  ASSERT_TRUE(found->decode);
  write_reproducer(dir, *found, true, "builtin:paged_table_row0", bad->configuration(), bad->precision(DType::f32), "text\n");
  const std::vector<io::ExchangeCase> cases = io::read_exchange_cases(dir);
  ASSERT_EQ(cases.size(), 1u);
  const auto plan = reproducer_decode_plan(cases[0]);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->steps, found->decode->steps);
  EXPECT_EQ(plan->page_size, found->decode->page_size);
  EXPECT_EQ(plan->seed, found->decode->seed);
  std::ostringstream out;
  EXPECT_EQ(rejudge_reproducer(*bad, cases, DifferentialOptions{}, "builtin:paged_table_row0", "paged_table_row0", out), 1)
      << out.str();
  EXPECT_NE(out.str().find("decoded in calls of"), std::string::npos) << out.str();
  kernels::NaiveKernel naive;
  std::ostringstream fixed;
  EXPECT_EQ(rejudge_reproducer(naive, cases, DifferentialOptions{}, "builtin:naive", "naive", fixed), 0) << fixed.str();
  EXPECT_NE(fixed.str().find("PASS: every decode call"), std::string::npos) << fixed.str();
  std::filesystem::remove_all(dir);
}

TEST(DecodeFuzz, AMalformedPlanIsAnInputError) {
  io::ExchangeCase ec;
  Problem p;
  p.shape.Tk = 5;
  ec.c = make_zero_case(p, false);
  ec.c.id = "x";
  const std::int64_t T = ec.c.problem.shape.Tk;
  const auto with = [&](const std::string& decode) {
    ec.meta_json = R"({"attnv_fuzz": {"decode": )" + decode + "}}";
    return ec;
  };
  EXPECT_THROW(reproducer_decode_plan(with(R"({"steps": "1"})")), InputError);
  EXPECT_THROW(reproducer_decode_plan(with(R"({"steps": [0]})")), InputError);
  EXPECT_THROW(reproducer_decode_plan(with(R"({"steps": [1.5]})")), InputError);
  EXPECT_THROW(reproducer_decode_plan(with(R"({"steps": [)" + std::to_string(T + 1) + "]}")), InputError);
  EXPECT_THROW(reproducer_decode_plan(with(R"({"steps": [1], "page_size": 2, "prefix": 1})")), InputError);
  try {
    reproducer_decode_plan(with(R"({"steps": [1]})"));
    ADD_FAILURE() << "steps adding up to 1 of " << T << " tokens accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("add up to"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(reproducer_decode_plan(with("{\"steps\": [" + std::to_string(T) + "]}")));
}

}  // namespace
}  // namespace attnv::fuzz
