// Per-sequence key lengths (kv_len [S] with packed sequences: claim varlen_kv_len) in the checks:
// R1 as the quick tier draws it in f32 passes the naive kernel on every such case and catches
// seqused_aligned_to_stored_keys; a kernel that claims varlen and kv_len but not varlen_kv_len is
// never drawn one, is told "not claimed" when handed one, and run_forward refuses to call it; a
// kernel that claims it but declines it (supports()) gets those cases NOT SUPPORTED, and the
// feature they used listed as declined, never judged.
#include <cstdio>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "kernels/mutants.h"
#include "kernels/naive_kernel.h"
#include "problem/buffers.h"
#include "problem/error.h"
#include "properties/checks/checks.h"
#include "properties/conformance/conformance.h"

namespace attnv::checks {

using namespace generators;  // the cases the checks run on
using namespace kernels;  // the kernels under test (kernels/)
namespace {

bool seqused(const Problem& p) { return p.varlen_sequences > 0 && p.has_kv_len; }

TEST(SeqUsedR1, NaivePassesEveryCaseWithPerSequenceKeyLengthsAndTheMutantIsCaught) {
  const conformance::Requirement& r1 = conformance::requirement("matches_reference");
  GenOptions opt = r1.options;
  opt.dtypes = {DType::f32};
  std::unique_ptr<Kernel> mutant;
  for (const Mutant& m : mutant_zoo())
    if (m.name == "seqused_aligned_to_stored_keys") mutant = m.make();
  ASSERT_TRUE(mutant);
  NaiveKernel naive;
  CaseStream stream(opt, 20261121);  // the kill table's seed
  int drawn = 0, shortened = 0, caught_at = 0, caught = 0;
  std::string first;
  constexpr int kCases = 400;
  for (int n = 1; n <= kCases; ++n) {
    const PropertyCase pc = stream.next();
    if (!seqused(pc.c.problem)) continue;
    ++drawn;
    for (std::size_t s = 0; s < pc.c.kv_len.size(); ++s)
      shortened += pc.c.kv_len[s] < pc.c.cu_seqlens_k[s + 1] - pc.c.cu_seqlens_k[s];
    EXPECT_TRUE(r1.check(naive, pc).ok) << pc.c.id;
    if (r1.check(*mutant, pc).ok) continue;
    ++caught;
    if (caught_at == 0) {
      caught_at = n;
      first = pc.c.id;
    }
  }
  std::printf("[ measured ] R1, quick stream, f32: %d of %d cases with kv_len [S] (%d sequences using fewer keys "
              "than they hold); naive passes all; the mutant fails %d, first at case %d: %s\n",
              drawn, kCases, shortened, caught, caught_at, first.c_str());
  EXPECT_GT(drawn, 5);
  EXPECT_GT(shortened, 5);
  EXPECT_GT(caught_at, 0);
}

// The naive kernel claiming varlen and kv_len, but not the two together: what a kernel (or a
// plugin) written before per-sequence key lengths claims.
class WithoutSeqused : public NaiveKernel {
 public:
  WithoutSeqused() : NaiveKernel({}, "naive_without_seqused") {}
  Capabilities capabilities() const override {
    Capabilities c = NaiveKernel::capabilities();
    c.varlen_kv_len = false;
    return c;
  }
};

// A packed case with kv_len [S], drawn by R1's generator for a kernel that claims it.
PropertyCase a_seqused_case() {
  GenOptions opt = conformance::requirement("matches_reference").options;
  opt.dtypes = {DType::f32};
  CaseStream stream(opt, 20261121);
  for (int n = 0; n < 2000; ++n)
    if (PropertyCase pc = stream.next(); seqused(pc.c.problem)) return pc;
  ADD_FAILURE() << "no case with kv_len [S] in 2000";
  return {};
}

TEST(SeqUsedClaim, NotClaimedIsNeverDrawnNeverJudgedNeverCalled) {
  WithoutSeqused k;
  const Capabilities caps = k.capabilities();
  ASSERT_TRUE(caps.varlen && caps.kv_len && !caps.varlen_kv_len);
  const PropertyCase pc = a_seqused_case();
  ASSERT_TRUE(seqused(pc.c.problem));
  EXPECT_EQ(caps.unsupported(pc.c.problem), "per-sequence key lengths (varlen with kv_len)");

  // Handed one anyway (a reproduce line, a case folder): not claimed, not judged, not failed.
  const PropertyResult r = check_matches_reference(k, pc.c, pc.layout);
  EXPECT_TRUE(r.ok) << r;
  EXPECT_FALSE(r.judged()) << r;
  EXPECT_NE(r.message.find("per-sequence key lengths"), std::string::npos) << r;
  const conformance::Requirement& r1 = conformance::requirement("matches_reference");
  EXPECT_FALSE(conformance::judge_case(k, r1, pc).judged());
  // And never called: the harness refuses, naming the claim.
  try {
    run_forward(k, pc.c);
    ADD_FAILURE() << "run_forward called a kernel that does not claim per-sequence key lengths";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("does not claim per-sequence key lengths"), std::string::npos) << e.what();
  }

