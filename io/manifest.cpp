#include "io/manifest.h"

#include <cctype>
#include <cmath>
#include <iterator>
#include <limits>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "io/npy.h"
#include "io/text.h"
#include "problem/error.h"
#include "problem/features/registry.h"
#include "problem/validate.h"

namespace attnv::io {
namespace {

using nlohmann::json;

const char* json_type(const json& j) {
  if (j.is_null()) return "null";
  if (j.is_boolean()) return "a bool";
  if (j.is_number_integer()) return "an integer";
  if (j.is_number()) return "a number";
  if (j.is_string()) return "a string";
  if (j.is_array()) return "an array";
  return "an object";
}

// Keys a case entry must have, in the order they are written.
constexpr const char* kCaseKeys[] = {"id", "dir", "dtype", "B", "Hq", "Hkv", "Tq", "Tk", "Dk", "Dv",
                                     "scale", "softcap", "causal", "alignment", "window", "mask",
                                     "bias", "kv_len", "dout"};
// Besides "meta", a case entry may carry the options that came later (problem/features/):
// left out, each means 0 (false), so manifests written before it stay valid, and each is written
// only when set, so they are written as they were.
bool is_case_key(std::string_view key) {
  for (const char* k : kCaseKeys)
    if (key == k) return true;
  for (const ProblemOption& o : kProblemOptions)
    if (o.in_manifest && key == o.key) return true;
  return key == "meta";
}

constexpr const char* kOutOfRange = "out of range: the integer does not fit in 64 bits (-2^63 .. 2^63-1)";

// An integer too large for int64. nlohmann keeps 2^63 .. 2^64-1 as unsigned and reads anything
// larger (18446744073709551616, 1e30) as a double: without this check such a shape would be
// reported as "expected an integer, got a number", which sends the author looking for a typo.
// A double of magnitude >= 2^63 is always integral, so it cannot be a fraction like 3.5.
bool beyond_int64(const json& v) {
  constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  if (v.is_number_unsigned()) return v.get<std::uint64_t>() > kMax;
  return v.is_number_float() && std::fabs(v.get<double>()) >= 0x1p63;
}

// Reads the fields of one case entry; every message names the case and the key.
class EntryReader {
 public:
  EntryReader(const json& j, std::string prefix) : j_(j), prefix_(std::move(prefix)) {}

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw InputError(prefix_ + (key.empty() ? "" : "key " + single_quoted(key) + ": ") + what);
  }
  const json& get(const char* key) const {
    auto it = j_.find(key);
    if (it == j_.end()) fail(key, "missing (required)");
    return *it;
  }
  [[noreturn]] void wrong_type(const char* key, const char* want) const {
    fail(key, std::string("expected ") + want + ", got " + json_type(get(key)));
  }
  std::int64_t integer(const char* key) const {
    const json& v = get(key);
    if (beyond_int64(v)) fail(key, kOutOfRange);
    if (!v.is_number_integer()) wrong_type(key, "an integer");
    return v.get<std::int64_t>();
  }
  bool boolean(const char* key) const {
    const json& v = get(key);
    if (!v.is_boolean()) wrong_type(key, "true or false");
    return v.get<bool>();
  }
  std::string string(const char* key) const {
    const json& v = get(key);
    if (!v.is_string()) wrong_type(key, "a string");
    return v.get<std::string>();
  }
  std::optional<double> optional_number(const char* key) const {
    const json& v = get(key);
    if (v.is_null()) return std::nullopt;
    if (!v.is_number()) wrong_type(key, "null or a number");
    return v.get<double>();
  }
  Window window() const {
    const json& v = get("window");
    if (v.is_array() && v.size() == 2 && (beyond_int64(v[0]) || beyond_int64(v[1])))
      fail("window", std::string(beyond_int64(v[0]) ? "left" : "right") + " side " + kOutOfRange);
    if (!v.is_array() || v.size() != 2 || !v[0].is_number_integer() || !v[1].is_number_integer())
      fail("window", std::string("expected [left, right], two integers (-1 = unbounded), got ") +
                         (v.is_array() ? "an array of " + std::to_string(v.size()) + " elements, not both integers"
                                       : json_type(v)));
    return Window{v[0].get<std::int64_t>(), v[1].get<std::int64_t>()};
  }

