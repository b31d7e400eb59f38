#pragma once
// The reference for a dropout forward (docs/dropout.md): the mask from reference/dropout
// (written from the document, not from core/), and, row by row, attention of query i with V
// replaced by m_i o V through reference::fast_forward and bound::forward_bound, divided by (1 - p)
// with the rescale's roundings added to the bound (derivation: docs/dropout.md).
#include <cstdint>
#include <string>

#include "problem/case.h"
#include "problem/precision.h"

namespace attnv::layer {

struct DropoutCheck {
  std::int64_t elements = 0, failures = 0;  // out and lse
  double worst_ratio = 0;                   // max |kernel - exact| / threshold
  std::string worst;                        // "out[b,h,i,d] kernel ... exact ... threshold ..."
  std::int64_t kept = 0, dropped = 0;       // mask counts over every (b, h, i, j)
  bool ok() const { return failures == 0 && elements > 0; }
};

// `got`: the kernel's out and lse for case c under dropout (p, seed), in the dense layout.
DropoutCheck check_dropout_forward(const Case& c, const Outputs& got, double p, std::uint64_t seed,
                                   const PrecisionModel& m);

// The backward of a dropout forward, for p with 1/(1-p) a power of two (p = 1/2, 3/4, ...),
// where the rescale is exact and the dropout backward is, element by element, the plain FA2
// backward of a modified case (so reference::fast_backward and bound::backward_bound apply as they are):
//   dV_j (batch b, KV head g): dv_j of the case (b; g's query heads) with dO_hi <- r m_hij dO_hi;
//   dQ_i (b, h): dq of the one-row case of row i with V <- r m_i o V (the forward's O of that
//   case is, bit for bit, the stored dropout O, so the bound's D from the kernel's O holds).
//   dK_j (b, g): no single plain case has the dropout's dS (it mixes each row's D with the key's
//   mask), but each row's one-row case above has that row's term scale dS_ij q_i exactly; the
//   terms are summed over g's rows and their bounds composed into one (dk_from_rows.h).
// `got` holds out, lse, dq, dv and dk (dk may be empty: then it is not judged); c must have
// dout. Throws std::invalid_argument for other p.
DropoutCheck check_dropout_backward(const Case& c, const Outputs& got, double p, std::uint64_t seed,
                                    const PrecisionModel& m);

}  // namespace attnv::layer
