// attnv's own error on one input of the search (a HarnessError: its bound or reference could not
// judge, a harness that could not pass the call) stops the search with no verdict on the kernel
// and keeps the input, so `attnv fuzz` can save the case (exit 3) where it used to end as a bare
// "internal error" with nothing to reproduce. Planted here by a kernel whose harness fails on
// cases with more than 3 keys. The case is then shrunk while the same error persists, and
// shrinking a finding never keeps a step on which attnv itself cannot judge.
#include <gtest/gtest.h>

#include <filesystem>
#include <limits>
#include <memory>

#include "fuzz/search/search.h"
#include "fuzz/search/reproducer.h"
#include "fuzz/numeric/differential_judge.h"
#include "io/exchange.h"
#include "kernels/naive_kernel.h"
#include "kernels/narrowed_kernel.h"
#include "problem/kernel_fault.h"

namespace attnv::fuzz {
namespace {

class HarnessFailsPastThreeKeys final : public kernels::NarrowedKernel {
 public:
  HarnessFailsPastThreeKeys() : NarrowedKernel(std::make_unique<kernels::NaiveKernel>(), [](Capabilities&) {}) {}
  void forward(const Problem& p, const KernelViews& v) override {
    if (p.shape.Tk > 3) throw HarnessError("planted harness error: Tk " + std::to_string(p.shape.Tk));
    NarrowedKernel::forward(p, v);
  }
};

// Past 3 keys the planted error; past `other_from` keys another one (another defect of attnv's).
class HarnessFailsByKeys final : public kernels::NarrowedKernel {
 public:
  explicit HarnessFailsByKeys(std::int64_t other_from)
      : NarrowedKernel(std::make_unique<kernels::NaiveKernel>(), [](Capabilities&) {}), other_from_(other_from) {}
  void forward(const Problem& p, const KernelViews& v) override {
    if (p.shape.Tk > other_from_) throw HarnessError("other planted error: Tk " + std::to_string(p.shape.Tk));
    if (p.shape.Tk > 3) throw HarnessError("planted harness error: Tk " + std::to_string(p.shape.Tk));
    NarrowedKernel::forward(p, v);
  }

