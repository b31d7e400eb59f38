#pragma once
// Floating-point exceptions trapped (SIGFPE) while a kernel runs: a hidden overflow, an invalid
// operation (inf - inf, 0 * inf) or a division by zero becomes a crash libFuzzer reports, even
// where the kernel scrubs the NaN away afterwards. Only around the kernel call: the reference
// and the bound may raise flags legitimately (log(0) = -inf for a fully masked row).
// ATTNV_FUZZ_FP_TRAP=0 turns it off (for a kernel that raises flags on purpose, e.g. in
// masked-off SIMD lanes).
#include <cfenv>
#include <cstdlib>

namespace attnv::fuzz {

inline bool fp_trap_enabled() {
  static const bool on = [] {
    const char* env = std::getenv("ATTNV_FUZZ_FP_TRAP");
    return !(env && env[0] == '0');
  }();
  return on;
}

class FpTrap {
 public:
  FpTrap() : on_(fp_trap_enabled()) {
    if (!on_) return;
    std::feclearexcept(FE_ALL_EXCEPT);
    feenableexcept(kTrapped);
  }
  ~FpTrap() {
    if (!on_) return;
    fedisableexcept(kTrapped);
    std::feclearexcept(FE_ALL_EXCEPT);
  }
  FpTrap(const FpTrap&) = delete;
  FpTrap& operator=(const FpTrap&) = delete;

 private:
  static constexpr int kTrapped = FE_OVERFLOW | FE_INVALID | FE_DIVBYZERO;
  bool on_;
};

}  // namespace attnv::fuzz
