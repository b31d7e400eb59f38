#pragma once
// The exchange manifest's JSON Schema (draft 2020-12): io/manifest.schema.in.json, which writes
// out format 1, completed with every later option of the feature registry (problem/features/) as
// an optional key, described by its row. `attnv schema manifest` prints it.
#include <span>
#include <string>
#include <string_view>

#include "problem/features/feature.h"

namespace attnv::io {

std::string manifest_schema();

// The template `base` (JSON text) completed with the manifest keys of `options` (the rows with
// in_manifest), as indented JSON text. std::logic_error when the template already names one of
// them: each key is written in one place.
std::string manifest_schema(std::string_view base, std::span<const ProblemOption> options);

}  // namespace attnv::io