 private:
  const json& j_;
  std::string prefix_;
};

// Refuses, before anything is allocated, a case one of whose tensors would exceed
// kMaxTensorElements. Small input files can imply a huge output: Tq = Dv = 2^20 with Dk = Tk = 1
// makes q and v 2^20 elements each but out 2^40 elements (8 TiB as f64).
void check_tensor_sizes(const Problem& p, const EntryReader& r) {
  const Shape& s = p.shape;
  std::vector<std::pair<std::string, std::vector<std::int64_t>>> tensors = {
      {"q [B,Hq,Tq,Dk]", {s.B, s.Hq, s.Tq, s.Dk}},
      {"k [B,Hkv,Tk,Dk]", {s.B, s.Hkv, s.Tk, s.Dk}},
      {"v [B,Hkv,Tk,Dv]", {s.B, s.Hkv, s.Tk, s.Dv}},
      {"out [B,Hq,Tq,Dv]", {s.B, s.Hq, s.Tq, s.Dv}}};
  if (p.has_mask || p.has_bias) {
    // The larger of the two (each extent is B or 1, Hq or 1).
    const Leading d{(p.has_mask && p.mask_dims.batch) || (p.has_bias && p.bias_dims.batch),
                    (p.has_mask && p.mask_dims.heads) || (p.has_bias && p.bias_dims.heads)};
    const auto e = broadcast_extents(s, d);
    if (!d.any()) tensors.push_back({p.has_mask ? "mask [Tq,Tk]" : "bias [Tq,Tk]", {s.Tq, s.Tk}});
    else tensors.push_back({"mask/bias [B|1,Hq|1,Tq,Tk]", {e[0], e[1], e[2], e[3]}});
  }
  for (const auto& [name, dims] : tensors) {
    std::int64_t n = 1;
    for (std::int64_t d : dims) n *= d;  // check_problem ruled out overflow, even times 8 bytes
    if (n > kMaxTensorElements)
      r.fail("", name + " = " + format_shape(dims) + " has " + std::to_string(n) + " elements (" +
                     std::to_string(n * 8) + " bytes as f64), more than the limit of " +
                     std::to_string(kMaxTensorElements) + " elements per tensor (docs/exchange-format.md)");
  }
}

ManifestEntry read_entry(const json& j, std::size_t index, std::string_view name) {
  std::string prefix = std::string(name) + ": case " + std::to_string(index);
  if (!j.is_object()) throw InputError(prefix + ": expected an object, got " + json_type(j));
  if (auto it = j.find("id"); it != j.end() && it->is_string()) prefix += " (id " + single_quoted(it->get<std::string>()) + ")";
  prefix += ": ";
  EntryReader r(j, prefix);
  for (const auto& [key, value] : j.items())
    if (!is_case_key(key)) r.fail(key, "unknown key (free-form data belongs in \"meta\")");
  for (const char* k : kCaseKeys) r.get(k);  // report a missing key before any type error

  ManifestEntry e;
  e.id = r.string("id");
  if (e.id.empty()) r.fail("id", "must not be empty");
  e.dir = r.string("dir");
  if (std::string why = unsafe_dir_reason(e.dir); !why.empty()) r.fail("dir", single_quoted(e.dir) + " is unsafe: " + why);
  Problem& p = e.problem;
  const std::string dtype = r.string("dtype");
  const auto t = parse_dtype(dtype);
  if (!t || dtype != dtype_name(*t)) r.fail("dtype", single_quoted(dtype) + " is not one of 'f64', 'f32', 'f16', 'bf16'");
  p.dtype = *t;
  p.shape = {r.integer("B"), r.integer("Hq"), r.integer("Hkv"), r.integer("Tq"),
             r.integer("Tk"), r.integer("Dk"), r.integer("Dv")};
  p.scale = r.optional_number("scale");
  p.softcap = r.optional_number("softcap");
  p.causal = r.boolean("causal");
  const std::string align = r.string("alignment");
  const auto a = parse_alignment(align);
  if (!a) r.fail("alignment", single_quoted(align) + " is not 'top_left' or 'bottom_right'");
  p.alignment = *a;
  p.window = r.window();
  p.has_mask = r.boolean("mask");
  p.has_bias = r.boolean("bias");
  p.has_kv_len = r.boolean("kv_len");
  for (const ProblemOption& o : kProblemOptions) {
    const std::string key(o.key);
    if (!o.in_manifest || !j.contains(key)) continue;
    o.set(p, o.kind == ProblemOption::Kind::flag ? std::int64_t{r.boolean(key.c_str())} : r.integer(key.c_str()));
  }
  e.has_dout = r.boolean("dout");
  if (auto it = j.find("meta"); it != j.end()) {
    if (!it->is_object()) r.wrong_type("meta", "an object");
    e.meta_json = it->dump();
  }
  if (auto errs = check_problem(p); !errs.empty()) {
    std::string all;
    for (const auto& m : errs) {
      if (!all.empty()) all += "; ";
      all += m;
    }
    r.fail("", "invalid problem: " + all);
  }
  check_tensor_sizes(p, r);
  return e;
}

json parse_strict(std::string_view text, std::string_view name) {
  // nlohmann's lexer takes a NUL byte for the end of the input and would accept "{...}\0junk";
  // JSON has no raw NUL anywhere (a string spells it \u0000).
  if (const auto nul = text.find('\0'); nul != std::string_view::npos)
    throw InputError(std::string(name) + ": not valid JSON: a NUL byte at offset " + std::to_string(nul));
  // nlohmann keeps the last of duplicate keys silently; a callback records the first duplicate.
  std::vector<std::set<std::string>> open_objects;
  std::string duplicate;
  auto cb = [&](int, json::parse_event_t ev, json& parsed) {
    if (ev == json::parse_event_t::object_start) open_objects.emplace_back();
    if (ev == json::parse_event_t::object_end && !open_objects.empty()) open_objects.pop_back();
    if (ev == json::parse_event_t::key && !open_objects.empty() &&
        !open_objects.back().insert(parsed.get<std::string>()).second && duplicate.empty())
      duplicate = parsed.get<std::string>();
    return true;
  };
  json j;
  try {
    j = json::parse(text.begin(), text.end(), cb);
  } catch (const json::exception& ex) {
    throw InputError(std::string(name) + ": not valid JSON: " + ex.what());
  }
  if (!duplicate.empty()) throw InputError(std::string(name) + ": the key " + single_quoted(duplicate) + " appears twice in one object");
  return j;
}

}  // namespace

