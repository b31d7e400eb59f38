#pragma once
// CLI11 glue for --seed: a decimal number from 0 to 2^64 - 1, nothing else. CLI11's own
// conversion to uint64 takes "-1" (it wraps around) and saturates numbers too large, so two
// different command lines would silently run the same seed.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

namespace attnv::cli {

inline CLI::Validator seed_validator() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        const std::string hint = "'" + s + "' is not a seed (use a whole number from 0 to 18446744073709551615)";
        if (s.empty() || s.size() > 20) return hint;
        std::uint64_t v = 0;
        for (char c : s) {
          if (c < '0' || c > '9') return hint;
          const std::uint64_t d = static_cast<std::uint64_t>(c - '0');
          if (v > (UINT64_MAX - d) / 10) return hint;  // would pass 2^64 - 1
          v = v * 10 + d;
        }
        return {};
      },
      "SEED");
}

}  // namespace attnv::cli
