#pragma once
// The tile loop: one block of query rows of one (batch, head) against its visible key tiles.
#include <cstdint>

#include "core/forward_params.h"
#include "core/microkernels.h"
#include "core/workspace.h"

namespace attnv::core {

struct QueryBlock {
  std::int64_t b = 0, h = 0;  // batch and query head
  std::int64_t i0 = 0, i1 = 0;  // query rows [i0, i1), at most kQueryBlock
};

// Computes O and LSE of the block's rows and writes them to p.views.out / p.views.lse.
template <class T>
void forward_query_block(const ForwardParams& p, const MicroKernels<T>& mk, Workspace<T>& ws,
                         const QueryBlock& qb);

}  // namespace attnv::core
