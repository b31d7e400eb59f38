// The evidence folder of a failure and its rejudgement (properties/conformance/evidence.h): a
// kernel that assumes dense BHTD strides fails R1 on BTHD and gapped cases; judged again from
// the folder, it still fails in that layout (the old reproducer re-ran BHTD and said "fixed"),
// and the correct kernel passes. A kernel that no longer claims the case is not judged at all,
// and evidence that no longer matches what the check does is attnv's error, not a verdict.
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>

#include <gtest/gtest.h>

#include "io/exchange.h"
#include "problem/error.h"
#include "problem/kernel_fault.h"
#include "properties/conformance/conformance.h"
#include "properties/conformance/evidence.h"
#include "kernels/mutants.h"
#include "kernels/naive_kernel.h"
#include "kernels/narrowed_kernel.h"

namespace attnv::conformance {
using namespace kernels;  // the kernels under test (kernels/)
namespace {

namespace fs = std::filesystem;

std::unique_ptr<Kernel> mutant(const std::string& name) {
  for (const kernels::Mutant& m : kernels::mutant_zoo())
    if (m.name == name) return m.make();
  throw std::runtime_error("no mutant " + name);
}

fs::path fresh(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("attnv_evidence_" + name);
  fs::remove_all(d);
  return d;
}

// Failures of `mutant_name` on requirement `id`, every one saved (up to `keep`).
std::vector<Evidence> failures(const std::string& mutant_name, const std::string& id, const fs::path& dir, int keep) {
  ConformanceOptions opt;
  opt.save_failures_dir = dir.string();
  opt.max_findings = keep;
  opt.stop_at_findings = true;
  const std::unique_ptr<Kernel> k = mutant(mutant_name);
  const RequirementResult r = run_requirement(*k, id, DType::f32, opt);
  EXPECT_EQ(r.verdict, Verdict::fail) << describe(r);
  std::vector<Evidence> out;
  for (const Finding& f : r.findings) {
    const std::optional<Evidence> e = read_evidence(f.saved_case);
    EXPECT_TRUE(e.has_value()) << f.saved_case;
    if (e) out.push_back(*e);
  }
  return out;
}

TEST(Evidence, ALayoutBugStillFailsInItsLayoutUntilFixed) {
  const fs::path dir = fresh("layouts");
  std::set<Layout> seen;
  for (const Evidence& e : failures("dense_strides_assumed", "R1", dir, 12)) {
    seen.insert(e.pc.layout);
    EXPECT_NE(e.pc.layout, Layout::bhtd) << "dense BHTD views are what this kernel gets right";
    EXPECT_NE(e.pc.c.id.find(std::string(layout_name(e.pc.layout))), std::string::npos) << e.pc.c.id;
    ASSERT_EQ(e.runs.size(), 1u);
    EXPECT_EQ(e.runs[0].layout, e.pc.layout);
    EXPECT_FALSE(e.finding.empty());

    const std::unique_ptr<Kernel> broken = mutant("dense_strides_assumed");
    const Rejudgement still = rejudge(*broken, e);
    EXPECT_EQ(still.mismatch, "");
    EXPECT_TRUE(still.result.judged() && !still.result.ok) << "repro must not say fixed: " << still.result;
    kernels::NaiveKernel fixed;
    const Rejudgement now = rejudge(fixed, e);
    EXPECT_TRUE(now.result.judged() && now.result.ok) << now.result;
    EXPECT_EQ(now.runs_compared, 1);

    // A kernel that does not claim strided views cannot be judged on this case: not "fixed".
    kernels::NarrowedKernel dense(std::make_unique<kernels::NaiveKernel>(), [](Capabilities& c) { c.strided = false; });
    const Rejudgement unclaimed = rejudge(dense, e);
    EXPECT_FALSE(unclaimed.result.judged()) << unclaimed.result;
    EXPECT_EQ(unclaimed.result.status, checks::Status::not_claimed) << unclaimed.result;
  }
  EXPECT_EQ(seen, (std::set<Layout>{Layout::bthd, Layout::gapped})) << "both strided layouts were judged again";
  fs::remove_all(dir);
}

// A capability the requirement needs and the kernel no longer claims: R2's case judged again
// with a kernel that claims no backward is not claimed, not "fixed".
TEST(Evidence, ARequirementsCapabilityNoLongerClaimedIsNotJudged) {
  const fs::path dir = fresh("capability");
  const std::vector<Evidence> es = failures("dk_missing_scale", "R2", dir, 1);
  ASSERT_EQ(es.size(), 1u);
  kernels::NarrowedKernel forward_only(std::make_unique<kernels::NaiveKernel>(), [](Capabilities& c) { c.backward = false; });
  const Rejudgement j = rejudge(forward_only, es[0]);
  EXPECT_EQ(j.result.status, checks::Status::not_claimed) << j.result;
  kernels::NaiveKernel fixed;
  EXPECT_TRUE(rejudge(fixed, es[0]).result.judged());
  fs::remove_all(dir);
}

TEST(Evidence, TheFolderHoldsEveryCallOutputsReferenceAndBound) {
  const fs::path dir = fresh("folder");
  const std::vector<Evidence> es = failures("mask_after_softmax", "R5", dir, 1);
  ASSERT_EQ(es.size(), 1u);
  const Evidence& e = es[0];
  EXPECT_EQ(e.id, "R5");
  EXPECT_GE(e.runs.size(), 2u) << "the original and the perturbed run";
  EXPECT_FALSE(e.runs[0].out.out.empty());
  // The perturbed run's inputs differ from the original's in K or V (the hidden keys changed).
  EXPECT_TRUE(e.runs[0].c.k != e.runs[1].c.k || e.runs[0].c.v != e.runs[1].c.v || e.runs[0].c.bias != e.runs[1].c.bias);
  // R1's evidence also holds the exact values and bounds beside the call they judged.
  const std::vector<Evidence> r1 = failures("no_max_subtraction", "R1", dir, 1);
  ASSERT_EQ(r1.size(), 1u);
  const std::string folder = "R1_matches_reference_f32_case" + std::to_string(r1[0].case_index);
  for (const char* f : {"q.npy", "k.npy", "v.npy", "out.npy", "ref_out.npy", "bound_out.npy"})
    EXPECT_TRUE(fs::exists(dir / folder / "run1" / f)) << f;
  EXPECT_TRUE(fs::exists(dir / folder / "finding.txt"));
  for (const fs::directory_entry& d : fs::directory_iterator(dir))
    EXPECT_EQ(d.path().filename().string().find(".partial"), std::string::npos) << "no half-written folder is left";
  fs::remove_all(dir);
}

TEST(Evidence, EvidenceThatNoLongerMatchesTheCheckIsAttnvsError) {
  const fs::path dir = fresh("mismatch");
  const std::vector<Evidence> es = failures("mask_after_softmax", "R5", dir, 1);
  ASSERT_EQ(es.size(), 1u);
  kernels::NaiveKernel k;
  // Another check seed perturbs other keys: the second call's inputs are not the recorded ones.
  Evidence other_seed = es[0];
  other_seed.pc.seed += 1;
  const Rejudgement a = rejudge(k, other_seed);
  EXPECT_NE(a.mismatch.find("call 2 of the check"), std::string::npos) << a.mismatch;
  // An edited input: the first call already differs.
  Evidence edited = es[0];
  edited.runs[0].c.q[0] += 1;
  const Rejudgement b = rejudge(k, edited);
  EXPECT_EQ(b.mismatch, "call 1 of the check: q differs");
  fs::remove_all(dir);
}

// Which code of the kernel failed is recorded with the failure (Kernel::configuration(): the
// core's ISA path, a plugin's options), so `attnv repro` can refuse to judge it with other code;
// evidence written before attnv recorded it reads as "unknown", not as "no configuration".
TEST(Evidence, TheKernelsConfigurationIsRecordedWithItsFailure) {
  struct Configured final : kernels::NarrowedKernel {
    Configured() : NarrowedKernel(mutant("no_max_subtraction"), [](Capabilities&) {}) {}
    std::string configuration() const override { return "--kernel-option mode=fast"; }
  };
  const fs::path dir = fresh("configuration");
  ConformanceOptions opt;
  opt.save_failures_dir = dir.string();
  opt.max_findings = 1;
  opt.stop_at_findings = true;
  Configured k;
  const RequirementResult r = run_requirement(k, "R1", DType::f32, opt);
  ASSERT_EQ(r.findings.size(), 1u) << describe(r);
  const std::optional<Evidence> e = read_evidence(r.findings[0].saved_case);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->kernel_configuration, std::optional<std::string>("--kernel-option mode=fast"));
  EXPECT_NE(e->finding.find("(--kernel-option mode=fast)"), std::string::npos) << e->finding;
  // A kernel with none records "", which is not the same as an unrecorded one.
  const std::vector<Evidence> plain = failures("no_max_subtraction", "R1", dir / "plain", 1);
  ASSERT_EQ(plain.size(), 1u);
  EXPECT_EQ(plain[0].kernel_configuration, std::optional<std::string>(""));
  const fs::path manifest = fs::path(r.findings[0].saved_case) / "manifest.json";
  std::ifstream in(manifest);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string field = "\"kernel_configuration\":";
  const std::size_t at = text.find(field);
  ASSERT_NE(at, std::string::npos) << text.substr(0, 2000);
  text.replace(at, field.size(), "\"old_unread_field\":");
  std::ofstream(manifest) << text;
  const std::optional<Evidence> old = read_evidence(r.findings[0].saved_case);
  ASSERT_TRUE(old.has_value());
  EXPECT_FALSE(old->kernel_configuration.has_value());
  fs::remove_all(dir);
}

// Before a finding is kept its case is judged once more. A planted bug fails it again
// (recurred); a kernel whose first call writes NaN and whose later calls are right does not: the
// finding says the kernel is not deterministic there, and the evidence records it, so that repro
// will not call a later pass a fix. attnv's own error on the second judgement is neither:
// whether the kernel fails again is unknown, and nothing is said of its determinism.
class NanOnFirstCallThen final : public kernels::NarrowedKernel {
 public:
  enum class Later { right, attnv_error };
  explicit NanOnFirstCallThen(Later later)
      : NarrowedKernel(std::make_unique<kernels::NaiveKernel>(), [](Capabilities&) {}), later_(later) {}
  void forward(const Problem& p, const KernelViews& v) override {
    if (calls_++ > 0 && later_ == Later::attnv_error) throw HarnessError("planted: attnv could not make the call");
    NarrowedKernel::forward(p, v);
    if (calls_ == 1) static_cast<float*>(v.out.data)[0] = std::numeric_limits<float>::quiet_NaN();
  }

