#include "cases/claims.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string_view>

#include "problem/features/registry.h"
#include "problem/error.h"

namespace attnv::cases {
namespace {

using nlohmann::json;

DType dtype_of(const json& v, const std::string& where) {
  if (!v.is_string()) throw InputError(where + ": expected a dtype name (f64, f32, f16, bf16)");
  const auto d = parse_dtype(v.get<std::string>());
  if (!d) throw InputError(where + ": '" + v.get<std::string>() + "' is not a dtype (f64, f32, f16, bf16)");
  return *d;
}

PrecisionModel model_from(const json& m, DType storage, const std::string& where) {
  if (!m.is_object()) throw InputError(where + ": expected an object");
  PrecisionModel p = PrecisionModel::natural(storage);
  bool p_given = false;
  for (const auto& [key, v] : m.items()) {
    const std::string at = where + "." + key;
    if (key == "accum") p.accum = dtype_of(v, at);
    else if (key == "p_dtype") { p.p_dtype = dtype_of(v, at); p_given = true; }
    else if (key == "out") p.out = dtype_of(v, at);
    else if (key == "block") {
      if (!v.is_number_integer() || v.get<std::int64_t>() < 0) throw InputError(at + ": expected an integer >= 0");
      p.block = v.get<std::int64_t>();
    } else if (key == "exp_ulps") {
      if (!v.is_number() || !(v.get<double>() >= 0.5 && v.get<double>() <= 1e6))
        throw InputError(at + ": expected a number in [0.5, 1e6]");
      p.exp_ulps = v.get<double>();
    } else if (key == "dot") p.dot = dtype_of(v, at);
    else if (key == "score") p.score = dtype_of(v, at);
    else if (key == "softmax") p.softmax = dtype_of(v, at);
    else if (key == "pv") p.pv = dtype_of(v, at);
    else if (key == "flush_subnormals") {
      if (!v.is_boolean()) throw InputError(at + ": expected true or false");
      p.flush_subnormals = v.get<bool>();
    } else {
      throw InputError(at + ": unknown key (accum, p_dtype, out, block, exp_ulps, dot, score, softmax, pv, flush_subnormals)");
    }
  }
  if (!p_given) p.p_dtype = p.accum;  // P stays in the accumulator unless said otherwise
  return p;
}

Claims from_json(const json& j, const std::string& where, const std::vector<DType>& dtypes, ClaimsRoute route) {
  if (!j.is_object()) throw InputError(where + ": expected a JSON object");
  Claims c = default_claims(dtypes);
  const json* precision = nullptr;
  const json* withdrawn = nullptr;
  for (const auto& [key, v] : j.items()) {
    const std::string at = where + ": \"" + key + "\"";
    if (key == "dtypes") {
      if (!v.is_array()) throw InputError(at + ": expected a list of dtype names");
      c.caps.dtypes.clear();
      for (const json& d : v) c.caps.dtypes.push_back(dtype_of(d, at));
      continue;
    }
    if (key == "precision") {
      precision = &v;
      continue;
    }
    if (key == "withdrawn") {
      withdrawn = &v;
      continue;
    }
    bool known = false;
    for (const ClaimInfo& f : kClaims)
      if (key == f.key) {
        if (!v.is_boolean()) throw InputError(at + ": expected true or false");
        // decode: a case folder holds calls, not a KV cache that persists between them, so a
        // program answering through files cannot be held to R21; strided: no memory layout.
        if (v.get<bool>() && route == ClaimsRoute::files && !f.not_through_files.empty())
          throw InputError(at + ": true cannot be claimed through files (" + std::string(f.not_through_files) + ")");
        c.caps.*f.member = v.get<bool>();
        known = true;
      }
    if (!known) throw InputError(at + ": unknown key (dtypes, precision, withdrawn, or a capability: gqa, causal_top_left, ...)");
  }
  // Every capability is stated, true or false: a key left out used to mean "claimed", so a
  // claims file written for an older attnv, or with a typo-free omission, claimed more than its
  // author meant. The claims that may be left out claim less when left out (false): strided and
  // decode (only false here), hidden_nonfinite (R6 runs and a leak is a robustness note).
  std::string missing;
  for (const ClaimInfo& f : kClaims)
    if (!f.may_be_omitted && !j.contains(f.key)) missing += std::string(missing.empty() ? "" : ", ") + std::string(f.key);
  if (!missing.empty()) {
    json full = json::object();
    for (const ClaimInfo& f : kClaims)
      if (f.not_through_files.empty()) full[std::string(f.key)] = j.contains(f.key) ? j.at(f.key) : json(c.caps.*f.member);
    throw InputError(where + ": every capability must be listed, true or false; missing: " + missing +
                     ". The file with them added at the defaults of this export: " + full.dump());
  }
  // Claims withdrawn per dtype: {"f16": ["bias"]}.
  if (withdrawn) {
    const std::string at = where + ": \"withdrawn\"";
    if (!withdrawn->is_object()) throw InputError(at + ": expected an object keyed by dtype, each a list of capabilities");
    for (const auto& [key, list] : withdrawn->items()) {
      const DType d = dtype_of(json(key), at + " key");
      if (!list.is_array()) throw InputError(at + "." + key + ": expected a list of capabilities");
      for (const json& k : list) {
        if (!k.is_string()) throw InputError(at + "." + key + ": expected capability names");
        c.caps.withdrawn[d].insert(k.get<std::string>());
      }
    }
    if (const std::string e = check_withdrawn(c.caps); !e.empty()) throw InputError(where + ": " + e);
  }
  c.precision.clear();
  for (DType d : c.caps.dtypes) c.precision[d] = PrecisionModel::natural(d);
  if (precision) {
    if (!precision->is_object()) throw InputError(where + ": \"precision\": expected an object keyed by dtype");
    for (const auto& [key, m] : precision->items()) {
      const DType d = dtype_of(json(key), where + ": \"precision\" key");
      c.precision[d] = model_from(m, d, where + ": \"precision\"." + key);
    }
  }
  return c;
}

json parse(const std::string& text, const std::string& where) {
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    throw InputError(where + ": not valid JSON: " + e.what());
  }
}

}  // namespace