 private:
  std::int64_t other_from_;
};

// A kernel bug (its first output NaN) on cases with more than 2 keys, attnv's error on the rest.
class NanOutputPastTwoKeys final : public kernels::NarrowedKernel {
 public:
  NanOutputPastTwoKeys() : NarrowedKernel(std::make_unique<kernels::NaiveKernel>(), [](Capabilities&) {}) {}
  void forward(const Problem& p, const KernelViews& v) override {
    if (p.shape.Tk <= 2) throw HarnessError("planted harness error: Tk " + std::to_string(p.shape.Tk));
    NarrowedKernel::forward(p, v);
    static_cast<float*>(v.out.data)[0] = std::numeric_limits<float>::quiet_NaN();
  }
};

// A small f32 genome (every header byte 0 but the keys), its values from the seed.
fuzz::Genome genome_with_keys(std::int64_t tk) {
  fuzz::Genome g;
  g.header[fuzz::kTk] = fuzz::code_for_length(tk, fuzz::kSmallT, fuzz::kMaxT);
  return g;
}

std::int64_t keys_of(const fuzz::Genome& g) { return fuzz::shape_of(g).Tk; }

TEST(FuzzSearch, ErrorSignaturesLeaveOutTheNumbers) {
  EXPECT_EQ(error_signature("attnv's error bound is NaN at dq[350]"), error_signature("attnv's error bound is NaN at dq[7]"));
  EXPECT_EQ(error_signature("ratio 1.5e-07 at f32 index 3"), "ratio # at f# index #");
  EXPECT_NE(error_signature("planted harness error: Tk 5"), error_signature("other planted error: Tk 5"));
}

TEST(FuzzSearch, AttnvsOwnErrorStopsTheSearchAndKeepsTheInput) {
  SearchOptions opt;
  opt.dtype = DType::f32;
  opt.max_seconds = 60;
  opt.seed = 7;
  const KernelFactory make = [] { return std::unique_ptr<Kernel>(std::make_unique<HarnessFailsPastThreeKeys>()); };
  const SearchResult r = run_search(make, opt, nullptr);
  ASSERT_TRUE(r.attnv_error.has_value()) << "the search ran " << r.status.execs << " execs without meeting it";
  EXPECT_FALSE(r.finding.has_value()) << "attnv's error is no finding against the kernel";
  EXPECT_NE(r.attnv_error->find("planted harness error"), std::string::npos) << *r.attnv_error;
  HarnessFailsPastThreeKeys probe;
  const Capabilities claims = fuzz::fuzzed_claims(probe, opt.dtype);
  const Case c = fuzz::genome_case(r.genome, claims, opt.judging.backward && claims.backward);
  EXPECT_GT(c.problem.shape.Tk, 3) << "the input kept is the one that met the error";

  // The case is saved as an exchange folder that names the error, the kernel and its layout.
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "attnv_fuzz_search_attnv_error";
  std::filesystem::remove_all(dir);
  write_attnv_error_case(dir, c, fuzz::genome_layout(r.genome, claims), true, "builtin:naive", "", *r.attnv_error, "text\n");
  const std::vector<io::ExchangeCase> saved = io::read_exchange_cases(dir);
  ASSERT_EQ(saved.size(), 1u);
  EXPECT_EQ(saved[0].c.q, c.q);
  EXPECT_EQ(reproducer_field(saved[0], "attnv_error"), r.attnv_error);
  EXPECT_EQ(reproducer_field(saved[0], "kernel"), std::optional<std::string>("builtin:naive"));
  EXPECT_EQ(reproducer_layout(saved[0]), fuzz::genome_layout(r.genome, claims));
  EXPECT_EQ(reproducer_recurred(saved[0]), std::optional<bool>(true));
  EXPECT_TRUE(std::filesystem::exists(dir / "finding.txt"));
  std::filesystem::remove_all(dir);

  // Shrunk while the planted error persists: down to 4 keys (3 would be judged), one batch entry.
  const AttnvErrorShrinkResult s = shrink_attnv_error(probe, r.genome, *r.attnv_error, claims, opt.judging, 20);
  EXPECT_TRUE(s.recurred);
  const Case small = fuzz::genome_case(s.genome, claims, opt.judging.backward && claims.backward);
  EXPECT_EQ(small.problem.shape.Tk, 4) << fuzz::case_line(small, fuzz::genome_layout(s.genome, claims));
  EXPECT_EQ(small.problem.shape.B, 1);
  EXPECT_NE(s.error.find("planted harness error: Tk 4"), std::string::npos) << s.error;
  EXPECT_THROW(fuzz::judge_genome(probe, s.genome, claims, opt.judging), HarnessError) << "the saved case meets it";
}

// Another error of attnv's (or a judged case) on a smaller input is another defect: not kept.
TEST(FuzzSearch, ShrinkingAttnvsErrorKeepsOnlyTheSameError) {
  HarnessFailsByKeys probe(/*other_from=*/20);
  const Capabilities claims = fuzz::fuzzed_claims(probe, DType::f32);
  const fuzz::DifferentialOptions judging;
  std::string error;
  try {
    fuzz::judge_genome(probe, genome_with_keys(30), claims, judging);
  } catch (const HarnessError& e) {
    error = e.what();
  }
  ASSERT_NE(error.find("other planted error"), std::string::npos) << "30 keys meet the other error: " << error;
  const AttnvErrorShrinkResult s = shrink_attnv_error(probe, genome_with_keys(30), error, claims, judging, 20);
  EXPECT_GT(keys_of(s.genome), 20) << "a step that met the first planted error was kept";
  EXPECT_LT(keys_of(s.genome), 30) << "nothing was shrunk";
  EXPECT_NE(s.error.find("other planted error"), std::string::npos) << s.error;
}

// An error that does not come back when the found case is judged again is not shrunk, and the
// result says so: shrinking it would keep whatever smaller case happened to throw.
class HarnessFailsOnItsFirstCallOnly final : public kernels::NarrowedKernel {
 public:
  HarnessFailsOnItsFirstCallOnly() : NarrowedKernel(std::make_unique<kernels::NaiveKernel>(), [](Capabilities&) {}) {}
  void forward(const Problem& p, const KernelViews& v) override {
    if (calls_++ == 0) throw HarnessError("planted harness error: call 1");
    NarrowedKernel::forward(p, v);
  }

