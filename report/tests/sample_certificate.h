#pragma once
// Certificates from real (small) conformance runs, shared by the report tests.
#include <cstdint>
#include <string>

#include "report/certificate.h"

namespace attnv::report::testing {

// The naive kernel with its claims narrowed (f32 only, no backward, no custom scale), run on
// f32 and bf16 for R1 R2 R3 R5 R13 R19: PASS on f32, "not claimed" for R2, R19 and for bf16.
Certificate naive_certificate(std::uint64_t seed);

// The causal_off_by_one mutant of the zoo on f32 for R1 R5 R13: R5 (and R1) FAIL.
Certificate mutant_certificate(std::uint64_t seed);

// The hidden_times_zero mutant (hidden NaN leaks) without the hidden_nonfinite claim, on f32 for
// R1 R5 R6: R6 is a robustness NOTE, the run is CERTIFIED.
Certificate leaky_certificate(std::uint64_t seed);

// The narrowed naive kernel declining (Kernel::supports) every problem over 64 keys, as a
// version 2 plugin configured with --kernel-option max_tk=64, on f32 for R1 R3 R13: PASS with
// declined cases counted, CERTIFIED.
Certificate declining_certificate(std::uint64_t seed);

}  // namespace attnv::report::testing