std::string unsafe_dir_reason(std::string_view dir) {
  if (dir.empty()) return "it is empty";
  if (dir.front() == '/') return "it is an absolute path";
  std::size_t start = 0;
  while (start <= dir.size()) {
    const std::size_t slash = std::min(dir.find('/', start), dir.size());
    const std::string_view seg = dir.substr(start, slash - start);
    if (seg.empty()) return "it has an empty path segment";
    if (seg == "..") return "it contains '..'";
    if (seg == ".") return "it contains '.' as a path segment";
    if (seg.size() > 255) return "a path segment is longer than 255 bytes";
    start = slash + 1;
  }
  for (unsigned char c : dir) {
    if (c == '\\') return "it contains a backslash (use '/')";
    if (c < 0x20 || c == 0x7F) return "it contains a control character";
  }
  return {};
}

std::vector<std::string> required_case_keys() { return {std::begin(kCaseKeys), std::end(kCaseKeys)}; }

std::vector<std::string> optional_case_keys() {
  std::vector<std::string> keys = {"meta"};
  for (const ProblemOption& o : kProblemOptions)
    if (o.in_manifest) keys.emplace_back(o.key);
  return keys;
}

std::string case_folder_name(std::size_t index, std::string_view id) {
  // The index prefix keeps names unique and keeps them from ever being "." or ".."; the id part
  // is only for humans browsing the folder, so anything outside [A-Za-z0-9._-] becomes '_'.
  std::string n = std::to_string(index);
  if (n.size() < 4) n.insert(0, 4 - n.size(), '0');
  if (!id.empty()) n += '_';
  for (unsigned char c : id.substr(0, 80)) n += (std::isalnum(c) || c == '.' || c == '-' || c == '_') ? static_cast<char>(c) : '_';
  return n;
}

