#pragma once
// What kind of failure a finding is: one vocabulary for every judge (the conformance checks,
// the file route, `attnv fuzz` and its reproducers), in the certificate's JSON, the terminal and
// the fuzz reproducers' manifests.
#include <string_view>

#include "problem/kernel_fault.h"

namespace attnv {

enum class FailKind {
  outside_bound,     // a value (or a relation between runs) beyond its allowance; bitwise checks: 0
  non_finite,        // NaN or inf where a finite value was due
  nondeterministic,  // identical calls gave different bits
  input_written,     // an input buffer changed
  out_of_bounds,     // touched memory outside its buffers
  missing_output,    // an output left unwritten or unreadable (answers through files)
  crashed,
  hung,
  refused,
  fp_exception,      // overflow, invalid operation or division by zero raised inside an in-process kernel
};
std::string_view fail_kind_id(FailKind k);    // "outside_bound", ...
std::string_view fail_kind_text(FailKind k);  // "outside the bound", ... (for people)
FailKind fail_kind(FaultKind k);              // how a failed call (problem/kernel_fault.h) is reported

}  // namespace attnv
