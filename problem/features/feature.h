#pragma once
// What a feature of the attention problem is made of, as data. Each feature is one file of this
// folder (sinks.h, alibi.h, varlen.h, ...) declaring a Feature: its claims, its later Problem
// options, its per-head inputs and its int64 index arrays, each with where it travels in the
// plugin ABI. registry.h lists the features; the per-kind lists everything else loops over
// (kClaims, kProblemOptions, kHeadInputs, kIndexInputs) are computed from it.
//
// What reads these rows: Capabilities::unsupported and fit_to_claims (the claims), validation,
// CaseBuffers and the zero case (the inputs), the manifest, the exchange folder, the call hash,
// Python's arguments, describe(), both ABI conversions and the worker's slots. What stays
// hand-written on purpose: the arithmetic (the independent visibility codes, the core, the
// bound) and each option's valid values (validate.cpp).
//
// The ABI bindings name fields of attnv_plugin.h, the C header plugin authors build against: it
// holds the structs' layout and the capability bits, no code (docs/architecture.md).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "attnv_plugin.h"
#include "problem/case.h"
#include "problem/kernel.h"
#include "problem/problem.h"
#include "problem/tensor.h"

namespace attnv {

// A claim a kernel can make: what of a Problem (or of the call) it covers.
struct ClaimInfo {
  std::string_view key = {};    // the name in JSON (certificate, claims files, Python): "causal_bottom_right"
  std::string_view label = {};  // for people: "causal bottom-right"
  bool Capabilities::*member = {};
  std::uint32_t abi_bit = {};   // its ATTNV_CAP_* bit; 0: not in the plugin ABI yet, so no plugin can claim it
  // What of this claim a problem uses, named as unsupported() reports it ("causal bottom_right"),
  // "" when it uses none. Null for claims about the call rather than the problem (LSE, backward,
  // strides, decode, hidden NaN/inf): callers that need those check them.
  std::string_view (*used_by)(const Problem&) = {};
  // Why a program answering through files cannot claim it ("" when it can): cases/claims.cpp
  // accepts the key only as false.
  std::string_view not_through_files = {};
  bool files_default = false;      // its value in the file route's default claims (every forward feature)
  bool may_be_omitted = false;     // a claims file may leave it out: it came later, and left out it claims less
  // How a problem stops using it (fit_to_claims, problem/fit_to_claims.h), for a kernel that does
  // not claim it or withdraws it in the problem's dtype: the feature switched off, or replaced by
  // one the kernel claims (given here as `caps`). Null exactly where used_by is.
  void (*drop)(Problem&, const Capabilities& caps) = {};
  // Its description in the certificate's JSON Schema (attnv schema certificate); "" for none.
  std::string_view doc = {};
};

// A Problem option that came after exchange format 1 and plugin ABI v1: a switch or a count a
// feature adds. Format 1's options (causal, mask, bias, kv_len, scale, softcap, alignment,
// window) stay written out: their manifest keys are required and in a documented order, their
// ABI fields are v1's.
struct ProblemOption {
  std::string_view key = {};  // its manifest key
  // flag: true/false in a manifest, a 0/1 int32 in attnv_problem. count: an integer in a
  // manifest (check_problem says which values are valid), an int64 in attnv_problem.
  enum class Kind : std::uint8_t { flag, count } kind = Kind::flag;
  std::int64_t (*get)(const Problem&) = {};  // 0: not set
  void (*set)(Problem&, std::int64_t) = {};
  // How describe() names it when set: " sinks" for a flag, " varlen(3)" for a count; "" when
  // describe() shows it otherwise (the extents, as "mask[B,Hq]").
  std::string_view word = {};
  // false: a case folder cannot hold it, and a manifest naming it is refused as an unknown key
  // (page_size: a decode option, and a case folder holds calls, not caches).
  bool in_manifest = false;
  // Its field appended to attnv_problem (read only when the sender's struct_size covers it): an
  // int32 for a flag, an int64 for a count; the other is null.
  std::int32_t attnv_problem::*abi_flag = {};
  std::int64_t attnv_problem::*abi_count = {};
  // What the manifest key means, for the manifest's JSON Schema (attnv schema manifest), which
  // adds that the key is optional and what its absence means. Every in_manifest row has one.
  std::string_view doc = {};
  // An option that changes the call's arithmetic with no data of its own to carry it (chunk):
  // Python passes it as the keyword `key`, when set, to a kernel that claims the feature.
  bool call_keyword = false;
  // Its tag in the call hash, fixed forever (exports carry hashes): when set, the hash takes the
  // tag and the value. 0: hashed through its data instead, as every option before chunk is
  // (cases/call_hash.cpp says why).
  std::uint64_t hash_tag = 0;
};

// A feature switched on by one Problem flag: its option row, with describe()'s word.
template <bool Problem::*flag>
constexpr ProblemOption flag_option(std::string_view key, std::string_view word, std::int32_t attnv_problem::*field,
                                    std::string_view doc) {
  return {.key = key, .kind = ProblemOption::Kind::flag, .get = [](const Problem& p) -> std::int64_t { return p.*flag; },
          .set = [](Problem& p, std::int64_t v) { p.*flag = v != 0; }, .word = word, .in_manifest = true, .abi_flag = field,
          .doc = doc};
}

// A per-head input: a vector [Hq] in the storage dtype, one value per query head.
struct HeadInput {
  std::string_view name = {};  // the file <name>.npy, Python's keyword, the worker slot's name
  bool Problem::*present = {};
  std::vector<double> Case::*values = {};
  TensorRef KernelViews::*view = {};
  TensorRef DecodeViews::*decode_view = {};
  // Beyond representable in the storage dtype: finite always (a NaN or inf here reaches every row
  // of its head, with no hidden place to stay harmless in); >= 0 too where a negative value means
  // nothing a model does (an ALiBi slope < 0 would favour far keys).
  bool nonnegative = false;
  std::uint64_t hash_tag = {};  // its tag in the call hash: fixed forever (exports carry hashes)
  attnv_tensor attnv_views::*abi_view = {};                // appended to attnv_views
  attnv_tensor attnv_decode_views::*abi_decode_view = {};  // appended to attnv_decode_views