 private:
  int calls_ = 0;
};

TEST(FuzzSearch, AnErrorThatDoesNotRecurIsNotShrunk) {
  HarnessFailsOnItsFirstCallOnly probe;
  const Capabilities claims = fuzz::fuzzed_claims(probe, DType::f32);
  const fuzz::DifferentialOptions judging;
  const fuzz::Genome g = genome_with_keys(30);
  EXPECT_THROW(fuzz::judge_genome(probe, g, claims, judging), HarnessError);  // met once, as in the search
  const AttnvErrorShrinkResult s = shrink_attnv_error(probe, g, "planted harness error: call 1", claims, judging, 20);
  EXPECT_FALSE(s.recurred);
  EXPECT_EQ(s.steps, 0);
  EXPECT_EQ(keys_of(s.genome), 30) << "the found case is kept as found";
}

// A finding is shrunk past candidates attnv cannot judge (it used to end the command there as
// attnv's internal error, the finding lost): those steps are not kept.
TEST(FuzzSearch, ShrinkingAFindingSkipsStepsAttnvCannotJudge) {
  NanOutputPastTwoKeys probe;
  const Capabilities claims = fuzz::fuzzed_claims(probe, DType::f32);
  const fuzz::DifferentialOptions judging;
  const fuzz::Genome g = genome_with_keys(30);
  const fuzz::Verdict v = fuzz::judge_genome(probe, g, claims, judging);
  ASSERT_TRUE(v.finding.has_value()) << "the NaN output is a finding on 30 keys";
  ShrinkResult s;
  ASSERT_NO_THROW(s = shrink(probe, g, *v.finding, claims, judging, 20));
  EXPECT_EQ(keys_of(s.genome), 3) << "down to the smallest case attnv judges";
  EXPECT_EQ(s.finding.kind, v.finding->kind);
}

// A kernel that fails a case only on its first call (not deterministic there) is not shrunk:
// judged again, the found case passes, and the result says so. The same kernel failing on every
// call is shrunk.
class NanOutputOnItsFirstCallOnly final : public kernels::NarrowedKernel {
 public:
  explicit NanOutputOnItsFirstCallOnly(bool every_call)
      : NarrowedKernel(std::make_unique<kernels::NaiveKernel>(), [](Capabilities&) {}), every_call_(every_call) {}
  void forward(const Problem& p, const KernelViews& v) override {
    NarrowedKernel::forward(p, v);
    if (calls_++ == 0 || every_call_) static_cast<float*>(v.out.data)[0] = std::numeric_limits<float>::quiet_NaN();
  }

 private:
  bool every_call_;
  int calls_ = 0;
};

TEST(FuzzSearch, AFindingThatDoesNotRecurIsNotShrunk) {
  for (const bool every_call : {false, true}) {
    NanOutputOnItsFirstCallOnly probe(every_call);
    const Capabilities claims = fuzz::fuzzed_claims(probe, DType::f32);
    const fuzz::DifferentialOptions judging;
    const fuzz::Genome g = genome_with_keys(30);
    const fuzz::Verdict v = fuzz::judge_genome(probe, g, claims, judging);  // found, as in the search
    ASSERT_TRUE(v.finding.has_value()) << "the first call's NaN output is a finding";
    const ShrinkResult s = shrink(probe, g, *v.finding, claims, judging, 20);
    EXPECT_EQ(s.recurred, every_call);
    EXPECT_EQ(s.rejudge_attnv_error, "") << "the kernel's nondeterminism, not attnv's error";
    EXPECT_EQ(s.finding.kind, v.finding->kind);
    if (every_call) {
      EXPECT_GT(s.steps, 0);
      EXPECT_LT(keys_of(s.genome), 30);
    } else {
      EXPECT_EQ(s.steps, 0);
      EXPECT_EQ(keys_of(s.genome), 30) << "the found case is kept as found";
    }
  }
}

// attnv's own error when it judges the found case again is not charged to the kernel as
// nondeterminism: the case is kept as found and the result names attnv's error.
TEST(FuzzSearch, AttnvsErrorJudgingAFindingAgainIsNotTheKernelsNondeterminism) {
  class NanThenAttnvError final : public kernels::NarrowedKernel {
   public:
    NanThenAttnvError() : NarrowedKernel(std::make_unique<kernels::NaiveKernel>(), [](Capabilities&) {}) {}
    bool harness_fails = false;
    void forward(const Problem& p, const KernelViews& v) override {
      if (harness_fails) throw HarnessError("planted harness error on the second judgement");
      NarrowedKernel::forward(p, v);
      static_cast<float*>(v.out.data)[0] = std::numeric_limits<float>::quiet_NaN();
    }
  };
  NanThenAttnvError probe;
  const Capabilities claims = fuzz::fuzzed_claims(probe, DType::f32);
  const fuzz::DifferentialOptions judging;
  const fuzz::Genome g = genome_with_keys(30);
  const fuzz::Verdict v = fuzz::judge_genome(probe, g, claims, judging);
  ASSERT_TRUE(v.finding.has_value());
  probe.harness_fails = true;
  const ShrinkResult s = shrink(probe, g, *v.finding, claims, judging, 20);
  EXPECT_FALSE(s.recurred);
  EXPECT_EQ(s.steps, 0);
  EXPECT_NE(s.rejudge_attnv_error.find("planted harness error on the second judgement"), std::string::npos)
      << s.rejudge_attnv_error;
}

// The same kernel without the planted error runs clean: the error, not the search, stopped it.
TEST(FuzzSearch, TheSameSearchWithoutTheErrorRunsClean) {
  SearchOptions opt;
  opt.dtype = DType::f32;
  opt.max_seconds = 1;
  opt.seed = 7;
  const KernelFactory make = [] { return std::unique_ptr<Kernel>(std::make_unique<kernels::NaiveKernel>()); };
  const SearchResult r = run_search(make, opt, nullptr);
  EXPECT_FALSE(r.attnv_error.has_value());
  EXPECT_FALSE(r.finding.has_value());
  EXPECT_GT(r.status.execs, 0);
}

}  // namespace
}  // namespace attnv::fuzz
