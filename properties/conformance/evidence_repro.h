#pragma once
// A certify finding's evidence folder judged again, as `attnv repro` and Python's attnv.repro
// both judge it: the same requirement on the same case, in the same layout, with the same
// perturbation, the calls checked against the inputs the folder recorded. The front ends only
// choose the kernel and where the text goes.
#include <ostream>
#include <string>

#include "problem/kernel.h"
#include "properties/conformance/evidence.h"

namespace attnv::conformance {

// Judges evidence `e` (read from `where`) again with kernel `k` (`kernel_name` as the user named
// it) and writes what it judged to `out`. Only a judged result decides: 0 it passes (fixed), 1 it
// still fails, 3 attnv's own error (the check could not judge the case, or no longer makes the
// calls the evidence recorded). InputError (neither fixed nor failing) when `k` is the kernel
// that failed in another configuration, when the requirement cannot judge the case with this
// kernel's claims, or when it passes a case whose failure did not recur when it was judged again
// at once after failing (no evidence of a fix).
int rejudge_evidence(Kernel& k, const Evidence& e, const std::string& kernel_name, const std::string& where,
                     std::ostream& out);

}  // namespace attnv::conformance
