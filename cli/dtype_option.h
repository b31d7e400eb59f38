#pragma once
// CLI11 glue for dtype options: a validator whose message lists the accepted names.
#include <CLI/CLI.hpp>

#include "problem/dtype.h"

namespace attnv::cli {

inline CLI::Validator dtype_validator() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        return parse_dtype(s) ? std::string() : "'" + s + "' is not a dtype (use f64, f32, f16 or bf16)";
      },
      "DTYPE");
}

}  // namespace attnv::cli
