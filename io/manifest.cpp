#include "io/manifest.h"

#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "problem/error.h"
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
constexpr const char* kOptionalCaseKeys[] = {"meta"};

// Reads the fields of one case entry; every message names the case and the key.
class EntryReader {
 public:
  EntryReader(const json& j, std::string prefix) : j_(j), prefix_(std::move(prefix)) {}

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw InputError(prefix_ + (key.empty() ? "" : "key '" + key + "': ") + what);
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
    if (v.is_number_unsigned()) {
      if (v.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        fail(key, "the integer does not fit in 64 bits");
      return static_cast<std::int64_t>(v.get<std::uint64_t>());
    }
    if (v.is_number_integer()) return v.get<std::int64_t>();
    wrong_type(key, "an integer");
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
    if (!v.is_array() || v.size() != 2 || !v[0].is_number_integer() || !v[1].is_number_integer())
      fail("window", std::string("expected [left, right], two integers (-1 = unbounded), got ") +
                         (v.is_array() ? "an array of " + std::to_string(v.size()) + " elements, not both integers"
                                       : json_type(v)));
    Window w;
    if (v[0].is_number_unsigned() && v[0].get<std::uint64_t>() > std::uint64_t(std::numeric_limits<std::int64_t>::max()))
      fail("window", "left side does not fit in 64 bits");
    if (v[1].is_number_unsigned() && v[1].get<std::uint64_t>() > std::uint64_t(std::numeric_limits<std::int64_t>::max()))
      fail("window", "right side does not fit in 64 bits");
    w.left = v[0].get<std::int64_t>();
    w.right = v[1].get<std::int64_t>();
    return w;
  }

 private:
  const json& j_;
  std::string prefix_;
};

std::string quote(std::string_view s) {
  std::string o = "'";
  for (unsigned char c : s) o += (c >= 0x20 && c < 0x7F) ? static_cast<char>(c) : '?';
  return o + "'";
}

ManifestEntry read_entry(const json& j, std::size_t index, std::string_view name) {
  std::string prefix = std::string(name) + ": case " + std::to_string(index);
  if (!j.is_object()) throw InputError(prefix + ": expected an object, got " + json_type(j));
  if (auto it = j.find("id"); it != j.end() && it->is_string()) prefix += " (id " + quote(it->get<std::string>()) + ")";
  prefix += ": ";
  EntryReader r(j, prefix);
  for (const auto& [key, value] : j.items()) {
    bool known = false;
    for (const char* k : kCaseKeys) known |= key == k;
    for (const char* k : kOptionalCaseKeys) known |= key == k;
    if (!known) r.fail(key, "unknown key (free-form data belongs in \"meta\")");
  }
  for (const char* k : kCaseKeys) r.get(k);  // report a missing key before any type error

  ManifestEntry e;
  e.id = r.string("id");
  if (e.id.empty()) r.fail("id", "must not be empty");
  e.dir = r.string("dir");
  if (std::string why = unsafe_dir_reason(e.dir); !why.empty()) r.fail("dir", quote(e.dir) + " is unsafe: " + why);
  Problem& p = e.problem;
  const std::string dtype = r.string("dtype");
  const auto t = parse_dtype(dtype);
  if (!t || dtype != dtype_name(*t)) r.fail("dtype", quote(dtype) + " is not one of 'f64', 'f32', 'f16', 'bf16'");
  p.dtype = *t;
  p.shape = {r.integer("B"), r.integer("Hq"), r.integer("Hkv"), r.integer("Tq"),
             r.integer("Tk"), r.integer("Dk"), r.integer("Dv")};
  p.scale = r.optional_number("scale");
  p.softcap = r.optional_number("softcap");
  p.causal = r.boolean("causal");
  const std::string align = r.string("alignment");
  const auto a = parse_alignment(align);
  if (!a) r.fail("alignment", quote(align) + " is not 'top_left' or 'bottom_right'");
  p.alignment = *a;
  p.window = r.window();
  p.has_mask = r.boolean("mask");
  p.has_bias = r.boolean("bias");
  p.has_kv_len = r.boolean("kv_len");
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
  return e;
}

json parse_strict(std::string_view text, std::string_view name) {
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
  if (!duplicate.empty()) throw InputError(std::string(name) + ": the key " + quote(duplicate) + " appears twice in one object");
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
      throw InputError(n + ": unknown top-level key " + quote(key) + " (expected format, version, cases, meta)");
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
                       " have the same id " + quote(e.id));
    if (auto [it, fresh] = dirs.emplace(e.dir, i); !fresh)
      throw InputError(n + ": cases " + std::to_string(it->second) + " and " + std::to_string(i) +
                       " have the same dir " + quote(e.dir));
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
    c["dout"] = e.has_dout;
    if (!e.meta_json.empty()) {
      try {
        c["meta"] = ojson::parse(e.meta_json);
      } catch (const ojson::exception& ex) {
        throw InputError("case " + quote(e.id) + ": meta is not valid JSON: " + ex.what());
      }
      if (!c["meta"].is_object()) throw InputError("case " + quote(e.id) + ": meta must be a JSON object");
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
