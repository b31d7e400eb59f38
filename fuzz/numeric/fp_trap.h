#pragma once
// ATTNV_FUZZ_FP_TRAP=0 turns off the floating-point exception check of the libFuzzer target
// (for a kernel that raises flags on purpose, e.g. in masked-off SIMD lanes). With it on, the
// differential judge traps overflow, invalid operation and division by zero around the kernel call only
// (FpCheck::trap, differential_judge.cpp), so they show as SIGFPE with the kernel's frame on top.
#include <cstdlib>

namespace attnv::fuzz {

inline bool fp_trap_enabled() {
  static const bool on = [] {
    const char* env = std::getenv("ATTNV_FUZZ_FP_TRAP");
    return !(env && env[0] == '0');
  }();
  return on;
}

}  // namespace attnv::fuzz
