#include "properties/conformance/evidence.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "io/exchange.h"
#include "io/npy.h"
#include "problem/error.h"

namespace attnv::conformance {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Bitwise, so NaN inputs (R6 plants them) compare equal to themselves.
bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

bool same_inputs(const Case& a, const Case& b) {
  return a.problem == b.problem && same_bits(a.q, b.q) && same_bits(a.k, b.k) && same_bits(a.v, b.v) &&
         a.mask == b.mask && same_bits(a.bias, b.bias) && a.kv_len == b.kv_len && same_bits(a.dout, b.dout) &&
         a.cu_seqlens_q == b.cu_seqlens_q && a.cu_seqlens_k == b.cu_seqlens_k;
}

// What differs between the inputs a call had and the ones the evidence recorded ("" if none).
std::string input_difference(const checks::RecordedRun& then, const checks::RecordedRun& now) {
  if (then.layout != now.layout)
    return "layout " + std::string(layout_name(then.layout)) + " then, " + std::string(layout_name(now.layout)) + " now";
  if (then.backward != now.backward) return then.backward ? "backward then, forward only now" : "forward only then, backward now";
  if (then.decode != now.decode) return then.decode ? "a decode call then, a forward now" : "a forward then, a decode call now";
  if (!(then.c.problem == now.c.problem)) return "problem " + describe(then.c.problem) + " then, " + describe(now.c.problem) + " now";
  const std::pair<const char*, bool> tensors[] = {
      {"q", same_bits(then.c.q, now.c.q)},          {"k", same_bits(then.c.k, now.c.k)},
      {"v", same_bits(then.c.v, now.c.v)},          {"mask", then.c.mask == now.c.mask},
      {"bias", same_bits(then.c.bias, now.c.bias)}, {"kv_len", then.c.kv_len == now.c.kv_len},
      {"dout", same_bits(then.c.dout, now.c.dout)},
      {"cu_seqlens", then.c.cu_seqlens_q == now.c.cu_seqlens_q && then.c.cu_seqlens_k == now.c.cu_seqlens_k}};
  for (const auto& [name, same] : tensors)
    if (!same) return std::string(name) + " differs";
  return "";
}

Outputs as_outputs(const bound::Bounds& b) { return Outputs{b.out, b.lse, b.dq, b.dk, b.dv, b.dsinks}; }

std::string case_name(const char* stem, std::size_t n) { return stem + std::to_string(n + 1); }

io::ExchangeCase exchange_case(const Case& c, const std::string& name, const json& meta) {
  io::ExchangeCase ec{c, name, meta.dump()};
  ec.c.id = name;
  return ec;
}

void write_text(const fs::path& path, const std::string& text) {
  io::write_text_atomic(path, text);
}

const json& field(const json& obj, const char* key, const fs::path& dir) {
  if (!obj.contains(key)) throw InputError(dir.string() + ": meta.attnv_requirement has no '" + key + "'");
  return obj[key];
}

template <class T>
T typed(const json& obj, const char* key, const fs::path& dir) {
  const json& v = field(obj, key, dir);
  try {
    return v.get<T>();
  } catch (const json::exception&) {
    throw InputError(dir.string() + ": meta.attnv_requirement." + key + " has the wrong type: " + v.dump());
  }
}

generators::ValueFamily parse_family(const std::string& name, const fs::path& dir) {
  for (int f = 0; f <= static_cast<int>(generators::ValueFamily::f16_top); ++f)
    if (generators::family_name(static_cast<generators::ValueFamily>(f)) == name) return static_cast<generators::ValueFamily>(f);
  throw InputError(dir.string() + ": meta.attnv_requirement.family '" + name + "' is not a value family");
}

}  // namespace

