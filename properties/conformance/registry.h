#pragma once
// Every per-case property with the generator options its cases are drawn with, so the
// conformance suite, the property tests (correct kernels must pass) and the kill test (each
// mutant must fail the property meant to catch it) run exactly the same thing.
#include <functional>
#include <string>
#include <vector>

#include "properties/checks/checks.h"
#include "properties/generators/property_case.h"

namespace attnv::props {

struct PropertyEntry {
  std::string name;  // the check's name without "check_"
  GenOptions options;
  std::function<PropertyResult(Kernel&, const PropertyCase&)> check;
};

const std::vector<PropertyEntry>& property_registry();
const PropertyEntry& property(const std::string& name);

// The cases of the campaign-level sign test: bf16 (where truncation is the classic bug).
GenOptions rounding_campaign_options();

}  // namespace attnv::props
