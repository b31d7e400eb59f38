#pragma once
// The later Problem options' attnv_problem fields, row for row with kProblemOptions
// (problem/problem_options.h): a flag's int32 field or a count's int64 field, each appended to
// the struct after v1 (so read only when the sender's struct_size covers it). problem_to_abi and
// problem_from_abi (abi_convert.cpp) loop over both tables.
#include <cstdint>
#include <iterator>
#include <string_view>

#include "attnv_plugin.h"
#include "problem/problem_options.h"

namespace attnv::plugin {

struct OptionField {
  std::string_view key;
  std::int32_t attnv_problem::*flag;   // a flag row's field, else null
  std::int64_t attnv_problem::*count;  // a count row's field, else null
};

inline constexpr OptionField kOptionFields[] = {
    {"sinks", &attnv_problem::has_sinks, nullptr},
    {"alibi", &attnv_problem::has_alibi, nullptr},
    {"varlen_sequences", nullptr, &attnv_problem::varlen_sequences},
    {"mask_batch", &attnv_problem::mask_batch, nullptr},
    {"mask_heads", &attnv_problem::mask_heads, nullptr},
    {"bias_batch", &attnv_problem::bias_batch, nullptr},
    {"bias_heads", &attnv_problem::bias_heads, nullptr},
    {"page_size", nullptr, &attnv_problem::page_size},
};

constexpr bool option_fields_match_options() {
  if (std::size(kOptionFields) != std::size(kProblemOptions)) return false;
  for (std::size_t i = 0; i < std::size(kProblemOptions); ++i) {
    const OptionField& f = kOptionFields[i];
    const bool flag = kProblemOptions[i].kind == ProblemOption::Kind::flag;
    if (f.key != kProblemOptions[i].key || (f.flag != nullptr) != flag || (f.count != nullptr) == flag) return false;
  }
  return true;
}
static_assert(option_fields_match_options(),
              "every later Problem option needs its attnv_problem field (int32 for a flag, int64 for a count), "
              "in kProblemOptions' order and named alike");

}  // namespace attnv::plugin
