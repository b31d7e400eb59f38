#pragma once
// Numeric guidance: which buckets an input reaches. A bucket is a level of headroom or of
// closeness to the bound: a logit nearer exp's overflow, an output nearer the top of its dtype,
// an input deeper in the subnormals, an error nearer its bound (per tensor). Reaching a bucket
// no earlier input reached makes an input worth keeping even when it takes no new branch
// (shared/TOOLING.md measured this: plain coverage never found a softmax overflow in 120 s,
// headroom buckets in 7-38 s).
// Two users: the libFuzzer target sets one byte per bucket in `__libfuzzer_extra_counters`
// (numeric_fuzzer.cpp), which libFuzzer reads as coverage; `attnv fuzz` keeps the inputs that
// reach a bucket its searcher has not seen (fuzz/search/search.cpp).
#include <cstdint>
#include <vector>

#include "judge/decode.h"
#include "problem/case.h"
#include "reference/bound/bound.h"

namespace attnv::fuzz {

// Number of distinct buckets; every bucket index is below it.
extern const int kSignalBuckets;

// Appends the buckets this input reaches to `out` (a bucket may appear more than once).
void signal_buckets(const Case& c, const Outputs& exact, const bound::Comparison& cmp,
                    std::vector<std::uint16_t>& out);

// Appends the bucket of a decode run: its plan's kind (contiguous or paged, single tokens or
// chunks) and its worst error/threshold ratio.
void decode_buckets(const judge::DecodePlan& plan, double worst_ratio, std::vector<std::uint16_t>& out);

}  // namespace attnv::fuzz
