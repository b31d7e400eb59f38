#pragma once
// Every feature of the attention problem, in one list; a new feature is one file of this folder
// and one line here (docs/adding-a-feature.md). The per-kind lists everything else loops over are
// computed from it, in this order:
//   kClaims          the certificate's claims, in the order it prints them;
//   kProblemOptions  the later Problem options: manifest keys, attnv_problem fields, describe();
//   kHeadInputs      per-head inputs [Hq]: in this order in the call hash and the exchange folder;
//   kIndexInputs     int64 index arrays: likewise.
// The order is part of the certificate and the call hash: append new features, never reorder.
#include <array>
#include <cstddef>
#include <span>

#include "problem/features/alibi.h"
#include "problem/features/bias.h"
#include "problem/features/call_claims.h"
#include "problem/features/causal.h"
#include "problem/features/chunk.h"
#include "problem/features/feature.h"
#include "problem/features/gqa.h"
#include "problem/features/kv_len.h"
#include "problem/features/mask.h"
#include "problem/features/mask_bias_broadcast.h"
#include "problem/features/paged_kv.h"
#include "problem/features/scale.h"
#include "problem/features/seqused.h"
#include "problem/features/sinks.h"
#include "problem/features/softcap.h"
#include "problem/features/varlen.h"
#include "problem/features/window.h"

namespace attnv {

namespace features {

inline constexpr Feature kFeatures[] = {kGqa,  kCausal,     kWindow,            kMask,  kBias,    kKvLen,  kSoftcap, kScale,
                                        kCalls, kSinks,     kMaskBiasBroadcast, kAlibi, kPagedKv, kVarlen, kSeqused, kChunk};

// The rows of one kind, every feature's in registry order.
template <class Row, std::span<const Row> Feature::*part>
consteval auto gather() {
  constexpr std::size_t n = [] {
    std::size_t k = 0;
    for (const Feature& f : kFeatures) k += (f.*part).size();
    return k;
  }();
  std::array<Row, n> rows{};
  std::size_t i = 0;
  for (const Feature& f : kFeatures)
    for (const Row& r : f.*part) rows[i++] = r;
  return rows;
}

}  // namespace features

inline constexpr auto kClaims = features::gather<ClaimInfo, &Feature::claims>();
inline constexpr auto kProblemOptions = features::gather<ProblemOption, &Feature::options>();
inline constexpr auto kHeadInputs = features::gather<HeadInput, &Feature::head_inputs>();
inline constexpr auto kIndexInputs = features::gather<IndexInput, &Feature::index_inputs>();

namespace features {

// What rows must agree on, checked where they are declared rather than by each reader: claim keys
// and ABI bits unique, each option with its ABI field of the right width (int32 for a flag, int64
// for a count) and, in a manifest, its description, each input with its ABI views. (That a claim's used_by and drop are both set or
// both null is checked by registry_test instead: GCC 12 cannot compare a function pointer with
// null in a constant expression under -fsanitize=undefined.)
consteval bool rows_are_consistent(std::span<const ClaimInfo> claims, std::span<const ProblemOption> options,
                                   std::span<const HeadInput> heads, std::span<const IndexInput> indices) {
  for (std::size_t i = 0; i < claims.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j)
      if (claims[j].key == claims[i].key || (claims[i].abi_bit & claims[j].abi_bit) != 0) return false;
  }
  for (const ProblemOption& o : options) {
    const bool flag = o.kind == ProblemOption::Kind::flag;
    if ((o.abi_flag != nullptr) != flag || (o.abi_count != nullptr) == flag) return false;
    if (o.in_manifest && o.doc.empty()) return false;  // the manifest's schema describes every key
  }
  for (const HeadInput& h : heads)
    if (!h.abi_view || !h.abi_decode_view) return false;
  for (const IndexInput& x : indices)
    if (!x.abi_view) return false;
  return true;
}
static_assert(rows_are_consistent(kClaims, kProblemOptions, kHeadInputs, kIndexInputs),
              "a feature row is incomplete (features::rows_are_consistent says what each must have)");

}  // namespace features

// The row's per-sequence bounds among the arrays `get(row)` returns (one per row of
// kIndexInputs), when the problem packs sequences and they are valid; else null.
template <class Get>
const std::int64_t* sequence_bounds(const IndexInput& row, const Problem& p, Get get) {
  if (row.per_sequence_of.empty() || p.varlen_sequences == 0) return nullptr;
  for (const IndexInput& other : kIndexInputs)
    if (other.name == row.per_sequence_of) {
      const std::int64_t* b = get(other);
      return b && index_errors(other, p, b, false).empty() ? b : nullptr;
    }
  return nullptr;
}

}  // namespace attnv
