// Dropout (docs/dropout.md): Philox known answers in both implementations, the core's mask equals
// the reference's, p = 0 and inference are bitwise the no-dropout forward, the dropout forward
// is within the reference's bound (and the check catches wrong masks, a missing rescale and no
// dropout at all), and the dropout backward's dV and dQ are within the bound at p = 1/2, 3/4.
#include <cstdio>
#include <cmath>
#include <cstring>
#include <random>
#include <stdexcept>

#include <gtest/gtest.h>

#include "core/core_kernel.h"
#include "core/dropout.h"
#include "problem/buffers.h"
#include "problem/error.h"
#include "properties/layer/dropout_check.h"
#include "reference/dropout/dropout_mask.h"

namespace attnv::layer::testing {
namespace {

using Words = std::array<std::uint32_t, 4>;
struct Kat {
  Words ctr;
  std::array<std::uint32_t, 2> key;
  Words out;
};
// Random123 kat_vectors, philox4x32 with 10 rounds.
const Kat kKats[] = {
    {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
    {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff},
     {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
    {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0},
     {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
};

TEST(Dropout, PhiloxKnownAnswers) {
  for (const Kat& k : kKats) {
    EXPECT_EQ(core::philox4x32_10(k.ctr, k.key), k.out);
    EXPECT_EQ(reference::philox4x32_10(k.ctr, k.key), k.out);
  }
}

TEST(Dropout, CoreMaskEqualsReferenceMask) {
  std::int64_t kept = 0, total = 0;
  for (const double p : {0.1, 0.5, 1.0 / 3.0, 0.9, 1e-9}) {
    for (const std::uint64_t seed : {0ull, 42ull, 0xDEADBEEFCAFEF00Dull}) {
      const core::DropoutOptions d{p, seed, true};
      const std::uint64_t thr = core::dropout_threshold(p);
      for (std::int64_t b = 0; b < 2; ++b)
        for (std::int64_t h = 0; h < 3; ++h)
          for (std::int64_t i = 0; i < 7; ++i) {
            std::vector<float> row(67, 1.0f);
            core::dropout_row(d, thr, b, h, i, 0, 67, row.data());
            for (std::int64_t j = 0; j < 67; ++j) {
              const bool r = reference::dropout_kept(p, seed, b, h, i, j);
              ASSERT_EQ(core::dropout_keep(d, thr, b, h, i, j), r) << p << " " << seed << " " << b << h << i << j;
              ASSERT_EQ(row[static_cast<std::size_t>(j)] == 1.0f, r);
              if (p == 0.5) {
                kept += r;
                ++total;
              }
            }
          }
    }
  }
  // 7,236 Bernoulli(1/2) draws: the kept share lies within 0.5 +- 0.03 unless something is
  // badly wrong (5 standard deviations: 0.0294).
  const double share = static_cast<double>(kept) / static_cast<double>(total);
  EXPECT_NEAR(share, 0.5, 0.03);
}

Case random_case(const Problem& p, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0, 1);
  std::uniform_real_distribution<double> unit(0, 1);
  Case c = make_zero_case(p);
  c.id = "dropout/" + std::to_string(seed);
  for (auto* v : {&c.q, &c.k, &c.v})
    for (double& x : *v) x = normal(rng);
  for (auto& m : c.mask) m = unit(rng) < 0.8;
  for (double& b : c.bias) b = 0.5 * normal(rng);
  for (auto& k : c.kv_len) k = static_cast<std::int64_t>(unit(rng) * static_cast<double>(p.shape.Tk + 1)) % (p.shape.Tk + 1);
  round_to_storage(c);
  return c;
}

std::vector<Problem> problems(DType t) {
  std::vector<Problem> out;
  Problem a;
  a.shape = Shape{2, 4, 2, 37, 70, 16, 12};  // two key tiles, GQA
  a.dtype = t;
  out.push_back(a);
  Problem b = a;
  b.causal = true;
  b.alignment = Alignment::bottom_right;
  b.has_kv_len = true;
  out.push_back(b);
  Problem c = a;
  c.has_mask = true;
  c.has_bias = true;
  c.softcap = 15.0;
  out.push_back(c);
  return out;
}

bool bitwise_same(const Outputs& a, const Outputs& b) {
  return a.out == b.out && a.lse == b.lse;  // NaN-free cases: == is bitwise (incl. signed zeros aside)
}

TEST(Dropout, ZeroPOrInferenceIsBitwiseNoDropout) {
  std::uint64_t seed = 1;
  for (const DType t : {DType::f32, DType::bf16, DType::f64})
    for (const Problem& p : problems(t)) {
      const Case c = random_case(p, seed++);
      core::CoreKernel plain;
      core::ForwardOptions zero;
      zero.dropout = {0.0, 99, true};
      core::ForwardOptions inference;
      inference.dropout = {0.3, 99, false};
      core::CoreKernel k0(zero), ki(inference);
      const Outputs a = run_forward(plain, c), b = run_forward(k0, c), d = run_forward(ki, c);
      // Bit patterns, so -0 vs 0 would count: compare through memcmp of the doubles.
      ASSERT_EQ(a.out.size(), b.out.size());
      EXPECT_EQ(0, std::memcmp(a.out.data(), b.out.data(), a.out.size() * sizeof(double)));
      EXPECT_EQ(0, std::memcmp(a.out.data(), d.out.data(), a.out.size() * sizeof(double)));
      EXPECT_TRUE(bitwise_same(a, b) && bitwise_same(a, d));
    }
}

TEST(Dropout, ForwardWithinReferenceBound) {
  std::uint64_t seed = 10;
  for (const DType t : {DType::f32, DType::f16, DType::bf16, DType::f64})
    for (const Problem& p : problems(t))
      for (const double prob : {0.1, 0.5}) {
        const Case c = random_case(p, seed++);
        core::ForwardOptions o;
        o.dropout = {prob, 1234 + seed, true};
        core::CoreKernel k(o);
        const Outputs got = run_forward(k, c);
        const DropoutCheck r = check_dropout_forward(c, got, prob, o.dropout.seed, k.precision(t));
        EXPECT_TRUE(r.ok()) << describe(p) << " p=" << prob << ": " << r.failures << " failures, " << r.worst;
        EXPECT_GT(r.dropped, 0);
        std::printf("%-4s p=%.1f %-60s worst ratio %.3g (%lld kept, %lld dropped)\n", std::string(dtype_name(t)).c_str(),
                    prob, describe(p).c_str(), r.worst_ratio, static_cast<long long>(r.kept),
                    static_cast<long long>(r.dropped));
      }
}

// The check is not vacuous: the wrong seed, the missing 1/(1-p) rescale and no dropout at all
// each fail, on the same case the correct call passes.
TEST(Dropout, CheckCatchesWrongDropout) {
  const Problem p = problems(DType::f32)[0];
  const Case c = random_case(p, 77);
  const double prob = 0.2;
  core::ForwardOptions o;
  o.dropout = {prob, 5, true};
  core::CoreKernel k(o);
  const PrecisionModel m = k.precision(DType::f32);
  const Outputs good = run_forward(k, c);
  ASSERT_TRUE(check_dropout_forward(c, good, prob, 5, m).ok());
  EXPECT_FALSE(check_dropout_forward(c, good, prob, 6, m).ok()) << "wrong seed";
  Outputs unscaled = good;
  for (double& x : unscaled.out) x = round_to(DType::f32, x * (1 - prob));
  EXPECT_FALSE(check_dropout_forward(c, unscaled, prob, 5, m).ok()) << "no rescale";
  core::CoreKernel plain;
  EXPECT_FALSE(check_dropout_forward(c, run_forward(plain, c), prob, 5, m).ok()) << "no dropout";
}

// The dropout backward at p = 1/2 and 3/4 (exact rescale): dV and dQ within the bound of the
// equivalent plain cases, dK within the bound assembled from the one-row cases (dropout_check.h).
TEST(Dropout, BackwardWithinReferenceBound) {
  // Every problem kind in f32 at p = 1/2; bf16 and f64 at p = 3/4 (the dV reference runs one
  // backward per key: ~0.5 s per problem).
  struct Run {
    DType t;
    int problem;
    double prob;
  };
  std::uint64_t seed = 500;
  for (const Run run : {Run{DType::f32, 0, 0.5}, Run{DType::f32, 1, 0.5}, Run{DType::f32, 2, 0.5},
                        Run{DType::bf16, 2, 0.75}, Run{DType::f64, 1, 0.75}}) {
    Problem p = problems(run.t)[static_cast<std::size_t>(run.problem)];
    p.shape.Tq = 21;
    p.shape.Tk = 67;  // two key tiles
    Case c = random_case(p, seed++);
    c.dout.resize(static_cast<std::size_t>(out_elements(p.shape)));
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> normal(0, 1);
    for (double& x : c.dout) x = round_to(run.t, normal(rng));
    core::ForwardOptions o;
    o.dropout = {run.prob, 77 + seed, true};
    core::CoreKernel k(o);
    const Outputs got = run_backward(k, c);
    const DropoutCheck r = check_dropout_backward(c, got, run.prob, o.dropout.seed, k.precision(run.t));
    EXPECT_TRUE(r.ok()) << describe(p) << " p=" << run.prob << ": " << r.failures << " failures, " << r.worst;
    std::printf("backward p=%.2f %-58s dq+dk+dv worst ratio %.3g over %lld elements\n", run.prob, describe(p).c_str(),
                r.worst_ratio, static_cast<long long>(r.elements));
  }
}

// The backward check is not vacuous: gradients of the plain backward on the dropout forward's
// O and LSE (the mask forgotten in the backward), and of another seed's mask, fail.
TEST(Dropout, BackwardCheckCatchesWrongGradients) {
  Problem p = problems(DType::f32)[0];
  p.shape.Tq = 13;
  p.shape.Tk = 40;
  Case c = random_case(p, 91);
  c.dout.assign(static_cast<std::size_t>(out_elements(p.shape)), 0.0);
  std::mt19937_64 rng(4);
  std::normal_distribution<double> normal(0, 1);
  for (double& x : c.dout) x = round_to(DType::f32, normal(rng));
  core::ForwardOptions o;
  o.dropout = {0.5, 8, true};
  core::CoreKernel k(o);
  const PrecisionModel m = k.precision(DType::f32);
  const Outputs good = run_backward(k, c);
  ASSERT_TRUE(check_dropout_backward(c, good, 0.5, 8, m).ok());
  EXPECT_FALSE(check_dropout_backward(c, good, 0.5, 9, m).ok()) << "wrong seed";
  // The plain backward from the dropout forward's O and LSE: the core's backward with dropout
  // off, fed the views the dropout forward wrote.
  CaseBuffers buf(c, Layout::bhtd, true);
  k.forward(c.problem, buf.views());
  core::CoreKernel plain;
  plain.backward(c.problem, buf.views());
  const Outputs plain_grads = buf.outputs();
  const DropoutCheck forgot = check_dropout_backward(c, plain_grads, 0.5, 8, m);
  EXPECT_FALSE(forgot.ok()) << "mask forgotten in the backward";
  // dK alone wrong (the mask forgotten in dK only): caught, and on dk.
  Outputs dk_only = good;
  dk_only.dk = plain_grads.dk;
  const DropoutCheck dk_wrong = check_dropout_backward(c, dk_only, 0.5, 8, m);
  EXPECT_FALSE(dk_wrong.ok()) << "mask forgotten in dK only";
  EXPECT_EQ(dk_wrong.worst.rfind("dk[", 0), 0u) << dk_wrong.worst;
  // dK off by one rounding step of its own size in one element: caught.
  Outputs nudged = good;
  std::size_t big = 0;
  for (std::size_t i = 0; i < nudged.dk.size(); ++i)
    if (std::abs(nudged.dk[i]) > std::abs(nudged.dk[big])) big = i;
  nudged.dk[big] *= 1 + 1e-3;
  EXPECT_FALSE(check_dropout_backward(c, nudged, 0.5, 8, m).ok()) << "dK element off by 1e-3 relative";
  EXPECT_THROW(check_dropout_backward(c, good, 0.3, 8, m), std::invalid_argument);
}

TEST(Dropout, PMustBeBelowOne) {
  Problem p = problems(DType::f32)[0];
  Case c = random_case(p, 3);
  c.dout.assign(static_cast<std::size_t>(out_elements(p.shape)), 0.5);
  core::ForwardOptions o;
  o.dropout = {1.0, 1, true};
  core::CoreKernel bad(o);
  EXPECT_THROW(run_forward(bad, c), InputError);
  EXPECT_THROW(run_backward(bad, c), InputError);
  o.dropout.p = -0.1;
  core::CoreKernel negative(o);
  EXPECT_THROW(run_forward(negative, c), InputError);
  o.dropout.p = std::nan("");
  core::CoreKernel nan_p(o);
  EXPECT_THROW(run_forward(nan_p, c), InputError);
}

}  // namespace
}  // namespace attnv::layer::testing
