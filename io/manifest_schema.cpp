#include "io/manifest_schema.h"

#include <stdexcept>

#include <nlohmann/json.hpp>

#include "problem/features/registry.h"

namespace attnv::io {

extern const char kManifestSchemaTemplate[];  // io/manifest.schema.in.json (cmake/AttnvEmbed.cmake)

std::string manifest_schema(std::string_view base, std::span<const ProblemOption> options) {
  nlohmann::ordered_json schema = nlohmann::ordered_json::parse(base);
  schema.erase("$comment");  // it speaks of the template
  nlohmann::ordered_json& keys = schema.at("$defs").at("case").at("properties");
  for (const ProblemOption& o : options) {
    if (!o.in_manifest) continue;
    const std::string key(o.key);
    if (keys.contains(key))
      throw std::logic_error("io/manifest.schema.in.json names '" + key + "', which its feature's row adds");
    // Optional keys, written only when set (io/manifest.cpp), so format 1's readers stay valid.
    keys[key] = o.kind == ProblemOption::Kind::flag
                    ? nlohmann::ordered_json{{"type", "boolean"},
                                             {"description", std::string(o.doc) + " Optional; absent means false."}}
                    : nlohmann::ordered_json{{"type", "integer"}, {"minimum", 0},
                                             {"description", std::string(o.doc) + " Optional; absent means 0."}};
  }
  return schema.dump(2) + '\n';
}

std::string manifest_schema() { return manifest_schema(kManifestSchemaTemplate, kProblemOptions); }

}  // namespace attnv::io
