#pragma once
// The index arrays' ABI fields and worker slots, row for row with kIndexInputs
// (problem/index_inputs.h): its pointer in attnv_views (v1's kv_len before struct_size, the rest
// appended in v2) and the wire slot it travels in, with the element count the worker maps
// (a decode's cache_len rides in kv_len's slot, [B] too: shared_region.cpp; kv_len is [S] with
// packed sequences).
#include <cstdint>
#include <iterator>
#include <string_view>

#include "attnv_plugin.h"
#include "problem/index_inputs.h"
#include "worker/protocol.h"

namespace attnv::plugin {

struct IndexInputField {
  std::string_view name;
  const std::int64_t* attnv_views::*view;
  wire::Slot slot;
  std::int64_t (*count)(const attnv_problem&);
};

inline constexpr IndexInputField kIndexInputFields[] = {
    // [B], or [S] with packed sequences (ATTNV_CAP_VARLEN_KV_LEN); a decode's cache_len is [B]
    // and a decode has no packed sequences.
    {"kv_len", &attnv_views::kv_len, wire::kv_len,
     [](const attnv_problem& p) { return p.varlen_sequences > 0 ? p.varlen_sequences : p.B; }},
    {"cu_seqlens_q", &attnv_views::cu_seqlens_q, wire::cu_seqlens_q,
     [](const attnv_problem& p) { return p.varlen_sequences > 0 ? p.varlen_sequences + 1 : 0; }},
    {"cu_seqlens_k", &attnv_views::cu_seqlens_k, wire::cu_seqlens_k,
     [](const attnv_problem& p) { return p.varlen_sequences > 0 ? p.varlen_sequences + 1 : 0; }},
};

constexpr bool index_fields_match_inputs() {
  if (std::size(kIndexInputFields) != std::size(kIndexInputs)) return false;
  for (std::size_t i = 0; i < std::size(kIndexInputs); ++i) {
    const IndexInputField& f = kIndexInputFields[i];
    if (f.name != kIndexInputs[i].name || f.name != wire::kTensorNames[f.slot]) return false;
  }
  return true;
}
static_assert(index_fields_match_inputs(),
              "every index array needs its ABI field and wire slot, in kIndexInputs' order and named alike");

// Whether `a` holds the field: v1's fields (before struct_size) always, later ones when
// struct_size covers them.
inline bool holds(const attnv_views& a, const std::int64_t* const& field) {
  const auto end = reinterpret_cast<const unsigned char*>(&field) + sizeof(field);
  return end <= reinterpret_cast<const unsigned char*>(&a.struct_size) ||
         end <= reinterpret_cast<const unsigned char*>(&a) + a.struct_size;
}

}  // namespace attnv::plugin
