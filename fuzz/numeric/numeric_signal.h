#pragma once
// Numeric guidance for libFuzzer: buckets in a uint8 array placed in the section
// `__libfuzzer_extra_counters`, which libFuzzer reads as coverage. Reaching a new bucket (a
// logit nearer exp's overflow, an output nearer the top of its dtype, an input deeper in the
// subnormals, an error nearer its bound) counts as new coverage, so inputs that climb toward a
// numeric cliff are kept even when they take no new branch (shared/TOOLING.md measured this:
// plain coverage never found a softmax overflow in 120 s, headroom buckets in 7-38 s).
// Compiled in and on by default (else -merge=1 would drop the climbing corpus);
// ATTNV_FUZZ_SIGNALS=0 turns it off to measure what it buys.
#include "problem/case.h"
#include "reference/bound/bound.h"

namespace attnv::fuzz {

// Sets this input's buckets (libFuzzer clears the counters before every input).
void record_signals(const Case& c, const Outputs& exact, const bound::Comparison& cmp);

}  // namespace attnv::fuzz