PrecisionModel Claims::model(DType storage) const {
  const auto it = precision.find(storage);
  return it == precision.end() ? PrecisionModel::natural(storage) : it->second;
}

Claims default_claims(const std::vector<DType>& dtypes) {
  Claims c;
  c.caps.dtypes = dtypes;
  for (const ClaimInfo& f : kClaims) c.caps.*f.member = f.files_default;
  for (DType d : dtypes) c.precision[d] = PrecisionModel::natural(d);
  return c;
}

Claims read_claims(const std::filesystem::path& file, const std::vector<DType>& dtypes) {
  std::ifstream f(file, std::ios::binary);
  if (!f) throw InputError("--claims " + file.string() + ": cannot open the file");
  std::ostringstream text;
  text << f.rdbuf();
  return from_json(parse(text.str(), file.string()), file.string(), dtypes, ClaimsRoute::files);
}

std::string capability_difference(const Claims& a, const Claims& b, const std::string& b_name) {
  const auto names = [](const std::vector<DType>& ds) {
    json j = json::array();
    for (DType d : ds) j.push_back(dtype_name(d));
    return j.dump();
  };
  if (a.caps.dtypes != b.caps.dtypes)
    return "\"dtypes\": " + names(a.caps.dtypes) + " here, " + names(b.caps.dtypes) + " in " + b_name;
  const auto word = [](bool v) { return v ? "true" : "false"; };
  for (const ClaimInfo& f : kClaims) {
    if (a.caps.*f.member != b.caps.*f.member) {
      std::string m = "\"";  // appended, not "\"" + key: GCC 12 warns (-Wrestrict, a false positive) on that form
      m += f.key;
      return m + "\": " + word(a.caps.*f.member) + " here, " + word(b.caps.*f.member) + " in " + b_name;
    }
  }
  return "";
}

std::string claims_to_json(const Claims& c) {
  json j = json::object();
  j["dtypes"] = json::array();
  for (DType d : c.caps.dtypes) j["dtypes"].push_back(dtype_name(d));
  for (const ClaimInfo& f : kClaims) j[std::string(f.key)] = c.caps.*f.member;
  if (!c.caps.withdrawn.empty()) {
    j["withdrawn"] = json::object();
    for (const auto& [d, keys] : c.caps.withdrawn) j["withdrawn"][std::string(dtype_name(d))] = keys;
  }
  j["precision"] = json::object();
  for (const auto& [d, m] : c.precision) {
    json& jm = j["precision"][std::string(dtype_name(d))];
    jm = {{"accum", dtype_name(m.accum)}, {"p_dtype", dtype_name(m.p_dtype)},
          {"out", dtype_name(m.out)}, {"block", m.block}, {"exp_ulps", m.exp_ulps}};
    // Stages only where declared: a claims file without them means "all in accum".
    const std::pair<const char*, const std::optional<DType>*> stages[] = {
        {"dot", &m.dot}, {"score", &m.score}, {"softmax", &m.softmax}, {"pv", &m.pv}};
    for (const auto& [name, t] : stages)
      if (*t) jm[name] = dtype_name(**t);
    if (m.flush_subnormals) jm["flush_subnormals"] = true;  // absent: gradual underflow
  }
  return j.dump();
}

Claims claims_from_json(const std::string& json_text, const std::string& where, const std::vector<DType>& dtypes,
                        ClaimsRoute route) {
  return from_json(parse(json_text, where), where, dtypes, route);
}

}  // namespace attnv::cases
