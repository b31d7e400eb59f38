// Hidden values are never read (NaN there cannot leak); non-finite values that are read throw
// InputError naming the tensor and element.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "problem/error.h"
#include "reference/oracle/oracle.h"
#include "reference/oracle/tests/test_cases.h"
#include "problem/visibility.h"

namespace attnv::reference {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Every output of forward and backward, bit for bit.
void expect_same_outputs(const Outputs& a, const Outputs& b, const std::string& what) {
  EXPECT_TRUE(oracle_test::bitwise_equal(a.out, b.out)) << what;
  EXPECT_TRUE(oracle_test::bitwise_equal(a.lse, b.lse)) << what;
  EXPECT_TRUE(oracle_test::bitwise_equal(a.dq, b.dq)) << what;
  EXPECT_TRUE(oracle_test::bitwise_equal(a.dk, b.dk)) << what;
  EXPECT_TRUE(oracle_test::bitwise_equal(a.dv, b.dv)) << what;
}

bool key_visible_to_any_query(const Case& c, std::int64_t b, std::int64_t j) {
  for (std::int64_t h = 0; h < c.problem.shape.Hq; ++h)
    for (std::int64_t i = 0; i < c.problem.shape.Tq; ++i)
      if (visible(c, b, h, i, j)) return true;
  return false;
}

bool bias_visible_in_any_batch(const Case& c, std::int64_t i, std::int64_t j) {
  for (std::int64_t b = 0; b < c.problem.shape.B; ++b)
    for (std::int64_t h = 0; h < c.problem.shape.Hq; ++h)
      if (visible(c, b, h, i, j)) return true;
  return false;
}

// Poison everything no visible (b, i, j) reads: K/V rows of keys no query sees, q and dout rows
// of rows without keys, hidden bias entries that are finite (a -inf stays: it is what hides).
Case poison_hidden(const Case& c) {
  Case p = c;
  const Shape& s = c.problem.shape;
  for (std::int64_t b = 0; b < s.B; ++b) {
    for (std::int64_t j = 0; j < s.Tk; ++j)
      if (!key_visible_to_any_query(c, b, j))
        for (std::int64_t h = 0; h < s.Hkv; ++h) {
          for (std::int64_t d = 0; d < s.Dk; ++d) p.k[c.ki(b, h, j, d)] = kNaN;
          for (std::int64_t d = 0; d < s.Dv; ++d) p.v[c.vi(b, h, j, d)] = d % 2 ? kInf : kNaN;
        }
    for (std::int64_t i = 0; i < s.Tq; ++i)
      for (std::int64_t h = 0; h < s.Hq; ++h)
        if (visible_keys(c, b, h, i).empty()) {
          for (std::int64_t d = 0; d < s.Dk; ++d) p.q[c.qi(b, h, i, d)] = kNaN;
          for (std::int64_t d = 0; d < s.Dv; ++d) p.dout[c.oi(b, h, i, d)] = kNaN;
        }
  }
  if (c.problem.has_bias)
    for (std::int64_t i = 0; i < s.Tq; ++i)
      for (std::int64_t j = 0; j < s.Tk; ++j)
        if (!bias_visible_in_any_batch(c, i, j) && std::isfinite(c.bias[c.bi(0, 0, i, j)]))
          p.bias[c.bi(0, 0, i, j)] = kNaN;
  return p;
}

TEST(OracleInputErrors, NaNInHiddenPositionsChangesNothing) {
  int poisoned_cases = 0;
  for (std::uint64_t seed = 100; seed < 160; ++seed) {
    const Case c = oracle_test::tiny_random_case(seed, true);
    const Case p = poison_hidden(c);
    if (p.k != c.k || p.q != c.q || p.bias != c.bias) ++poisoned_cases;  // NaN != anything
    for (Backend be : {Backend::mpfr, Backend::cpp_bin_float})
      expect_same_outputs(oracle_backward(c, be), oracle_backward(p, be), c.id);
  }
  EXPECT_GE(poisoned_cases, 20);  // the generator does hide things; otherwise this tests nothing
}

// A case where everything is visible except key 2 (beyond kv_len), with one row fully masked.
Case small_visible_case() {
  Problem p;
  p.dtype = DType::f32;
  p.shape = Shape{1, 2, 1, 2, 3, 2, 2};
  p.has_kv_len = true;
  p.has_mask = true;
  p.has_bias = true;
  Case c = make_zero_case(p, true);
  c.kv_len = {2};
  c.mask[c.mi(0, 0, 0, 0)] = c.mask[c.mi(0, 0, 0, 1)] = 0;  // row 0 sees nothing
  for (std::size_t n = 0; n < c.q.size(); ++n) c.q[n] = 0.25 * static_cast<double>(n % 5);
  for (std::size_t n = 0; n < c.k.size(); ++n) c.k[n] = 0.5 - 0.125 * static_cast<double>(n);
  for (std::size_t n = 0; n < c.v.size(); ++n) c.v[n] = static_cast<double>(n);
  for (double& x : c.dout) x = 1;
  return c;
}

void expect_input_error(const Case& c, bool backward, const std::string& needle) {
  try {
    if (backward) oracle_backward(c); else oracle_forward(c);
    ADD_FAILURE() << "no InputError; expected one mentioning " << needle;
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(OracleInputErrors, NonFiniteReadValuesThrowNamingTheElement) {
  const Case base = small_visible_case();
  EXPECT_NO_THROW(oracle_backward(base));
  {
    Case c = base;
    c.k[c.ki(0, 0, 1, 1)] = kNaN;  // key 1 is visible to row 1
    expect_input_error(c, false, "k[0,0,1,1]");
  }
  {
    Case c = base;
    c.v[c.vi(0, 0, 0, 0)] = kInf;
    expect_input_error(c, false, "v[0,0,0,0]");
  }
  {
    Case c = base;
    c.q[c.qi(0, 1, 1, 0)] = -kInf;  // row 1 of head 1 has keys
    expect_input_error(c, false, "q[0,1,1,0]");
  }
  {
    Case c = base;
    c.q[c.qi(0, 1, 0, 0)] = kNaN;  // row 0 has no keys: q is not read
    EXPECT_NO_THROW(oracle_forward(c));
  }
  {
    Case c = base;
    c.k[c.ki(0, 0, 2, 0)] = kNaN;  // key 2 is beyond kv_len
    EXPECT_NO_THROW(oracle_backward(c));
  }
  for (double bad : {kNaN, kInf}) {
    Case c = base;
    c.bias[c.bi(0, 0, 1, 0)] = bad;
    expect_input_error(c, false, "bias[1,0]");
  }
  {
    Case c = base;
    c.bias[c.bi(0, 0, 0, 0)] = kNaN;  // masked out by the boolean mask: not read
    EXPECT_NO_THROW(oracle_forward(c));
  }
  {
    Case c = base;
    c.dout[c.oi(0, 0, 1, 1)] = kNaN;  // dout is read by the backward only
    EXPECT_NO_THROW(oracle_forward(c));
    expect_input_error(c, true, "dout[0,0,1,1]");
  }
  {
    Case c = base;
    c.k.pop_back();
    expect_input_error(c, false, "k has 5 elements, expected 6");
  }
  {
    Case c = base;
    c.dout.clear();
    expect_input_error(c, true, "dout is needed (backward) but the case has none");
  }
  EXPECT_THROW(oracle_row(base, 0, 2, 0), InputError);  // Hq = 2
  {
    Case c = base;
    c.k[c.ki(0, 0, 1, 0)] = kNaN;
    EXPECT_THROW(oracle_row(c, 0, 0, 1), InputError);   // row 1 reads key 1
    EXPECT_NO_THROW(oracle_row(c, 0, 0, 0));            // row 0 reads nothing
  }
}

}  // namespace
}  // namespace attnv::reference
