// Staged precision models (BOUND.md section 1, "Stages") on emulated kernels shaped like two
// production f16 paths: each is certified under the model it declares, fails under the
// one-dtype model it would have had to declare before (so the stages are needed), and is judged
// far more tightly than under the one-dtype superset that also covers it, tightly enough that a
// bug the superset hides is caught.
//
// Out of sample for the bound (seeds 300001...); small cases (Tk <= 64) so the f16 superset's
// gammas stay finite and the comparison of the two bounds means something.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "gen/families.h"
#include "kernels/emulated/emulated.h"
#include "problem/error.h"
#include "reference/bound/bound.h"
#include "reference/fast/fast.h"

namespace attnv::calibration {

using namespace bound;  // the bound it calibrates (reference/bound/)
namespace {

constexpr std::int64_t kCases = 300;

struct StagedKernel {
  std::string name;
  kernels::emulated::Config cfg;  // cfg.model is what it declares; the emulation follows it
};

// ggml's f16-KV vector path: f32 dot products and softmax, P and the P.V accumulator in f16
// (online softmax). onnxruntime's f16 CPU path: the score matrix and P in f16 between its GEMMs
// (naive: scores, softmax, then P.V). bf16: ggml's path with bf16 in place of f16.
std::vector<StagedKernel> staged_kernels() {
  std::vector<StagedKernel> out;
  for (DType st : {DType::f16, DType::bf16}) {
    StagedKernel k;
    k.cfg.model = PrecisionModel::natural(st, 32);
    k.cfg.model.p_dtype = st;
    k.cfg.model.pv = st;
    k.cfg.structure = kernels::emulated::Structure::tiled;
    k.name = std::string(dtype_name(st)) + " tiled32 P=" + std::string(dtype_name(st)) + " pv=" +
             std::string(dtype_name(st)) + " (ggml-like)";
    out.push_back(k);
  }
  StagedKernel ort;
  ort.cfg.model = PrecisionModel::natural(DType::f16, 0);
  ort.cfg.model.p_dtype = DType::f16;
  ort.cfg.model.score = DType::f16;
  ort.cfg.structure = kernels::emulated::Structure::naive;
  ort.name = "f16 naive P=f16 score=f16 (onnxruntime-like)";
  out.push_back(ort);
  return out;
}

// The same model without its stages: what a kernel had to declare before they existed.
PrecisionModel without_stages(PrecisionModel m) {
  m.dot = m.score = m.softmax = m.pv = std::nullopt;
  return m;
}

Case case_of(DType st, std::int64_t n, gen::Size size = gen::Size::small) {
  const std::vector<gen::Family> fams = gen::all_families();
  gen::FamilyOptions fo;
  fo.dtype = st;
  fo.size = size;
  fo.with_dout = false;
  return gen::make_case(fams[static_cast<std::size_t>(n) % fams.size()],
                        300001 + static_cast<std::uint64_t>(n), fo);
}

bool failed(const Outputs& got, const Outputs& exact, const Bounds& b, DType out) {
  return !compare(got, exact, b, out).ok();
}

bool same(const std::vector<double>& a, const std::vector<double>& b) {
  for (std::size_t e = 0; e < a.size(); ++e)
    if (!(a[e] == b[e] || (std::isnan(a[e]) && std::isnan(b[e])))) return false;
  return a.size() == b.size();
}

TEST(StagedModels, ProductionLikeKernelsAreCertifiedUnderTheirStagesOnly) {
  for (const StagedKernel& k : staged_kernels()) {
    const PrecisionModel& m = k.cfg.model;
    kernels::emulated::Config unstaged_kernel = k.cfg;  // the same kernel computing every stage in accum
    unstaged_kernel.model = without_stages(m);
    std::int64_t staged_failures = 0, differ = 0, caught_one_dtype = 0, judged = 0;
    std::vector<double> looseness;  // per case: median over O elements of superset / staged bound
    for (std::int64_t n = 0; n < kCases; ++n) {
      const Case c = case_of(m.storage, n);
      const Outputs exact = reference::fast_forward(c);
      const Outputs got = kernels::emulated::forward(c, k.cfg);
      const Bounds staged = forward_bound(c, exact, m);
      if (failed(got, exact, staged, m.out)) ++staged_failures;
      // Under the one-dtype model the stages' roundings are not covered.
      if (!same(got.out, kernels::emulated::forward(c, unstaged_kernel).out)) {
        ++differ;
        if (failed(got, exact, forward_bound(c, exact, without_stages(m)), m.out)) ++caught_one_dtype;
      }
      const Bounds superset = forward_bound(c, exact, m.unstaged());
      std::vector<double> ratio;
      for (std::size_t e = 0; e < staged.out.size(); ++e)
        if (staged.out[e] > 0 && std::isfinite(superset.out[e])) ratio.push_back(superset.out[e] / staged.out[e]);
      if (ratio.empty()) continue;
      std::nth_element(ratio.begin(), ratio.begin() + static_cast<std::ptrdiff_t>(ratio.size() / 2), ratio.end());
      looseness.push_back(ratio[ratio.size() / 2]);
      ++judged;
    }
    std::sort(looseness.begin(), looseness.end());
    const double median = looseness.empty() ? 0 : looseness[looseness.size() / 2];
    std::printf("%s: %lld cases, %lld staged-bound failures; stages change O in %lld, the "
                "one-dtype model fails %lld of them; superset / staged bound, median over cases "
                "of the median element: %.1f (%lld cases)\n",
                k.name.c_str(), static_cast<long long>(kCases), static_cast<long long>(staged_failures),
                static_cast<long long>(differ), static_cast<long long>(caught_one_dtype), median,
                static_cast<long long>(judged));
    EXPECT_EQ(staged_failures, 0) << k.name;
    // A third of the cases at least: the rest have one visible key, one-hot rows or no row.
    EXPECT_GT(differ, kCases / 3) << k.name << ": the stages must change the output";
    // Without its stages the model would charge a correct kernel with findings.
    EXPECT_GT(caught_one_dtype, 0) << k.name << ": the one-dtype model should not cover the stages";
    EXPECT_GT(median, 1.0) << k.name;
  }
}

// Soundness on longer rows (medium: Tk up to 2048, D up to 64), where the f16 accumulations
// are long.
TEST(StagedModels, StagedBoundsHoldOnMediumCases) {
  for (const StagedKernel& k : staged_kernels()) {
    std::int64_t failures = 0;
    double worst = 0, usage = 0;
    for (std::int64_t n = 0; n < 40; ++n) {
      const Case c = case_of(k.cfg.model.storage, n, gen::Size::medium);
      const Outputs exact = reference::fast_forward(c);
      const Comparison cmp = compare(kernels::emulated::forward(c, k.cfg), exact, forward_bound(c, exact, k.cfg.model), k.cfg.model.out);
      if (!cmp.ok()) ++failures;
      worst = std::max(worst, cmp.worst_ratio());
      for (const TensorReport& t : cmp.tensors) usage = std::max(usage, t.worst_bound_usage);
    }
    // With f16/bf16 outputs the threshold is mostly the output's half ulp: a ratio near 1 says
    // little; the usage (share of the derived bound used beyond the roundings) says how tight.
    std::printf("%s: 40 medium cases, worst error / threshold %.3f, bound usage %.3f\n",
                k.name.c_str(), worst, usage);
    EXPECT_EQ(failures, 0) << k.name;
  }
}

// A bug of the class the stages exist to expose: ggml-like, but its dot products also run in
// f16 while it declares them f32. The staged model catches it; the one-dtype superset (every
// stage in f16, which the bug fits) passes it.
TEST(StagedModels, AnUndeclaredF16StageIsCaughtUnderTheStagesAndHiddenByTheSuperset) {
  const StagedKernel k = staged_kernels().front();
  ASSERT_EQ(k.cfg.model.storage, DType::f16);
  kernels::emulated::Config bug = k.cfg;
  bug.model.dot = DType::f16;
  bug.model.score = DType::f16;
  const PrecisionModel& declared = k.cfg.model;
  std::int64_t affected = 0, caught_staged = 0, caught_superset = 0;
  for (std::int64_t n = 0; n < kCases; ++n) {
    const Case c = case_of(declared.storage, n);
    const Outputs exact = reference::fast_forward(c);
    const Outputs got = kernels::emulated::forward(c, bug);
    if (same(got.out, kernels::emulated::forward(c, k.cfg).out)) continue;
    ++affected;
    if (failed(got, exact, forward_bound(c, exact, declared), declared.out)) ++caught_staged;
    if (failed(got, exact, forward_bound(c, exact, declared.unstaged()), declared.out)) ++caught_superset;
  }
  std::printf("f16 dot products undeclared: affects %lld of %lld cases; caught in %lld under the "
              "staged model, %lld under the superset\n",
              static_cast<long long>(affected), static_cast<long long>(kCases),
              static_cast<long long>(caught_staged), static_cast<long long>(caught_superset));
  ASSERT_GT(affected, kCases / 3);
  EXPECT_GT(caught_staged, affected / 4);
  EXPECT_EQ(caught_superset, 0);
}

// The description names the stages that differ from accum, and unstaged() picks the least
// precise dtype, refusing a mix of f16 and bf16 (neither covers the other's range or bits).
TEST(StagedModels, DescribeAndUnstaged) {
  PrecisionModel m = PrecisionModel::natural(DType::f16);
  EXPECT_FALSE(m.staged());
  EXPECT_EQ(m.unstaged(), m);
  m.pv = DType::f16;
  m.dot = DType::f32;  // equal to accum: not a stage of its own
  EXPECT_TRUE(m.staged());
  EXPECT_NE(describe(m).find("pv=f16"), std::string::npos) << describe(m);
  EXPECT_EQ(describe(m).find("dot="), std::string::npos) << describe(m);
  EXPECT_EQ(m.unstaged().accum, DType::f16);
  EXPECT_FALSE(m.unstaged().staged());
  m.score = DType::bf16;
  EXPECT_THROW((void)m.unstaged(), InputError);
}

}  // namespace
}  // namespace attnv::calibration
