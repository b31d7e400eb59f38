#pragma once
// Internal to the bound: the forward bound of one query row (BOUND.md sections 2-4), shared by
// forward_bound() and backward_bound() (the backward needs the O and LSE errors it inherits).
#include <vector>

#include "reference/bound/logit_error.h"

namespace attnv::bound::detail {

struct RowForward {
  std::vector<double> out;  // Dv bounds on |O_hat - O| before the output rounding
  std::vector<double> range;  // Dv: Bounds::out_range of the row
  double lse = 0;           // bound on |L_hat - L| before the output rounding
};

// `exact_out` points at the row's Dv exact outputs.
RowForward forward_row(const Case& c, const ModelConstants& k, const RowTerms& r,
                       std::int64_t b, std::int64_t h, const double* exact_out);

// Throws InputError when `exact` lacks a tensor the bound needs (or the case lacks dout).
void require_outputs(const Case& c, const Outputs& exact, bool backward);

}  // namespace attnv::bound::detail
