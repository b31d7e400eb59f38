#pragma once
// What a property check returns instead of asserting: whether it held, a message, the case and
// the worst element. Test glue (RapidCheck, GoogleTest, the conformance runner) decides what a
// failure means; the checks only judge.
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>

#include "problem/fail_kind.h"
#include "reference/bound/bound.h"

namespace attnv::checks {

// What one check on one case concluded. Only pass and fail judged anything; a check that had
// nothing to exercise on its case (no hidden key to perturb, no fully masked row) says so and
// is never counted as a pass. attnv_error: attnv itself could not judge the case (its reference
// declined it, its own views were invalid): never charged to the kernel. not_supported: the
// kernel declined a call of the case through supports() (problem/kernel.h): honest, not a
// finding, and not a pass either.
enum class Status { pass, fail, not_claimed, not_applicable, not_exercised, attnv_error, not_supported };

// What kind of failure a FAIL is (problem/fail_kind.h: one vocabulary with the fuzz oracle).
using attnv::FailKind;
using attnv::fail_kind_id;
using attnv::fail_kind_text;

struct PropertyResult {
  bool ok = true;  // status != fail
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
  Status status = Status::pass;
  FailKind kind = FailKind::outside_bound;  // of a failure
  // What the case gave the check to judge, in the requirement's unit (Requirement::exercised):
  // elements compared, hidden entries perturbed, fully masked rows seen, ... 1 by default (one
  // case judged). Summed over a requirement's cases and held against its minimum for a PASS.
  std::int64_t exercised = 1;
  // Elements judged but not counted in `exercised`: their allowance covered the visible values'
  // range, so any value there would have passed (judge::Judgement::uninformative).
  std::int64_t uninformative = 0;
  // Allowance / |exact| of the judged elements (R1, R2, R21; empty for the others).
  bound::TightnessHistogram tightness{};

  static PropertyResult pass(std::string property, std::string case_id, std::string note = "") {
    return {true, std::move(property), std::move(case_id), std::move(note), "", -1, {}, Status::pass};
  }
  // The kernel does not claim what the case uses (message "not claimed: <why>").
  static PropertyResult not_claimed(std::string property, std::string case_id, const std::string& why) {
    return {true, std::move(property), std::move(case_id), "not claimed: " + why, "", -1, {}, Status::not_claimed};
  }
  // The property says nothing about this kind of case (message "not applicable: <why>").
  static PropertyResult not_applicable(std::string property, std::string case_id, const std::string& why) {
    return {true, std::move(property), std::move(case_id), "not applicable: " + why, "", -1, {}, Status::not_applicable};
  }
  // The case was in scope but held nothing the check could exercise (message "not exercised: <why>").
  static PropertyResult not_exercised(std::string property, std::string case_id, const std::string& why) {
    return {true, std::move(property), std::move(case_id), "not exercised: " + why, "", -1, {}, Status::not_exercised};
  }
  // The kernel declined a call of the case (message "not supported: <its reason>").
  static PropertyResult not_supported(std::string property, std::string case_id, const std::string& why) {
    return {true, std::move(property), std::move(case_id), "not supported: " + why, "", -1, {}, Status::not_supported};
  }
  // attnv could not judge the case: its own fault, reported as such (message "attnv error: <why>").
  static PropertyResult attnv_error(std::string property, std::string case_id, const std::string& why) {
    return {true, std::move(property), std::move(case_id), "attnv error: " + why, "", -1, {}, Status::attnv_error};
  }
  bool judged() const { return status == Status::pass || status == Status::fail; }
  PropertyResult& with_ratio(double r) {
    worst_ratio = r;
    return *this;
  }
  PropertyResult& with_exercised(std::int64_t n, std::int64_t uninformative_elements = 0) {
    exercised = n;
    uninformative = uninformative_elements;
    return *this;
  }
  PropertyResult& with_kind(FailKind k) {
    kind = k;
    return *this;
  }
  static PropertyResult fail(std::string property, std::string case_id, std::string message, std::string worst = "") {
    return {false, std::move(property), std::move(case_id), std::move(message), std::move(worst), -1, {}, Status::fail};
  }
};

inline std::ostream& operator<<(std::ostream& os, const PropertyResult& r) {
  os << (!r.ok                                 ? "FAIL "
         : r.judged()                          ? "PASS "
         : r.status == Status::attnv_error     ? "ATTNV ERROR "
         : r.status == Status::not_supported   ? "NOT SUPPORTED "
                                               : "SKIP ")
     << r.property
     << " [" << r.case_id << "]";
  if (!r.message.empty()) os << ": " << r.message;
  if (!r.worst.empty()) os << "; worst: " << r.worst;
  return os;
}

}  // namespace attnv::checks
