#pragma once
// Packed variable-length sequences (docs/semantics.md, "Packed variable-length sequences") in
// the core: the simplest correct way, one ordinary call per sequence. Each sequence's views are
// the packed views offset to its first query and first key, and its problem is that sequence
// alone (B = 1, Tq = len_q[s], keys len_k[s]), so the core's own alignment, causal rule, window,
// ALiBi and fully-masked-row handling all see local positions, as the spec asks, with no varlen
// code in the tile loops. Not the fastest (a short sequence gets its own parallel_for); a
// production varlen kernel would put sequences into the work-item list instead.
#include <functional>

#include "problem/problem.h"
#include "problem/tensor.h"

namespace attnv::core {

using SequenceCall = std::function<void(const Problem&, const KernelViews&)>;

// The forward: run(problem, views) once per sequence with at least one query, in order. The
// problem always has kv_len = [len_k[s]] (or the problem's kv_len[s], the keys the sequence
// uses: per-sequence key lengths) and Tk = max(len_k[s], 1): a sequence with no keys is
// then an ordinary call whose every row is fully masked (O = 0, LSE = -inf, or the sink's), its
// K and V views pointing at packed row 0, which a kv_len of 0 never reads.
void forward_by_sequence(const Problem& p, const KernelViews& views, const SequenceCall& run);

// The backward: run once per sequence with queries and keys. The others are written here: a
// sequence without keys has dQ = 0 on its rows (and adds nothing to dsinks: D = O . dO = 0),
// one without queries dK = dV = 0 on its keys. With sinks each call writes its share of dsinks
// into an accumulator-typed buffer (f32, f64 for f64 storage), summed in that type over the
// sequences and rounded once to the storage dtype, as one call would (BOUND.md section 5.7).
void backward_by_sequence(const Problem& p, const KernelViews& views, const SequenceCall& run);

}  // namespace attnv::core