fs::path write_evidence(const fs::path& dir, const Requirement& r, DType dtype, std::uint64_t suite_seed, int case_index,
                        const generators::PropertyCase& pc, const checks::Recording& rec, const std::string& kernel_name,
                        const std::string& kernel_configuration, std::optional<bool> recurred,
                        const std::string& finding_text) {
  std::vector<io::ExchangeCase> cases;
  json requirement_meta = {{"attnv_requirement",
                                  {{"id", r.id},
                                   {"property", r.property},
                                   {"dtype", std::string(dtype_name(dtype))},
                                   {"suite_seed", suite_seed},
                                   {"case_index", case_index},
                                   {"layout", std::string(layout_name(pc.layout))},
                                   {"check_seed", pc.seed},
                                   {"family", std::string(generators::family_name(pc.family))},
                                   {"case_id", pc.c.id},
                                   {"kernel", kernel_name},
                                   {"kernel_configuration", kernel_configuration}}}};
  if (recurred) requirement_meta["attnv_requirement"]["recurred"] = *recurred;
  cases.push_back(exchange_case(pc.c, "case", requirement_meta));
  for (std::size_t n = 0; n < rec.runs.size(); ++n) {
    const checks::RecordedRun& run = rec.runs[n];
    cases.push_back(exchange_case(run.c, case_name("run", n),
                                  {{"attnv_run",
                                    {{"index", n + 1}, {"layout", std::string(layout_name(run.layout))}, {"backward", run.backward}, {"decode", run.decode}, {"id", run.c.id}}}}));
  }
  // Each reference goes beside the calls it judged (same inputs); one no call had gets its own folder.
  std::vector<std::vector<std::size_t>> exact_of_run(rec.runs.size());
  std::vector<std::size_t> lone_exact;
  for (std::size_t e = 0; e < rec.exact.size(); ++e) {
    bool placed = false;
    for (std::size_t n = 0; n < rec.runs.size(); ++n)
      if (same_inputs(rec.exact[e].c, rec.runs[n].c)) {
        exact_of_run[n].push_back(e);
        placed = true;
      }
    if (!placed) {
      lone_exact.push_back(e);
      cases.push_back(exchange_case(rec.exact[e].c, case_name("exact", lone_exact.size() - 1),
                                    {{"attnv_exact", {{"id", rec.exact[e].c.id}}}}));
    }
  }

  // Written beside the destination, then renamed: the folder appears whole or not at all.
  const fs::path tmp = dir.parent_path() / (dir.filename().string() + ".partial-" + std::to_string(::getpid()));
  fs::remove_all(tmp);
  try {
    io::write_exchange(tmp, cases);
    // f64 holds every value of every storage dtype exactly (and NaN, inf as they came).
    for (std::size_t n = 0; n < rec.runs.size(); ++n) {
      const fs::path folder = tmp / case_name("run", n);
      io::write_outputs(folder, "", rec.runs[n].c, rec.runs[n].out, DType::f64);
      if (!exact_of_run[n].empty()) {
        const checks::RecordedExact& x = rec.exact[exact_of_run[n].back()];
        io::write_outputs(folder, "ref_", rec.runs[n].c, x.exact, DType::f64);
        io::write_outputs(folder, "bound_", rec.runs[n].c, as_outputs(x.bounds), DType::f64);
      }
    }
    for (std::size_t n = 0; n < lone_exact.size(); ++n) {
      const checks::RecordedExact& x = rec.exact[lone_exact[n]];
      io::write_outputs(tmp / case_name("exact", n), "ref_", x.c, x.exact, DType::f64);
      io::write_outputs(tmp / case_name("exact", n), "bound_", x.c, as_outputs(x.bounds), DType::f64);
    }
    write_text(tmp / "finding.txt", finding_text);
    fs::remove_all(dir);
    fs::rename(tmp, dir);
  } catch (...) {
    std::error_code ignored;
    fs::remove_all(tmp, ignored);
    throw;
  }
  return dir;
}

