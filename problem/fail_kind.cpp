#include "problem/fail_kind.h"

namespace attnv {

std::string_view fail_kind_id(FailKind k) {
  switch (k) {
    case FailKind::outside_bound: return "outside_bound";
    case FailKind::non_finite: return "non_finite";
    case FailKind::nondeterministic: return "nondeterministic";
    case FailKind::input_written: return "input_written";
    case FailKind::out_of_bounds: return "out_of_bounds";
    case FailKind::missing_output: return "missing_output";
    case FailKind::crashed: return "crashed";
    case FailKind::hung: return "hung";
    case FailKind::refused: return "refused";
    case FailKind::fp_exception: return "fp_exception";
  }
  return "?";
}

std::string_view fail_kind_text(FailKind k) {
  switch (k) {
    case FailKind::outside_bound: return "outside the bound";
    case FailKind::non_finite: return "non-finite output";
    case FailKind::nondeterministic: return "nondeterministic";
    case FailKind::input_written: return "input written";
    case FailKind::out_of_bounds: return "out-of-bounds access";
    case FailKind::missing_output: return "missing output";
    case FailKind::crashed: return "crashed";
    case FailKind::hung: return "hung";
    case FailKind::refused: return "refused the call";
    case FailKind::fp_exception: return "floating-point exception inside the kernel";
  }
  return "?";
}

FailKind fail_kind(FaultKind k) {
  switch (k) {
    case FaultKind::crashed: return FailKind::crashed;
    case FaultKind::hung: return FailKind::hung;
    case FaultKind::refused: return FailKind::refused;
    case FaultKind::input_written: return FailKind::input_written;
    case FaultKind::out_of_bounds: return FailKind::out_of_bounds;
    case FaultKind::missing_output: return FailKind::missing_output;
  }
  return FailKind::crashed;
}

}  // namespace attnv
