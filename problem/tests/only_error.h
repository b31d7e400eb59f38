#pragma once
// Test helper: the single message a check gives, so a test also fails when extra errors appear.
#include <string>
#include <vector>

#include "problem/validate.h"

namespace attnv::testing {

// The one message, or "(N errors)" when there is not exactly one.
inline std::string only_error(const std::vector<std::string>& errors) {
  if (errors.size() == 1) return errors[0];
  std::string s = "(";  // appended, not "(" + to_string(n): GCC 12 warns (-Wrestrict) on that form
  s += std::to_string(errors.size());
  return s + " errors)";
}

inline std::string only_error(const Problem& p) { return only_error(check_problem(p)); }
inline std::string only_error(const Case& c) { return only_error(check_case(c)); }

}  // namespace attnv::testing