std::optional<Evidence> read_evidence(const fs::path& dir) {
  const std::vector<io::ExchangeCase> cases = io::read_exchange_cases(dir);
  std::optional<Evidence> e;
  std::vector<std::pair<std::int64_t, checks::RecordedRun>> runs;
  for (const io::ExchangeCase& ec : cases) {
    if (ec.meta_json.empty()) continue;
    const json meta = json::parse(ec.meta_json, nullptr, /*allow_exceptions=*/false);
    if (!meta.is_object()) continue;
    if (meta.contains("attnv_requirement")) {
      if (e) throw InputError(dir.string() + ": more than one case has meta.attnv_requirement");
      const json& m = meta["attnv_requirement"];
      if (!m.is_object()) throw InputError(dir.string() + ": meta.attnv_requirement is not an object");
      e.emplace();
      e->id = typed<std::string>(m, "id", dir);
      e->property = typed<std::string>(m, "property", dir);
      const std::optional<DType> dt = parse_dtype(typed<std::string>(m, "dtype", dir));
      if (!dt) throw InputError(dir.string() + ": meta.attnv_requirement.dtype is not a dtype");
      e->dtype = *dt;
      e->suite_seed = typed<std::uint64_t>(m, "suite_seed", dir);
      e->case_index = typed<int>(m, "case_index", dir);
      e->kernel = typed<std::string>(m, "kernel", dir);
      // Absent from evidence written before attnv recorded it: then unknown, not "".
      if (m.contains("kernel_configuration")) e->kernel_configuration = typed<std::string>(m, "kernel_configuration", dir);
      if (m.contains("recurred")) e->recurred = typed<bool>(m, "recurred", dir);
      const std::optional<Layout> l = parse_layout(typed<std::string>(m, "layout", dir));
      if (!l) throw InputError(dir.string() + ": meta.attnv_requirement.layout is not a layout (bhtd, bthd, gapped)");
      e->pc.c = ec.c;
      e->pc.c.id = typed<std::string>(m, "case_id", dir);
      e->pc.layout = *l;
      e->pc.seed = typed<std::uint64_t>(m, "check_seed", dir);
      e->pc.family = parse_family(typed<std::string>(m, "family", dir), dir);
      if (e->pc.c.problem.dtype != e->dtype)
        throw InputError(dir.string() + ": the case's dtype is not meta.attnv_requirement.dtype");
    } else if (meta.contains("attnv_run") && meta["attnv_run"].is_object()) {
      const json& m = meta["attnv_run"];
      checks::RecordedRun run;
      run.c = ec.c;
      const std::optional<Layout> l = m.contains("layout") && m["layout"].is_string() ? parse_layout(m["layout"].get<std::string>()) : std::nullopt;
      if (!l || !m.contains("index") || !m["index"].is_number_integer() || !m.contains("backward") || !m["backward"].is_boolean())
        throw InputError(dir.string() + ": case '" + ec.c.id + "': meta.attnv_run needs index, layout and backward");
      run.layout = *l;
      run.backward = m["backward"].get<bool>();
      run.decode = m.contains("decode") && m["decode"].is_boolean() && m["decode"].get<bool>();
      if (m.contains("id") && m["id"].is_string()) run.c.id = m["id"].get<std::string>();
      run.out = io::read_outputs(io::case_dir(dir, ec), "", ec.c);
      runs.emplace_back(m["index"].get<std::int64_t>(), std::move(run));
    }
  }
  if (!e) return std::nullopt;
  std::sort(runs.begin(), runs.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (std::size_t n = 0; n < runs.size(); ++n) {
    if (runs[n].first != static_cast<std::int64_t>(n + 1))
      throw InputError(dir.string() + ": the recorded runs are not numbered 1.." + std::to_string(runs.size()));
    e->runs.push_back(std::move(runs[n].second));
  }
  if (std::ifstream f(dir / "finding.txt"); f) {
    std::ostringstream s;
    s << f.rdbuf();
    e->finding = s.str();
  }
  return e;
}

Rejudgement rejudge(Kernel& k, const Evidence& e) {
  const Requirement& r = requirement(e.id);
  if (r.property != e.property)
    throw InputError("the evidence names " + e.id + " " + e.property + ", but " + r.id + " is " + r.property +
                     " in this attnv: it was written by another version");
  if (r.property == "unbiased_rounding")
    throw InputError(r.id + " is a campaign over many cases: rerun it with its reproduce command, not from one case");
  Rejudgement j;
  checks::Recording now;
  {
    checks::RecordRuns recording;
    j.result = judge_case(k, r, e.pc);
    now = recording.take();
  }
  const std::size_t n = std::min(now.runs.size(), e.runs.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (const std::string d = input_difference(e.runs[i], now.runs[i]); !d.empty()) {
      j.mismatch = "call " + std::to_string(i + 1) + " of the check: " + d;
      break;
    }
    ++j.runs_compared;
  }
  return j;
}

}  // namespace attnv::conformance
