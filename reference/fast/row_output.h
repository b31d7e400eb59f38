#pragma once
// O_i = sum_j P_ij v_j for one row, correctly rounded where the radius decides it: shared by the
// forward and the backward pass.
#include <cstdint>

#include "problem/case.h"
#include "reference/fast/accumulator.h"
#include "reference/fast/row_softmax.h"

namespace attnv::reference::fast_detail {

// Writes lse and out of row (b, h, i) from its weights into the sink. Throws InputError naming a
// non-finite visible v.
void write_row_output(const RowContext& ctx, std::int64_t b, std::int64_t h, std::int64_t i,
                      const RowWeights& w, Accumulators& acc, ElementSink& sink);

}  // namespace attnv::reference::fast_detail
