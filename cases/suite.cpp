#include "cases/suite.h"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "io/exchange.h"
#include "problem/error.h"
#include "problem/features/registry.h"

namespace attnv::cases {
namespace {
using nlohmann::json;
}

std::string attnv_version() { return ATTNV_VERSION; }

std::vector<std::string> input_files() {
  std::vector<std::string> names{"q.npy", "k.npy", "v.npy", "mask.npy", "bias.npy", "dout.npy"};
  for (const IndexInput& in : kIndexInputs) names.push_back(std::string(in.name) + ".npy");
  for (const HeadInput& in : kHeadInputs) names.push_back(std::string(in.name) + ".npy");
  return names;
}

conformance::ConformanceReport run_suite(Kernel& k, const Suite& s, int max_findings, const JobStart& on_start,
                                         const JobDone& on_done, const std::string& failures_dir) {
  conformance::ConformanceOptions opt;
  opt.save_failures_dir = failures_dir;
  opt.tier = s.tier;
  opt.seed = s.seed;
  opt.max_findings = max_findings;
  for (const std::string& o : s.only) conformance::requirement(o);  // InputError on an unknown name
  conformance::ConformanceReport rep{k.name(), s.tier, s.seed, {}, {}, {}};
  for (const conformance::Requirement& r : conformance::requirements()) {
    if (!s.only.empty() && std::find(s.only.begin(), s.only.end(), r.id) == s.only.end() &&
        std::find(s.only.begin(), s.only.end(), r.property) == s.only.end())
      continue;
    for (DType d : s.dtypes) {
      if (on_start) on_start(r.id, d);
      conformance::RequirementResult res = conformance::run_requirement(k, r.id, d, opt);
      if (on_done) on_done(res);
      rep.results.push_back(std::move(res));
    }
  }
  rep.declines = conformance::feature_declines(rep.results);
  rep.exercised = conformance::feature_use(rep.results, k.capabilities());
  return rep;
}

void write_suite(const std::filesystem::path& file, const Suite& s, std::size_t cases, std::uint64_t bytes,
                 const InputRecord& inputs) {
  json j = {{"format", "attnv-cases-export"},
            {"version", 1},
            {"attnv", attnv_version()},
            {"tier", conformance::tier_name(s.tier)},
            {"seed", s.seed},
            {"dtypes", json::array()},
            {"only", s.only},
            {"claims", json::parse(claims_to_json(s.claims))},
            {"cases", cases},
            {"bytes", bytes},
            {"inputs", inputs.hashes},
            {"input_files", inputs.files}};
  for (DType d : s.dtypes) j["dtypes"].push_back(dtype_name(d));
  std::string tmp_name = ".";  // appended, not "." + name: GCC 12 warns (-Wrestrict, a false positive) on that form
  tmp_name += file.filename().string();
  tmp_name += ".tmp";
  const std::filesystem::path tmp = file.parent_path() / tmp_name;
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f << j.dump(2) << '\n';
    if (!f) throw InputError("cannot write " + tmp.string());
  }
  std::filesystem::rename(tmp, file);
}

Suite read_suite(const std::filesystem::path& file, std::optional<InputRecord>* inputs) {
  const std::string where = file.string();
  if (!std::filesystem::exists(file))
    throw InputError(where + ": cannot open (is this a folder written by `attnv cases export`?)");
  // As large as a manifest may be: a full-tier export's file (the input hashes of every case
  // folder) is a few MB; a crafted one of gigabytes is refused before it is read.
  const std::string text = io::read_text_file(file, io::kMaxManifestBytes, " for attnv-export.json");
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw InputError(where + ": not valid JSON: " + e.what());
  }
  auto need = [&](const char* key) -> const json& {
    if (!j.is_object() || !j.contains(key)) throw InputError(where + ": missing key \"" + std::string(key) + "\"");
    return j[key];
  };
  try {
    if (need("format") != "attnv-cases-export") throw InputError(where + ": \"format\" is not \"attnv-cases-export\"");
    if (need("version") != 1) throw InputError(where + ": unsupported \"version\" " + need("version").dump() + " (this attnv reads 1)");
    const std::string version = need("attnv").get<std::string>();
    if (version != attnv_version())
      throw InputError(where + ": exported by attnv " + version + ", this is attnv " + attnv_version() +
                       "; the suite's cases may differ between versions: export again");
    Suite s;
    s.tier = conformance::parse_tier(need("tier").get<std::string>());
    s.seed = need("seed").get<std::uint64_t>();
    for (const json& d : need("dtypes")) {
      const auto t = parse_dtype(d.get<std::string>());
      if (!t) throw InputError(where + ": \"dtypes\": '" + d.get<std::string>() + "' is not a dtype");
      s.dtypes.push_back(*t);
    }
    s.only = need("only").get<std::vector<std::string>>();
    s.claims = claims_from_json(need("claims").dump(), where + ": \"claims\"", s.dtypes);
    if (inputs) {
      // Absent in an export written before inputs were hashed: R14 then stays NOT EXERCISED.
      inputs->reset();
      if (j.contains("inputs")) {
        InputRecord rec;
        rec.hashes = j["inputs"].get<InputHashes>();
        for (const auto& [dir, files] : rec.hashes)
          for (const auto& [name, hex] : files)
            if (hex.size() != 16 || hex.find_first_not_of("0123456789abcdef") != std::string::npos)
              throw InputError(where + ": \"inputs\": \"" + dir + "\": \"" + name + "\": not a 16-digit hash");
        if (j.contains("input_files"))
          rec.files = j["input_files"].get<std::vector<std::string>>();
        else
          rec.files.assign(std::begin(kLegacyInputFiles), std::end(kLegacyInputFiles));
        *inputs = std::move(rec);
      }
    }
    return s;
  } catch (const json::exception& e) {
    throw InputError(where + ": a key has the wrong type: " + e.what());
  }
}

}  // namespace attnv::cases
