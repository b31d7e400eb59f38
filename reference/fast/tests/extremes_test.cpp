// The oracle against the fast reference at the edges of the problem space: window sides near
// 2^63, kv_len 0 and Tk, both alignments with Tq > Tk and Tq < Tk, f64 subnormal values and
// products, logits near +-2^63, near the f32 maximum and past 2^1000, one visible key, exact ties
// and exact zeros; then a RapidCheck property over every problem parameter within the schema's
// limits. The two references share no visibility code (oracle_visibility.h), so a misreading of
// SPEC in either shows up here as a disagreement. Decided elements must agree bit for bit,
// undecided ones lie within the fast radius; a refusal must be one the oracle confirms (the exact
// LSE is not finite in f64).
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "gen/rng.h"
#include "problem/error.h"
#include "problem/validate.h"
#include "reference/fast/fast.h"
#include "reference/fast/tests/agreement.h"
#include "reference/oracle/oracle.h"
#include "problem/visibility.h"

namespace attnv::reference {
namespace {

using test::Agreement;

constexpr std::int64_t kMaxSide = std::numeric_limits<std::int64_t>::max();

struct Tally {
  std::int64_t cases = 0, backward = 0, refused = 0;  // refused: LSE not finite in f64 (oracle-confirmed)
  std::int64_t refused_f64 = 0;  // refused: f64 values past 2^300 overflowing an intermediate product
  Agreement a;
};

// True when the oracle says some row with visible keys has an LSE that is not finite in f64:
// the only reason the fast reference may refuse a case of finite inputs.
bool oracle_confirms_lse_overflow(const Case& c) {
  const Outputs o = oracle_forward(c);
  const Shape& s = c.problem.shape;
  for (std::int64_t b = 0; b < s.B; ++b)
    for (std::int64_t h = 0; h < s.Hq; ++h)
      for (std::int64_t i = 0; i < s.Tq; ++i)
        if (!visible_keys(c, b, h, i).empty() && !std::isfinite(o.lse[c.li(b, h, i)])) return true;
  return false;
}

// f64 inputs may also be refused with an overflow message when values past 2^300 meet in a
// product (q k, dO v, dS k can leave the double range though the exact results are finite):
// documented in reference/fast/README.md. f32, f16 and bf16 inputs never are.
bool f64_values_past_2_300(const Case& c) {
  if (c.problem.dtype != DType::f64) return false;
  const auto big = [](const std::vector<double>& x) {
    return std::any_of(x.begin(), x.end(), [](double v) { return std::isfinite(v) && std::fabs(v) >= 0x1p300; });
  };
  return big(c.q) || big(c.k) || big(c.v) || big(c.dout) || big(c.bias) || c.problem.effective_scale() >= 0x1p300;
}

// One case through both references; failures are recorded in t.a (first_problem says which).
void cross_check(const Case& c, Tally& t) {
  ++t.cases;
  const bool backward = c.has_dout();
  if (backward) ++t.backward;
  FastAccuracy acc;
  Outputs fast;
  try {
    fast = backward ? fast_backward(c, {}, nullptr, &acc) : fast_forward(c, {}, nullptr, &acc);
  } catch (const InputError& e) {
    const bool lse_overflow = oracle_confirms_lse_overflow(c);
    const bool f64_overflow = f64_values_past_2_300(c) && std::string(e.what()).find("overflow") != std::string::npos;
    if (lse_overflow) ++t.refused;
    else if (f64_overflow) ++t.refused_f64;
    if (!lse_overflow && !f64_overflow) {
      ++t.a.mismatched;
      t.a.note(c.id + ": fast reference refused a case with a finite LSE: " + e.what());
    }
    return;
  }
  OracleAccuracy oacc;
  const Outputs oracle = backward ? oracle_backward(c, Backend::mpfr, &oacc) : oracle_forward(c, Backend::mpfr, &oacc);
  test::compare(c.id + " out", fast.out, oracle.out, acc.radius.out, acc.resolved.out, oacc.radius.out, t.a);
  test::compare(c.id + " lse", fast.lse, oracle.lse, acc.radius.lse, acc.resolved.lse, oacc.radius.lse, t.a);
  if (!backward) return;
  test::compare(c.id + " dq", fast.dq, oracle.dq, acc.radius.dq, acc.resolved.dq, oacc.radius.dq, t.a);
  test::compare(c.id + " dk", fast.dk, oracle.dk, acc.radius.dk, acc.resolved.dk, oacc.radius.dk, t.a);
  test::compare(c.id + " dv", fast.dv, oracle.dv, acc.radius.dv, acc.resolved.dv, oacc.radius.dv, t.a);
}

void report(const char* what, const Tally& t) {
  std::printf("[ measured ] %s: %lld cases (%lld with the backward; refused: %lld whose LSE is not finite in f64, "
              "%lld f64 cases whose values past 2^300 overflow a product)\n",
              what, static_cast<long long>(t.cases), static_cast<long long>(t.backward),
              static_cast<long long>(t.refused), static_cast<long long>(t.refused_f64));
  test::report(what, t.a);
}

// Magnitude classes for the values of one tensor.
enum class Values { normal, zeros, ties, subnormal, huge, wide_exponents, count };

double largest_finite(DType t) {
  switch (t) {
    case DType::f16: return 65504.0;
    case DType::bf16: return 0x1.fep127;
    case DType::f32: return FLT_MAX;
    default: return DBL_MAX;
  }
}

double smallest_subnormal(DType t) {
  switch (t) {
    case DType::f16: return 0x1p-24;
    case DType::bf16: return 0x1p-133;
    case DType::f32: return 0x1p-149;
    default: return 0x1p-1074;
  }
}

// Fills one tensor (already sized) with values of the class, rounded to the storage dtype later.
void fill(std::vector<double>& x, Values kind, DType t, gen::Rng& rng) {
  const double tie = rng.normal();
  for (double& v : x) {
    switch (kind) {
      case Values::normal: v = rng.normal(); break;
      case Values::zeros: v = rng.bernoulli(0.7) ? 0.0 : rng.normal(); break;
      case Values::ties: v = tie; break;
      case Values::subnormal:
        v = smallest_subnormal(t) * static_cast<double>(rng.uniform_int(-6, 6));
        break;
      case Values::huge: v = largest_finite(t) * rng.uniform(-1, 1); break;
      case Values::wide_exponents: {
        const int top = t == DType::f64 ? 1000 : (t == DType::f16 ? 15 : 127);
        v = std::ldexp(rng.uniform(-1, 1), static_cast<int>(rng.uniform_int(-top, top)));
        break;
      }
      case Values::count: break;
    }
  }
}

Problem small_problem(DType t, std::int64_t Tq, std::int64_t Tk, std::int64_t D) {
  Problem p;
  p.shape = {1, 1, 1, Tq, Tk, D, D};
  p.dtype = t;
  return p;
}

Case finish_case(Case c, const std::string& id) {
  round_to_storage(c);
  c.id = id;
  const std::vector<std::string> errs = check_case(c);
  if (!errs.empty()) ADD_FAILURE() << id << ": " << errs.front();
  return c;
}

// ---- Regressions: each failed on the code before its fix (decided and wrong, or refused). ----

// Defect: window sides near 2^63 wrapped around in pos + wr and pos - wl, so rows lost all their
// keys (lse -inf, O = 0, marked decided). [-1, 2^63 - 1] must behave like no window at all.
TEST(Extremes, WindowSidesNear2To63BehaveLikeNoWindow) {
  Problem p = small_problem(DType::f64, 3, 3, 1);
  p.scale = 1.0;
  Case c = make_zero_case(p);
  c.q = {1, 2, 3};
  c.k = {0.5, 1, 1.5};
  c.v = {1, 2, 3};
  const Outputs plain = fast_forward(c);
  for (const auto& [wl, wr] : {std::pair{std::int64_t{-1}, kMaxSide}, {kMaxSide, std::int64_t{-1}},
                               {kMaxSide, kMaxSide}, {kMaxSide - 1, kMaxSide - 1}}) {
    Case w = c;
    w.problem.window = {wl, wr};
    FastStats stats;
    const Outputs fast = fast_forward(w, {}, &stats);
    const Outputs oracle = oracle_forward(w);
    for (std::size_t i = 0; i < 3; ++i) {
      EXPECT_EQ(fast.lse[i], plain.lse[i]) << "window (" << wl << ", " << wr << ") row " << i;
      EXPECT_EQ(oracle.lse[i], plain.lse[i]) << "window (" << wl << ", " << wr << ") row " << i;
      EXPECT_EQ(fast.out[i], plain.out[i]);
    }
    EXPECT_EQ(stats.unresolved, 0);
  }
  // And the bottom-right causal rows with a huge left side keep exactly the causal keys.
  Case causal = c;
  causal.problem.causal = true;
  causal.problem.window = {kMaxSide, 0};
  const Outputs fast = fast_forward(causal);
  EXPECT_EQ(fast.lse[0], 0.5);  // row 0 sees key 0 only: L = q k = 0.5
  EXPECT_TRUE(std::isfinite(fast.lse[1]) && std::isfinite(fast.lse[2]));
}

// Defect: when every product P v underflowed, the accumulator read 0 with radius 0 and the
// element was marked decided: three tied keys with v = 2^-1074 have O = 2^-1074 exactly.
TEST(Extremes, SubnormalSumsAreNeverDecidedWrong) {
  Problem p = small_problem(DType::f64, 1, 3, 1);
  Case c = make_zero_case(p, true);
  c.q = {1};
  c.k = {1, 1, 1};
  c.v = {0x1p-1074, 0x1p-1074, 0x1p-1074};
  c.dout = {0x1p-1074};
  FastAccuracy acc;
  const Outputs fast = fast_backward(c, {}, nullptr, &acc);
  const Outputs oracle = oracle_backward(c);
  EXPECT_EQ(oracle.out[0], 0x1p-1074);
  // dV_j = P_j dO = 2^-1074 / 3: its correctly rounded double is 0, and the fast one must not
  // claim more than it knows.
  for (std::size_t j = 0; j < 3; ++j) EXPECT_EQ(oracle.dv[j], 0.0);
  if (acc.resolved.out[0] != 0)
    EXPECT_EQ(fast.out[0], oracle.out[0]);
  else
    EXPECT_GE(acc.radius.out[0] + 0x1p-1074, std::fabs(fast.out[0] - 0x1p-1074));

  // dV_0 = P_0 dO with P_0 = 0.8 (logits log 4 apart): exact 0.8 * 2^-1074, rounds to 2^-1074.
  Problem p2 = small_problem(DType::f64, 1, 2, 1);
  p2.scale = 1.0;
  Case d = make_zero_case(p2, true);
  d.q = {1};
  d.k = {std::log(4.0), 0};
  d.v = {1, 1};
  d.dout = {0x1p-1074};
  FastAccuracy acc2;
  const Outputs fast2 = fast_backward(d, {}, nullptr, &acc2);
  const Outputs oracle2 = oracle_backward(d);
  EXPECT_EQ(oracle2.dv[0], 0x1p-1074);
  if (acc2.resolved.dv[0] != 0)
    EXPECT_EQ(fast2.dv[0], oracle2.dv[0]);
  else
    EXPECT_GE(acc2.radius.dv[0] + 0x1p-1074, std::fabs(fast2.dv[0] - 0.8 * 0x1p-1074));
}

// Defect: the row maximum took the high part of the double-double logits only, so past 2^62 the
// low part (here 1000) reached exp and overflowed, and the case was refused as "finite values of
// v overflow". The exact answer is ordinary: O = 0.5, LSE = 2^63 + 1000 (nearest double 2^63).
TEST(Extremes, LogitsOf2To63AreComputed) {
  Problem p = small_problem(DType::f32, 1, 1, 2);
  p.shape.Dv = 1;
  p.scale = 1.0;
  Case c = make_zero_case(p);
  c.q = {0x1p63, 1000};
  c.k = {1, 1};
  c.v = {0.5};
  FastAccuracy acc;
  const Outputs fast = fast_forward(c, {}, nullptr, &acc);
  EXPECT_EQ(fast.lse[0], 0x1p63);
  EXPECT_NE(acc.resolved.lse[0], 0);
  EXPECT_LE(std::fabs(fast.out[0] - 0.5), acc.radius.out[0] + 0x1p-54);
  const Outputs oracle = oracle_forward(c);
  EXPECT_EQ(oracle.lse[0], 0x1p63);
  EXPECT_EQ(oracle.out[0], 0.5);
}

// A logit past the double range: refused, and the message names the logit, not a tensor.
TEST(Extremes, LseOverflowIsRefusedWithItsRealCause) {
  Problem p = small_problem(DType::f32, 1, 2, 1);
  p.scale = 0x1p900;
  Case c = make_zero_case(p);
  c.q = {0x1p127};
  c.k = {1, -1};
  c.v = {1, 2};
  try {
    fast_forward(c);
    ADD_FAILURE() << "a logit of 2^1027 was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("log-sum-exp is not finite in f64"), std::string::npos) << e.what();
  }
  // The other key's logit is -2^1027: below the double range, weight 0, and the row is fine.
  c.q = {-0x1p127};
  c.k = {1, 0};
  FastAccuracy acc;
  const Outputs fast = fast_forward(c, {}, nullptr, &acc);
  EXPECT_EQ(fast.out[0], 2.0);
  EXPECT_EQ(fast.lse[0], 0.0);
  EXPECT_NE(acc.resolved.out[0], 0);
}

// A logit below -DBL_MAX is valid input whose weight is 0 (docs/semantics.md): an ALiBi slope of
// 1e308 at distance 2, a bias of -1e308 on a score of -1e308. Both were refused as a logit "above
// the double range" (the double-double sum of two huge negatives carried a NaN low part).
TEST(Extremes, LogitsBelowTheDoubleRangeHaveWeightZero) {
  Problem p = small_problem(DType::f64, 1, 3, 1);
  p.scale = 1.0;
  p.has_alibi = true;
  Case c = make_zero_case(p, true);
  c.alibi = {1e308};
  c.v = {1, 2, 3};
  c.dout = {1};
  FastAccuracy acc;
  Outputs fast = fast_forward(c, {}, nullptr, &acc);
  EXPECT_EQ(fast.out[0], 1.0);
  EXPECT_EQ(fast.lse[0], 0.0);
  EXPECT_NE(acc.resolved.out[0], 0);
  Outputs oracle = oracle_forward(c);
  EXPECT_EQ(oracle.out[0], 1.0);
  EXPECT_EQ(oracle.lse[0], 0.0);
  EXPECT_NO_THROW(fast_backward(c));

  Problem pb = small_problem(DType::f64, 1, 2, 1);
  pb.scale = 1.0;
  pb.has_bias = true;
  Case cb = make_zero_case(pb, true);
  cb.q = {-1e154};
  cb.k = {0, 1e154};  // key 0: score 0; key 1: score -1e308, and a bias of -1e308 on it
  cb.v = {5, 7};
  cb.bias = {0, -1e308};
  cb.dout = {1};
  fast = fast_forward(cb, {}, nullptr, &acc);
  EXPECT_EQ(fast.out[0], 5.0);
  EXPECT_EQ(fast.lse[0], 0.0);
  oracle = oracle_forward(cb);
  EXPECT_EQ(oracle.out[0], 5.0);
  EXPECT_EQ(oracle.lse[0], 0.0);
  EXPECT_NO_THROW(fast_backward(cb));
}

// The default scale is the double 1.0 / sqrt(Dk) (docs/semantics.md, "The default scale"), not
// the double nearest to 1/sqrt(Dk): for Dk = 8 they are adjacent doubles, and both references
// compute an unset scale exactly as the first set explicitly, and differently from the second.
TEST(Extremes, TheDefaultScaleIsOneOverSqrtDkEvaluatedInDouble) {
  const double in_double = 1.0 / std::sqrt(8.0), nearest = 0.35355339059327379;
  ASSERT_EQ(std::nextafter(in_double, 1.0), nearest);
  Problem p = small_problem(DType::f64, 2, 5, 8);
  Case c = make_zero_case(p);
  gen::Rng rng(8);
  for (auto* x : {&c.q, &c.k, &c.v}) fill(*x, Values::normal, DType::f64, rng);
  EXPECT_EQ(c.problem.effective_scale(), in_double);
  const Outputs unset = oracle_forward(c), unset_fast = fast_forward(c);
  c.problem.scale = in_double;
  const Outputs same = oracle_forward(c);
  c.problem.scale = nearest;
  const Outputs other = oracle_forward(c);
  EXPECT_EQ(unset.out, same.out);
  EXPECT_EQ(unset.lse, same.lse);
  EXPECT_NE(unset.lse, other.lse) << "the two readings must be told apart by the exact values";
  EXPECT_EQ(unset_fast.lse, unset.lse);
}

// A subnormal weight whose dS underflows (issue 39, item 2): P_1 = e^-740 / (1 + e^-740) ~ 4e-322,
// dS ~ +-4e-325 below the smallest subnormal, and the gradients 16 dS and -46.25 dS subnormal
// again: exact dK = [-6.54e-324, 6.54e-324], dQ = -1.89e-323. They came back 0.0, decided, radius
// 0. Every decided element must now be the oracle's, every undecided one within its radius.
TEST(Extremes, SubnormalGradientsOfAnUnderflowingDsAreNotDecidedWrong) {
  Problem p = small_problem(DType::f64, 1, 2, 1);
  p.scale = 1.0;
  Case c = make_zero_case(p, true);
  c.q = {16};
  c.k = {0, -46.25};
  c.v = {0, 0x1p-10};
  c.dout = {1};
  FastAccuracy acc;
  const Outputs fast = fast_backward(c, {}, nullptr, &acc);
  OracleAccuracy oacc;
  const Outputs oracle = oracle_backward(c, Backend::mpfr, &oacc);
  EXPECT_LT(oracle.dq[0], 0);
  EXPECT_LT(oracle.dk[0], 0);
  EXPECT_GT(oracle.dk[1], 0);
  Agreement a;
  test::compare("dq", fast.dq, oracle.dq, acc.radius.dq, acc.resolved.dq, oacc.radius.dq, a);
  test::compare("dk", fast.dk, oracle.dk, acc.radius.dk, acc.resolved.dk, oacc.radius.dk, a);
  test::compare("dv", fast.dv, oracle.dv, acc.radius.dv, acc.resolved.dv, oacc.radius.dv, a);
  EXPECT_TRUE(a.ok()) << a.first_problem;
}

// ---- The differential test over the extremes. ----

// Windows and alignments: every side from {-1, 0, 1, Tk, 2^62, 2^63 - 2, 2^63 - 1}, both
// alignments, causal or not, kv_len 0, Tk and in between, Tq > Tk and Tq < Tk.
TEST(Extremes, WindowsAlignmentsAndPaddingAgree) {
  Tally t;
  const std::int64_t sides[] = {-1, 0, 1, 3, std::int64_t{1} << 62, kMaxSide - 1, kMaxSide};
  gen::Rng rng(20261125);
  int n = 0;
  for (const auto& [Tq, Tk] : {std::pair{std::int64_t{5}, std::int64_t{3}}, {3, 5}, {4, 4}})
    for (const std::int64_t wl : sides)
      for (const std::int64_t wr : sides)
        for (const Alignment align : {Alignment::top_left, Alignment::bottom_right})
          for (const bool causal : {false, true}) {
            Problem p = small_problem(DType::f64, Tq, Tk, 2);
            p.shape.B = 3;
            p.has_kv_len = true;
            p.alignment = align;
            p.causal = causal;
            p.window = {wl, wr};
            Case c = make_zero_case(p, ++n % 4 == 0);
            c.kv_len = {0, Tk, 1 + n % Tk};
            for (auto* x : {&c.q, &c.k, &c.v, &c.dout}) fill(*x, Values::normal, DType::f64, rng);
            cross_check(finish_case(std::move(c), "window(" + std::to_string(wl) + "," + std::to_string(wr) + ")/" +
                                                      std::to_string(Tq) + "x" + std::to_string(Tk) + "/" +
                                                      (align == Alignment::top_left ? "tl" : "br") +
                                                      (causal ? "/causal" : "")),
                        t);
          }
  report("extremes: windows, alignments, kv_len (f64)", t);
  EXPECT_TRUE(t.a.ok()) << t.a.first_problem;
  EXPECT_EQ(t.refused + t.refused_f64, 0);
  EXPECT_EQ(t.a.unresolved, 0);
}

// Values at the edges of each dtype, one visible key, ties and exact zeros.
TEST(Extremes, ValuesAtTheEdgesAgree) {
  Tally t;
  gen::Rng rng(7);
  int n = 0;
  for (const DType dt : {DType::f64, DType::f32, DType::f16, DType::bf16})
    for (int qk = 0; qk < static_cast<int>(Values::count); ++qk)
      for (int v = 0; v < static_cast<int>(Values::count); ++v)
        for (const bool one_key : {false, true}) {
          Problem p = small_problem(dt, 3, 4, 3);
          p.shape.Hq = 2;
          p.has_mask = one_key;
          if (qk == static_cast<int>(Values::huge)) p.scale = 1.0;  // keep the logits as large as the values
          Case c = make_zero_case(p, ++n % 2 == 0);
          if (one_key) {
            std::fill(c.mask.begin(), c.mask.end(), 0);
            for (std::int64_t i = 0; i < 3; ++i) c.mask[static_cast<std::size_t>(i * 4 + (i + n) % 4)] = 1;
          }
          fill(c.q, static_cast<Values>(qk), dt, rng);
          fill(c.k, static_cast<Values>(qk), dt, rng);
          fill(c.v, static_cast<Values>(v), dt, rng);
          fill(c.dout, static_cast<Values>(v), dt, rng);
          cross_check(finish_case(std::move(c), std::string(dtype_name(dt)) + "/qk" + std::to_string(qk) + "/v" +
                                                    std::to_string(v) + (one_key ? "/one_key" : "")),
                      t);
        }
  // Logits near +-2^63 and past 2^1000 (f64), near the f32 maximum, and the same mixed with
  // ordinary keys so that some weights underflow and some do not.
  for (const double logit : {0x1p63, -0x1p63, 0x1p62 * 3, static_cast<double>(FLT_MAX), 0x1p1000, -0x1p1000})
    for (const bool mixed : {false, true})
      for (const DType dt : {DType::f64, DType::f32}) {
        if (dt == DType::f32 && std::fabs(logit) > FLT_MAX) continue;
        Problem p = small_problem(dt, 2, 4, 2);
        p.scale = 1.0;
        Case c = make_zero_case(p, ++n % 2 == 0);
        for (std::size_t e = 0; e < c.q.size(); ++e) c.q[e] = e % 2 == 0 ? logit : static_cast<double>(e);
        for (std::size_t e = 0; e < c.k.size(); ++e) c.k[e] = e % 2 == 0 ? (mixed && e > 3 ? 0.5 : 1.0) : 1000.0;
        fill(c.v, Values::normal, dt, rng);
        fill(c.dout, Values::normal, dt, rng);
        char id[64];
        std::snprintf(id, sizeof id, "logit%a/%s%s", logit, std::string(dtype_name(dt)).c_str(), mixed ? "/mixed" : "");
        cross_check(finish_case(std::move(c), id), t);
      }
  report("extremes: values at the edges, one key, ties, zeros, huge logits", t);
  EXPECT_TRUE(t.a.ok()) << t.a.first_problem;
  EXPECT_GT(t.a.compared, 5000);
}

// Every problem parameter drawn from its whole range within the schema's limits (windows up to
// 2^63 - 1, kv_len 0..Tk, any finite positive scale and softcap, masks, -inf biases), with the
// value classes above; small shapes so the oracle stays fast.
TEST(Extremes, RandomProblemsWithinSchemaLimitsAgree) {
  Tally t;
  const bool ok = rc::check("fast reference equals the oracle wherever it decides", [&t] {
    const DType dt = *rc::gen::element(DType::f64, DType::f32, DType::f16, DType::bf16);
    Problem p;
    const std::int64_t Hkv = *rc::gen::inRange<std::int64_t>(1, 3);
    p.shape = {*rc::gen::inRange<std::int64_t>(1, 3), Hkv * *rc::gen::inRange<std::int64_t>(1, 3), Hkv,
               *rc::gen::inRange<std::int64_t>(1, 7), *rc::gen::inRange<std::int64_t>(1, 7),
               *rc::gen::inRange<std::int64_t>(1, 5), *rc::gen::inRange<std::int64_t>(1, 5)};
    p.dtype = dt;
    const auto side = [&] {
      switch (*rc::gen::inRange(0, 4)) {
        case 0: return std::int64_t{-1};
        case 1: return *rc::gen::inRange<std::int64_t>(0, p.shape.Tk + 2);
        case 2: return kMaxSide - *rc::gen::inRange<std::int64_t>(0, 3);
        default: return *rc::gen::inRange<std::int64_t>(0, kMaxSide);
      }
    };
    p.window = {side(), side()};
    p.causal = *rc::gen::arbitrary<bool>();
    p.alignment = *rc::gen::arbitrary<bool>() ? Alignment::top_left : Alignment::bottom_right;
    if (*rc::gen::arbitrary<bool>()) p.scale = std::ldexp(1.0 + *rc::gen::inRange(0, 1000) / 1000.0, *rc::gen::inRange(-60, 60));
    if (*rc::gen::inRange(0, 4) == 0) p.softcap = std::ldexp(1.0 + *rc::gen::inRange(0, 1000) / 1000.0, *rc::gen::inRange(-10, 40));
    p.has_kv_len = *rc::gen::arbitrary<bool>();
    p.has_mask = *rc::gen::inRange(0, 3) == 0;
    p.has_bias = *rc::gen::inRange(0, 3) == 0;
    const bool backward = *rc::gen::arbitrary<bool>();
    const auto seed = *rc::gen::arbitrary<std::uint32_t>();
    const auto qk = static_cast<Values>(*rc::gen::inRange(0, static_cast<int>(Values::count)));
    const auto v = static_cast<Values>(*rc::gen::inRange(0, static_cast<int>(Values::count)));
    gen::Rng rng(seed);
    Case c = make_zero_case(p, backward);
    for (auto& L : c.kv_len) L = rng.uniform_int(0, p.shape.Tk);
    for (auto& m : c.mask) m = rng.bernoulli(0.7) ? 1 : 0;
    for (double& b : c.bias) b = rng.bernoulli(0.15) ? -kInf : rng.normal() * std::ldexp(1.0, static_cast<int>(rng.uniform_int(-4, 12)));
    fill(c.q, qk, dt, rng);
    fill(c.k, qk, dt, rng);
    fill(c.v, v, dt, rng);
    fill(c.dout, v, dt, rng);
    const std::string id = describe(p) + "/seed" + std::to_string(seed);
    Case cs = finish_case(std::move(c), id);
    const std::int64_t failures = t.a.mismatched + t.a.outside;
    cross_check(cs, t);
    RC_ASSERT(t.a.mismatched + t.a.outside == failures);
  });
  report("extremes: random problems within the schema's limits", t);
  EXPECT_TRUE(ok) << t.a.first_problem;
}

}  // namespace
}  // namespace attnv::reference