std::vector<ManifestEntry> parse_manifest(std::string_view text, std::string_view name) {
  const json j = parse_strict(text, name);
  const std::string n(name);
  if (!j.is_object()) throw InputError(n + ": the top level must be an object, got " + json_type(j));
  for (const auto& [key, value] : j.items())
    if (key != "format" && key != "version" && key != "cases" && key != "meta")
      throw InputError(n + ": unknown top-level key " + single_quoted(key) + " (expected format, version, cases, meta)");
  for (const char* key : {"format", "version", "cases"})
    if (!j.contains(key)) throw InputError(n + ": the top-level key '" + key + "' is missing");
  if (!j["format"].is_string() || j["format"].get<std::string>() != kExchangeFormat)
    throw InputError(n + ": \"format\" must be \"" + std::string(kExchangeFormat) + "\"");
  if (!j["version"].is_number_integer() || j["version"].get<std::int64_t>() != kExchangeVersion)
    throw InputError(n + ": unsupported \"version\" " + j["version"].dump() + "; this attnv reads version " +
                     std::to_string(kExchangeVersion));
  if (!j["cases"].is_array()) throw InputError(n + ": \"cases\" must be an array, got " + json_type(j["cases"]));
  if (j.contains("meta") && !j["meta"].is_object()) throw InputError(n + ": \"meta\" must be an object");

  std::vector<ManifestEntry> entries;
  std::map<std::string, std::size_t> ids, dirs;
  for (std::size_t i = 0; i < j["cases"].size(); ++i) {
    ManifestEntry e = read_entry(j["cases"][i], i, name);
    if (auto [it, fresh] = ids.emplace(e.id, i); !fresh)
      throw InputError(n + ": cases " + std::to_string(it->second) + " and " + std::to_string(i) +
                       " have the same id " + single_quoted(e.id));
    if (auto [it, fresh] = dirs.emplace(e.dir, i); !fresh)
      throw InputError(n + ": cases " + std::to_string(it->second) + " and " + std::to_string(i) +
                       " have the same dir " + single_quoted(e.dir));
    entries.push_back(std::move(e));
  }
  return entries;
}

std::string render_manifest(const std::vector<ManifestEntry>& entries) {
  // ordered_json keeps the documented key order, which makes manifests easy to read and diff.
  using ojson = nlohmann::ordered_json;
  ojson cases = ojson::array();
  for (const ManifestEntry& e : entries) {
    const Problem& p = e.problem;
    ojson c;
    c["id"] = e.id;
    c["dir"] = e.dir;
    c["dtype"] = std::string(dtype_name(p.dtype));
    c["B"] = p.shape.B;
    c["Hq"] = p.shape.Hq;
    c["Hkv"] = p.shape.Hkv;
    c["Tq"] = p.shape.Tq;
    c["Tk"] = p.shape.Tk;
    c["Dk"] = p.shape.Dk;
    c["Dv"] = p.shape.Dv;
    c["scale"] = p.scale ? ojson(*p.scale) : ojson(nullptr);
    c["softcap"] = p.softcap ? ojson(*p.softcap) : ojson(nullptr);
    c["causal"] = p.causal;
    c["alignment"] = std::string(alignment_name(p.alignment));
    c["window"] = ojson::array({p.window.left, p.window.right});
    c["mask"] = p.has_mask;
    c["bias"] = p.has_bias;
    c["kv_len"] = p.has_kv_len;
    for (const ProblemOption& o : kProblemOptions)
      if (const std::int64_t value = o.get(p); o.in_manifest && value != 0)
        c[std::string(o.key)] = o.kind == ProblemOption::Kind::flag ? ojson(true) : ojson(value);
    c["dout"] = e.has_dout;
    if (!e.meta_json.empty()) {
      try {
        c["meta"] = ojson::parse(e.meta_json);
      } catch (const ojson::exception& ex) {
        throw InputError("case " + single_quoted(e.id) + ": meta is not valid JSON: " + ex.what());
      }
      if (!c["meta"].is_object()) throw InputError("case " + single_quoted(e.id) + ": meta must be a JSON object");
    }
    cases.push_back(std::move(c));
  }
  ojson top;
  top["format"] = std::string(kExchangeFormat);
  top["version"] = kExchangeVersion;
  top["cases"] = std::move(cases);
  return top.dump(2) + "\n";
}

}  // namespace attnv::io
