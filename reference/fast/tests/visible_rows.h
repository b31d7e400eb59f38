#pragma once
// Test helper for hand-made visibility cases (docs/semantics.md's worked examples): one batch
// entry, one head, Dv = 1, zero scores and v_j = 2^j, so each row's output is the mean of its
// visible keys' values and its LSE the log of their count. Checks the keys each row sees in the
// problem's visibility (problem/visibility.h) and the oracle's own, and both references' outputs.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "problem/validate.h"
#include "problem/visibility.h"
#include "reference/fast/fast.h"
#include "reference/oracle/oracle.h"
#include "reference/oracle/oracle_visibility.h"

namespace attnv::reference::test {

using Keys = std::vector<std::int64_t>;

inline void expect_rows_see(const Case& c, const std::vector<Keys>& want, const std::string& what) {
  ASSERT_TRUE(check_case(c).empty()) << check_case(c)[0];
  const Outputs fast = fast_forward(c), oracle = oracle_forward(c);
  for (std::int64_t i = 0; i < c.problem.shape.Tq; ++i) {
    const std::string where = what + ", row " + std::to_string(i);
    const Keys& keys = want[static_cast<std::size_t>(i)];
    EXPECT_EQ(visible_keys(c, 0, 0, i), keys) << where;
    EXPECT_EQ(oracle_detail::oracle_visible_keys(c, 0, 0, i), keys) << where;
    double mean = 0;
    for (std::int64_t j : keys) mean += c.v[static_cast<std::size_t>(j)];
    if (!keys.empty()) mean /= static_cast<double>(keys.size());
    EXPECT_EQ(fast.out[static_cast<std::size_t>(i)], mean) << where;
    EXPECT_EQ(oracle.out[static_cast<std::size_t>(i)], mean) << where;
    const double lse = keys.empty() ? -std::numeric_limits<double>::infinity() : std::log(static_cast<double>(keys.size()));
    EXPECT_EQ(fast.lse[static_cast<std::size_t>(i)], lse) << where;
    EXPECT_EQ(oracle.lse[static_cast<std::size_t>(i)], lse) << where;
  }
}

}  // namespace attnv::reference::test
