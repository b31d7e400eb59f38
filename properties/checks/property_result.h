#pragma once
// What a property check returns instead of asserting: whether it held, a message, the case and
// the worst element. Test glue (RapidCheck, GoogleTest, the conformance runner) decides what a
// failure means; the checks only judge.
#include <ostream>
#include <string>

#include "reference/bound/bound.h"

namespace attnv::props {

struct PropertyResult {
  bool ok = true;
  std::string property;  // "no_leakage"
  std::string case_id;   // Case::id of the case it ran on
  std::string message;   // why it failed; for a pass, notes such as "not applicable: ..."
  std::string worst;     // the worst element: tensor, index, kernel value, expected, allowance
  // The largest |error| / allowance the check measured (> 1 fails), or -1 when the check has no
  // such ratio (bitwise and structural checks).
  double worst_ratio = -1;
  // Per-element error / threshold ratios, for the checks that compare against the reference
  // (empty for the others): the certificate's histograms.
  bound::RatioHistogram hist;

  static PropertyResult pass(std::string property, std::string case_id, std::string note = "") {
    return {true, std::move(property), std::move(case_id), std::move(note), "", -1, {}};
  }
  PropertyResult& with_ratio(double r) {
    worst_ratio = r;
    return *this;
  }
  static PropertyResult fail(std::string property, std::string case_id, std::string message, std::string worst = "") {
    return {false, std::move(property), std::move(case_id), std::move(message), std::move(worst), -1, {}};
  }
};

inline std::ostream& operator<<(std::ostream& os, const PropertyResult& r) {
  os << (r.ok ? "PASS " : "FAIL ") << r.property << " [" << r.case_id << "]";
  if (!r.message.empty()) os << ": " << r.message;
  if (!r.worst.empty()) os << "; worst: " << r.worst;
  return os;
}

}  // namespace attnv::props
