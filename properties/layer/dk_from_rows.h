#pragma once
// dK of a backward assembled from one-row cases, with its bound (used by the dropout backward
// check, dropout_check.h, where no single plain case has the dropout's dS but each query row
// alone does).
//
// The kernel computes dK_jd = scale sum_k dS_k q_kd over the N = G Tq rows k of a KV head, in
// any order. Row k's one-row case gives its term exactly, t_k = scale dS_k q_kd, and a bound b_k
// on the kernel's error in that term computed alone (reference/bound/BOUND.md 5.5, 5.6, with
// n = 1):
//   b_k = (1 + g3) E_k + g3 |t_k| + W_k,   E_k = |scale| e_S,k |q_kd|,  W_k = eta (2 U_k + 4),
// where g_n = gamma_n of the accumulator. The same sections bound the full sum by
//   T = sum_k [(1 + gN) E_k + gN |t_k|] + eta (2 sum_k U_k + 4),   gN = gamma_(N+2).
// With rho = (1 + gN) / (1 + g3) >= 1 and E_k <= (b_k - g3 |t_k| - W_k) / (1 + g3):
//   T <= sum_k [rho (b_k - g3 |t_k|) + gN |t_k|] - (rho - 1) sum_k W_k - 4 eta (N - 1)
//     <= sum_k [rho (b_k - g3 |t_k|) + gN |t_k|],
// which is what bound() returns (b_k's own |dS| is rounded up, so b_k - g3 |t_k| does not go
// below the rest of b_k; the subtraction keeps a 2^-48 margin for its doubles), times
// (1 + 4 (N + 4) 2^-53) for the double sums here. exact() is the terms' compensated sum.
#include <cstdint>
#include <vector>

#include "problem/problem.h"

namespace attnv::layer {

class DkFromRows {
 public:
  // s: the full case's shape; G its group size; u the accumulator's unit roundoff.
  DkFromRows(const Shape& s, std::int64_t G, double u);
  // Adds one query row's one-row case (batch b, KV head g): its exact dk and bound, each
  // [Tk x Dk] in the one-row case's dense layout.
  void add_row(std::int64_t b, std::int64_t g, const std::vector<double>& exact_dk, const std::vector<double>& bound_dk);
  double exact(std::int64_t b, std::int64_t g, std::int64_t j, std::int64_t d) const;
  double bound(std::int64_t b, std::int64_t g, std::int64_t j, std::int64_t d) const;

 private:
  std::size_t at(std::int64_t b, std::int64_t g, std::int64_t j, std::int64_t d) const;
  Shape s_;
  double g3_, gN_, rho_, sum_slack_;
  std::vector<double> sum_, comp_, bound_;  // Neumaier sum of the terms, its compensation, the bound
};

}  // namespace attnv::layer
