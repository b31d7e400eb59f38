#pragma once
// The per-head inputs' ABI fields and worker slots, row for row with kHeadInputs
// (problem/head_inputs.h): its tensor in the forward's and the decode's views (each appended to v2), and the wire slot it travels in (a decode's too:
// shared_region.cpp's decode_in_slots puts its tensor in the forward's field first).
#include <cstdint>
#include <iterator>
#include <string_view>

#include "attnv_plugin.h"
#include "problem/head_inputs.h"
#include "worker/protocol.h"

namespace attnv::plugin {

struct HeadInputField {
  std::string_view name;
  attnv_tensor attnv_views::*view;
  attnv_tensor attnv_decode_views::*decode_view;
  wire::Slot slot;
};

inline constexpr HeadInputField kHeadInputFields[] = {
    {"sinks", &attnv_views::sinks, &attnv_decode_views::sinks, wire::sinks},
    {"alibi", &attnv_views::alibi, &attnv_decode_views::alibi, wire::alibi},
};

constexpr bool head_fields_match_inputs() {
  if (std::size(kHeadInputFields) != std::size(kHeadInputs)) return false;
  for (std::size_t i = 0; i < std::size(kHeadInputs); ++i) {
    const HeadInputField& f = kHeadInputFields[i];
    if (f.name != kHeadInputs[i].name || f.name != wire::kTensorNames[f.slot]) return false;
  }
  return true;
}
static_assert(head_fields_match_inputs(),
              "every per-head input needs its ABI fields and wire slot, in kHeadInputs' order and named alike");

}  // namespace attnv::plugin
