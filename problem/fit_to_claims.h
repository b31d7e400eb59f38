#pragma once
// A drawn problem fitted to what a kernel claims, derived from the claim table: every feature the
// kernel does not claim, or withdraws in the problem's dtype, is dropped by its row's `drop`
// (problem/features/), and a dtype it does not claim becomes the first it does. Both case
// sources use it, the property generators (properties/generators) and the numeric fuzzer's
// genome (fuzz/numeric/case_genome.cpp), so a kernel that claims little still gets every case
// judged, and a new claim row is fitted everywhere without a line in either.
#include "problem/kernel.h"
#include "problem/problem.h"

namespace attnv {

// Afterwards caps.unsupported(p) is empty. Features the kernel claims are left as they are, so
// for a kernel that claims everything the problem does not change. Throws std::logic_error
// (attnv's own error) if a row's drop leaves its feature in use.
void fit_to_claims(Problem& p, const Capabilities& caps);

}  // namespace attnv
