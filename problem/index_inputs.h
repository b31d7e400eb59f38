#pragma once
// The int64 index arrays a feature adds, described once: per-batch key lengths (kv_len [B], or
// [S] per packed sequence: FlashAttention's seqused_k) and packed sequences' bounds
// (cu_seqlens_q / _k [S+1]). What allocates, validates, copies, stores
// or hashes them loops over this table: make_zero_case (case.cpp), check_case / check_views
// (validate.cpp), CaseBuffers and case_from_views (buffers.cpp), the exchange folder
// (io/exchange.cpp), the call hash (cases/call_hash.cpp) and Python's keyword arguments
// (python/src/python_kernel.cpp). Its ABI field and worker slot sit in a parallel table
// (plugin/index_fields.h). A decode call has none of them: its cache_len and block_table are
// the decode's own (problem/validate.cpp rejects kv_len and varlen there).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "problem/case.h"
#include "problem/tensor.h"

namespace attnv {

struct IndexInput {
  // What its values mean, hence the zero case's fill and the rule checked:
  //   lengths: each in [0, total] (zero case: total, every key visible); with packed sequences
  //            and per_sequence_of set, element s in [0, that sequence's extent] instead;
  //   bounds:  0 = x[0] <= x[1] <= ... <= x[n-1] = total (zero case: one sequence holding all).
  enum class Rule { lengths, bounds };
  // Where the call hash takes it; both placements are fixed forever (exports carry hashes):
  //   with_tensors: always, as a length word then its values, right after the bias (kv_len is
  //                 as old as the hash);
  //   when_present: only when present, after the per-head inputs, preceded by hash_tag unless
  //                 that is 0 (then it shares the tag of the row before it).
  enum class Hash { with_tensors, when_present };

  std::string_view name;      // the file <name>.npy, Python's keyword, the worker slot's name
  std::string_view file_key;  // the manifest key that says whether <name>.npy is there
  std::string_view (*dims)(const Problem&);  // its extent as the exchange format names it ("[B]")
  bool (*present)(const Problem&);
  std::int64_t (*extent)(const Problem&);  // its element count when present
  std::vector<std::int64_t> Case::*values;
  const std::int64_t* KernelViews::*view;
  Rule rule;
  std::int64_t Shape::*total;  // the bound its values are checked against (and filled with)
  std::string_view total_name;
  Hash hash;
  std::uint64_t hash_tag;
  // Lengths that are per sequence when the problem packs sequences: the bounds row (by name)
  // whose consecutive differences bound element s, and what they count ("keys"). "" when the
  // row's extent does not follow the packing.
  std::string_view per_sequence_of;
  std::string_view per_sequence_unit;
  // Python passes None when absent: the argument is as old as the Python route, so every
  // function takes it. Later rows pass nothing when absent (older functions lack the keyword).
  bool python_none_when_absent;

  std::int64_t count(const Problem& p) const { return present(p) ? extent(p) : 0; }
  // Valid values that change nothing: every key visible, or one sequence holding all rows.
  // Per sequence, the bounds' own zero case puts every row in sequence 0: it uses all of them,
  // the others have none.
  void fill_zero(const Problem& p, std::vector<std::int64_t>& x) const {
    const bool per_sequence = rule == Rule::lengths && !per_sequence_of.empty() && p.varlen_sequences > 0;
    x.assign(static_cast<std::size_t>(count(p)), per_sequence ? 0 : p.shape.*total);
    if (rule == Rule::bounds && !x.empty()) x[0] = 0;
    if (per_sequence && !x.empty()) x[0] = p.shape.*total;
  }
};

inline constexpr IndexInput kIndexInputs[] = {
    // [B], or [S] with packed sequences (per-sequence key lengths, claim varlen_kv_len).
    {"kv_len", "kv_len", [](const Problem& p) -> std::string_view { return p.varlen_sequences > 0 ? "[S]" : "[B]"; },
     [](const Problem& p) { return p.has_kv_len; },
     [](const Problem& p) { return p.varlen_sequences > 0 ? p.varlen_sequences : p.shape.B; }, &Case::kv_len,
     &KernelViews::kv_len, IndexInput::Rule::lengths, &Shape::Tk, "Tk", IndexInput::Hash::with_tensors, 0,
     "cu_seqlens_k", "keys", true},
    {"cu_seqlens_q", "varlen_sequences", [](const Problem&) -> std::string_view { return "[S+1]"; },
     [](const Problem& p) { return p.varlen_sequences > 0; }, [](const Problem& p) { return p.varlen_sequences + 1; },
     &Case::cu_seqlens_q, &KernelViews::cu_seqlens_q, IndexInput::Rule::bounds, &Shape::Tq, "Tq",
     IndexInput::Hash::when_present, 0x7661726c656eull /* "varlen" */, "", "", false},
    {"cu_seqlens_k", "varlen_sequences", [](const Problem&) -> std::string_view { return "[S+1]"; },
     [](const Problem& p) { return p.varlen_sequences > 0; }, [](const Problem& p) { return p.varlen_sequences + 1; },
     &Case::cu_seqlens_k, &KernelViews::cu_seqlens_k, IndexInput::Rule::bounds, &Shape::Tk, "Tk",
     IndexInput::Hash::when_present, 0, "", "", false},
};

// The first value breaking the row's rule, named ("kv_len[1] = 9 is outside [0, Tk=4]"); with
// `every`, one message per offending element where the rule is per element. Empty when valid.
// `x` holds row.extent(p) elements. `sequences`: the valid bounds named by the row's
// per_sequence_of when the problem packs sequences ("kv_len[1] = 9 is outside [0, 5], sequence
// 1's keys"); null otherwise, or when those bounds are invalid (their own error says so), and
// then the lengths are held to the total.
std::vector<std::string> index_errors(const IndexInput& row, const Problem& p, const std::int64_t* x, bool every,
                                      const std::int64_t* sequences = nullptr);

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