 private:
  Later later_;
  int calls_ = 0;
};

TEST(Evidence, AFindingIsJudgedAgainAndWhetherItRecurredIsRecorded) {
  const fs::path dir = fresh("recurred");
  const std::vector<Evidence> planted = failures("no_max_subtraction", "R1", dir / "planted", 1);
  ASSERT_EQ(planted.size(), 1u);
  EXPECT_EQ(planted[0].recurred, std::optional<bool>(true));

  ConformanceOptions opt;
  opt.save_failures_dir = (dir / "flaky").string();
  opt.max_findings = 1;
  for (const auto later : {NanOnFirstCallThen::Later::right, NanOnFirstCallThen::Later::attnv_error}) {
    fs::remove_all(dir / "flaky");
    NanOnFirstCallThen k(later);
    const RequirementResult r = run_requirement(k, "R1", DType::f32, opt);
    ASSERT_EQ(r.findings.size(), 1u) << describe(r);
    EXPECT_EQ(r.findings[0].case_index, 0) << "the first call failed";
    const std::optional<Evidence> e = read_evidence(r.findings[0].saved_case);
    ASSERT_TRUE(e.has_value());
    const bool said = r.findings[0].message.find("the kernel is not deterministic here") != std::string::npos;
    if (later == NanOnFirstCallThen::Later::right) {
      EXPECT_EQ(e->recurred, std::optional<bool>(false));
      EXPECT_TRUE(said) << r.findings[0].message;
      EXPECT_NE(e->finding.find("the kernel is not deterministic here"), std::string::npos) << e->finding;
      kernels::NaiveKernel now;
      EXPECT_TRUE(rejudge(now, *e).result.ok) << "the case itself is right with a correct kernel";
    } else {
      EXPECT_FALSE(e->recurred.has_value()) << "attnv's error on the second judgement: unknown";
      EXPECT_FALSE(said) << r.findings[0].message;
    }
  }
  fs::remove_all(dir);
}

// A case the reference declines (a log-sum-exp beyond the double range) cannot be judged: that
// is attnv's error, reported as such, and no verdict on the kernel (it used to be "threw: ...",
// a FAIL charged to the kernel).
TEST(Evidence, WhatAttnvCannotJudgeIsAttnvsErrorNotTheKernels) {
  Problem p;
  p.shape = Shape{1, 1, 1, 1, 2, 1, 1};
  p.dtype = DType::f32;
  p.scale = 0x1p900;
  Evidence e;
  e.id = "R1";
  e.property = "matches_reference";
  e.pc.c = make_zero_case(p);
  e.pc.c.q = {0x1p127};
  e.pc.c.k = {1, -1};
  e.pc.c.v = {1, 2};
  e.pc.c.id = "lse beyond f64";
  kernels::NaiveKernel k;
  const Rejudgement j = rejudge(k, e);
  EXPECT_EQ(j.result.status, checks::Status::attnv_error) << j.result;
  EXPECT_TRUE(j.result.ok) << "not a failure of the kernel";
  EXPECT_NE(j.result.message.find("log-sum-exp is not finite"), std::string::npos) << j.result.message;
}

TEST(Evidence, ReadingTellsAPlainExchangeFolderFromBrokenEvidence) {
  const fs::path dir = fresh("read");
  const std::vector<Evidence> es = failures("lost_rescale", "R9", dir, 1);
  ASSERT_EQ(es.size(), 1u);
  const fs::path folder = dir / ("R9_key_permutation_f32_case" + std::to_string(es[0].case_index));
  // A plain exchange folder (a fuzz reproducer, user cases) is no evidence: nullopt, not an error.
  const fs::path plain = dir / "plain";
  io::write_exchange(plain, std::vector<Case>{es[0].pc.c});
  EXPECT_FALSE(read_evidence(plain).has_value());
  // A manifest whose attnv_requirement lacks a field names it.
  std::ifstream in(folder / "manifest.json");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t at = text.find("\"check_seed\"");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 12, "\"checkseed\"");
  std::ofstream(folder / "manifest.json") << text;
  try {
    read_evidence(folder);
    ADD_FAILURE() << "accepted evidence without check_seed";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'check_seed'"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace attnv::conformance
