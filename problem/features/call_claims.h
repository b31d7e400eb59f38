#pragma once
// Claims about the call rather than the problem: what a kernel writes (the log-sum-exp), which
// operations it has (backward, decode with a KV cache), which memory layouts it reads, and how
// it treats a NaN or inf that no visible key reaches. No problem "uses" them (used_by and drop
// are null); the requirements that need them check them.
#include "problem/features/feature.h"

namespace attnv::features {

inline constexpr ClaimInfo kCallClaims[] = {
    {.key = "lse", .label = "LSE", .member = &Capabilities::lse, .abi_bit = ATTNV_CAP_LSE, .files_default = true},
    {.key = "backward", .label = "backward", .member = &Capabilities::backward, .abi_bit = ATTNV_CAP_BACKWARD},
    {.key = "decode", .label = "decode", .member = &Capabilities::decode, .abi_bit = ATTNV_CAP_DECODE,
     .not_through_files = "a case folder holds calls, not a KV cache that persists between them", .may_be_omitted = true},
    {.key = "strided", .label = "strided", .member = &Capabilities::strided, .abi_bit = ATTNV_CAP_STRIDED,
     .not_through_files = "a case folder has no memory layout", .may_be_omitted = true},
    {.key = "hidden_nonfinite", .label = "hidden NaN/inf stays hidden", .member = &Capabilities::hidden_nonfinite,
     .abi_bit = ATTNV_CAP_HIDDEN_NONFINITE, .may_be_omitted = true,
     .doc = "Claims NaN/inf in hidden positions never reach an output (R6 then blocks certification; otherwise an R6 "
            "failure is a NOTE)."},
};
inline constexpr Feature kCalls{.name = "calls", .claims = kCallClaims};

}  // namespace attnv::features