  // R1's stream for it: packed cases and kv_len cases, never the two together.
  GenOptions opt = r1.options;
  opt.dtypes = {DType::f32};
  opt.claims = caps;
  CaseStream stream(opt, 20261121);
  int packed = 0, with_kv_len = 0;
  for (int n = 0; n < 400; ++n) {
    const Problem p = stream.next().c.problem;
    EXPECT_FALSE(seqused(p)) << describe(p);
    packed += p.varlen_sequences > 0;
    with_kv_len += p.has_kv_len;
  }
  EXPECT_GT(packed, 20);
  EXPECT_GT(with_kv_len, 20);
}

// Claims it, then declines it in supports(): each such case NOT SUPPORTED (counted, listed with
// the reason, never a finding), the feature listed as declined and, with no such case judged,
// uncovered: the run is not certified for what it claims and never computed.
class DeclinesSeqused : public NaiveKernel {
 public:
  DeclinesSeqused() : NaiveKernel({}, "naive_declines_seqused") {}
  Support supports(const Problem& p, KernelOp) override {
    return seqused(p) ? Support::no("kv_len [S] not compiled") : Support::yes();
  }
};

TEST(SeqUsedClaim, ClaimedButDeclinedIsNotSupportedAndUncovered) {
  DeclinesSeqused k;
  conformance::ConformanceOptions opt;
  opt.dtypes = {DType::f32};
  opt.only = {"R1"};
  const conformance::ConformanceReport rep = conformance::run_conformance(k, opt);
  ASSERT_EQ(rep.results.size(), 1u);
  const conformance::RequirementResult& r = rep.results[0];
  EXPECT_EQ(r.verdict, conformance::Verdict::pass) << r.note;  // the rest of R1 keeps its evidence
  EXPECT_GT(r.cases_not_supported, 0);
  ASSERT_FALSE(r.declined.empty());
  EXPECT_EQ(r.declined.front().why, "kv_len [S] not compiled");
  bool uncovered = false;
  for (const conformance::FeatureDeclines& f : rep.declines)
    if (f.feature == "per-sequence key lengths (varlen with kv_len)") uncovered = f.uncovered();
  EXPECT_TRUE(uncovered);
  EXPECT_FALSE(rep.ok());
  std::printf("[ measured ] R1 quick f32, a kernel declining kv_len [S]: %d of %d cases NOT SUPPORTED\n",
              r.cases_not_supported, r.cases_run);

  // The naive kernel computes them: the same run, the feature judged.
  NaiveKernel naive;
  const conformance::ConformanceReport ok = conformance::run_conformance(naive, opt);
  int judged = 0;
  for (const conformance::FeatureUse& f : ok.exercised)
    if (f.claim == "varlen_kv_len") judged = f.judged;
  EXPECT_GT(judged, 0);
  EXPECT_TRUE(ok.ok());
}

}  // namespace
}  // namespace attnv::checks
