#include "report/certificate_schema.h"

#include <algorithm>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "problem/features/registry.h"

namespace attnv::report {

extern const char kCertificateSchemaTemplate[];  // report/certificate.schema.in.json (cmake/AttnvEmbed.cmake)

std::string certificate_schema(std::string_view base, std::span<const ClaimInfo> claims) {
  using SchemaJson = nlohmann::ordered_json;
  SchemaJson schema = SchemaJson::parse(base);
  schema.erase("$comment");  // it speaks of the template
  SchemaJson& caps = schema.at("$defs").at("kernel").at("properties").at("capabilities");
  const auto claim_property = [](const ClaimInfo& c) {
    return c.doc.empty() ? SchemaJson{{"type", "boolean"}} : SchemaJson{{"type", "boolean"}, {"description", std::string(c.doc)}};
  };
  SchemaJson properties = SchemaJson::object(), required = SchemaJson::array();
  for (const auto& [key, value] : caps.at("properties").items()) {
    if (std::any_of(claims.begin(), claims.end(), [&key](const ClaimInfo& c) { return c.key == key; }))
      throw std::logic_error("report/certificate.schema.in.json names the claim '" + key + "', which its feature's row adds");
    properties[key] = value;
    if (key == "dtypes")
      for (const ClaimInfo& c : claims) properties[std::string(c.key)] = claim_property(c);
  }
  for (const SchemaJson& key : caps.at("required")) {
    required.push_back(key);
    if (key == "dtypes")
      for (const ClaimInfo& c : claims) required.push_back(std::string(c.key));
  }
  if (properties.size() != caps.at("properties").size() + claims.size() ||
      required.size() != caps.at("required").size() + claims.size())
    throw std::logic_error("report/certificate.schema.in.json: kernel.capabilities has no property and required \"dtypes\" "
                           "to place the claims after");
  caps["properties"] = std::move(properties);
  caps["required"] = std::move(required);
  return schema.dump(2) + '\n';
}

std::string certificate_schema() { return certificate_schema(kCertificateSchemaTemplate, kClaims); }

}  // namespace attnv::report
