#pragma once
// The certificate's JSON Schema (draft 2020-12): report/certificate.schema.in.json completed with
// the claims of the feature registry (problem/features/): kernel.capabilities holds one boolean
// per claim, in the registry's order, between "dtypes" and "withdrawn". `attnv schema
// certificate` prints it.
#include <span>
#include <string>
#include <string_view>

#include "problem/features/feature.h"

namespace attnv::report {

std::string certificate_schema();

// The template `base` (JSON text) completed with `claims`, as indented JSON text.
// std::logic_error when the template already names a claim (each is written in one place) or
// has no kernel.capabilities with "dtypes" to place them after.
std::string certificate_schema(std::string_view base, std::span<const ClaimInfo> claims);

}  // namespace attnv::report