  std::string_view rule() const { return nonnegative ? "finite and >= 0" : "finite"; }
  bool valid(double x) const { return std::isfinite(x) && (!nonnegative || x >= 0); }
};

// An int64 index array: per-batch key lengths, packed sequences' bounds.
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

  std::string_view name = {};      // the file <name>.npy, Python's keyword, the worker slot's name
  std::string_view file_key = {};  // the manifest key that says whether <name>.npy is there
  std::string_view (*dims)(const Problem&) = {};  // its extent as the exchange format names it ("[B]")
  bool (*present)(const Problem&) = {};
  // Its element count when present; also what the worker maps from its slot (a decode's cache_len
  // rides in kv_len's slot: [B], as a decode has no packed sequences).
  std::int64_t (*extent)(const Problem&) = {};
  std::vector<std::int64_t> Case::*values = {};
  const std::int64_t* KernelViews::*view = {};
  Rule rule = {};
  std::int64_t Shape::*total = {};  // the bound its values are checked against (and filled with)
  std::string_view total_name = {};
  Hash hash = {};
  std::uint64_t hash_tag = {};
  // Lengths that are per sequence when the problem packs sequences: the bounds row (by name)
  // whose consecutive differences bound element s, and what they count ("keys"). "" when the
  // row's extent does not follow the packing.
  std::string_view per_sequence_of = {};
  std::string_view per_sequence_unit = {};
  // Python passes None when absent: the argument is as old as the Python route, so every
  // function takes it. Later rows pass nothing when absent (older functions lack the keyword).
  bool python_none_when_absent = false;
  const std::int64_t* attnv_views::*abi_view = {};  // v1's kv_len before struct_size; later ones appended

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

// The first value breaking the row's rule, named ("kv_len[1] = 9 is outside [0, Tk=4]"); with
// `every`, one message per offending element where the rule is per element. Empty when valid.
// `x` holds row.extent(p) elements. `sequences`: the valid bounds named by the row's
// per_sequence_of when the problem packs sequences ("kv_len[1] = 9 is outside [0, 5], sequence
// 1's keys"); null otherwise, or when those bounds are invalid (their own error says so), and
// then the lengths are held to the total.
std::vector<std::string> index_errors(const IndexInput& row, const Problem& p, const std::int64_t* x, bool every,
                                      const std::int64_t* sequences = nullptr);

// One feature of the problem, whole: any of its parts may be empty (a claim about the call has
// no option; packed sequences have a claim, an option and two index arrays).
struct Feature {
  std::string_view name = {};
  std::span<const ClaimInfo> claims = {};
  std::span<const ProblemOption> options = {};
  std::span<const HeadInput> head_inputs = {};
  std::span<const IndexInput> index_inputs = {};
};

}  // namespace attnv
