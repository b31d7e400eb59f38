#pragma once
// The Problem's options that came after exchange format 1 and plugin ABI v1, described once: the
// switches and counts a feature adds (sinks, ALiBi, packed sequences, the mask's and bias's own
// leading extents, a paged cache's page size). What reads or writes them loops over this table:
//   - the manifest (io/manifest.cpp): its key, which may be left out (absent = 0) and is written
//     only when set, so manifests written before the option stay valid and unchanged;
//   - the plugin ABI's attnv_problem, both ways (plugin/abi_convert.cpp, through the parallel
//     table plugin/option_fields.h, which names each row's appended field; a field is read only
//     when the sender's struct covers it);
//   - describe() (problem.cpp);
//   - the tests that hold io/manifest.schema.json's keys to it and show that every option a
//     manifest carries changes the call hash (the hash itself takes each through its data or,
//     for the extents, one word; cases/call_hash.cpp says why it stays written out).
// The options of format 1 (causal, mask, bias, kv_len, and scale, softcap, alignment and window,
// which are not switches or counts) stay written out: their manifest keys are required and
// written in a documented order, their ABI fields are v1's. A new option is one row here and one
// in plugin/option_fields.h, plus its Problem member, its appended attnv_problem field, its claim
// row (problem/claim_table.h), its range check (validate.cpp) and the schema's description.
#include <cstdint>
#include <string_view>

#include "problem/problem.h"

namespace attnv {

struct ProblemOption {
  std::string_view key;  // its manifest key and the name its ABI field row carries
  // flag: true/false in a manifest, a 0/1 int32 in attnv_problem. count: an integer in a
  // manifest (check_problem says which values are valid), an int64 in attnv_problem.
  enum class Kind : std::uint8_t { flag, count } kind;
  std::int64_t (*get)(const Problem&);  // 0: not set
  void (*set)(Problem&, std::int64_t);
  // How describe() names it when set: " sinks" for a flag, " varlen(3)" for a count; "" when
  // describe() shows it otherwise (the extents, as "mask[B,Hq]").
  std::string_view word;
  // false: a case folder cannot hold it, and a manifest naming it is refused as an unknown key
  // (page_size: a decode option, and a case folder holds calls, not caches).
  bool in_manifest;
};

inline constexpr ProblemOption kProblemOptions[] = {
    {"sinks", ProblemOption::Kind::flag, [](const Problem& p) -> std::int64_t { return p.has_sinks; },
     [](Problem& p, std::int64_t v) { p.has_sinks = v != 0; }, "sinks", true},
    {"alibi", ProblemOption::Kind::flag, [](const Problem& p) -> std::int64_t { return p.has_alibi; },
     [](Problem& p, std::int64_t v) { p.has_alibi = v != 0; }, "alibi", true},
    {"varlen_sequences", ProblemOption::Kind::count, [](const Problem& p) { return p.varlen_sequences; },
     [](Problem& p, std::int64_t v) { p.varlen_sequences = v; }, "varlen", true},
    // The extents mean something only with the mask or bias (check_problem refuses them alone).
    {"mask_batch", ProblemOption::Kind::flag, [](const Problem& p) -> std::int64_t { return p.has_mask && p.mask_dims.batch; },
     [](Problem& p, std::int64_t v) { p.mask_dims.batch = v != 0; }, "", true},
    {"mask_heads", ProblemOption::Kind::flag, [](const Problem& p) -> std::int64_t { return p.has_mask && p.mask_dims.heads; },
     [](Problem& p, std::int64_t v) { p.mask_dims.heads = v != 0; }, "", true},
    {"bias_batch", ProblemOption::Kind::flag, [](const Problem& p) -> std::int64_t { return p.has_bias && p.bias_dims.batch; },
     [](Problem& p, std::int64_t v) { p.bias_dims.batch = v != 0; }, "", true},
    {"bias_heads", ProblemOption::Kind::flag, [](const Problem& p) -> std::int64_t { return p.has_bias && p.bias_dims.heads; },
     [](Problem& p, std::int64_t v) { p.bias_dims.heads = v != 0; }, "", true},
    {"page_size", ProblemOption::Kind::count, [](const Problem& p) { return p.page_size; },
     [](Problem& p, std::int64_t v) { p.page_size = v; }, "paged", false},
};

}  // namespace attnv
