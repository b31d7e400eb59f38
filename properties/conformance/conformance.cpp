// The conformance runner: draws each requirement's cases from its own seeded stream, runs the
// registry's check on each, and folds the PropertyResults into a RequirementResult.
#include "properties/conformance/conformance.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <chrono>
#include <exception>
#include <filesystem>
#include <mutex>
#include <sstream>

#include "problem/features/registry.h"
#include "problem/error.h"
#include "problem/kernel_fault.h"
#include "problem/support_guard.h"
#include "properties/checks/checks.h"
#include "properties/conformance/evidence.h"
#include "util/parallel.h"

namespace attnv::conformance {
namespace {

// The stream of one requirement x dtype: splitmix64 of the seed, the requirement's name and the
// dtype, so adding a requirement never changes another's cases.
std::uint64_t stream_seed(std::uint64_t seed, const std::string& property, DType dtype) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a of the name
  for (char ch : property) h = (h ^ static_cast<unsigned char>(ch)) * 1099511628211ull;
  std::uint64_t z = seed ^ h ^ (static_cast<std::uint64_t>(dtype) + 1) * 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

generators::GenOptions options_for(const Requirement& r, DType dtype, const std::optional<Capabilities>& claims) {
  generators::GenOptions o = r.options;
  o.dtypes = {dtype};
  o.claims = claims;
  return o;
}

// The cases of a stream, drawn in order (drawing is cheap next to running a check).
class Stream {
 public:
  Stream(const Requirement& r, DType dtype, std::uint64_t seed, const std::optional<Capabilities>& claims)
      : cases_(options_for(r, dtype, claims), stream_seed(seed, r.property, dtype)) {}
  // RapidCheck's generation context is process-global (not thread-safe): one draw at a time.
  generators::PropertyCase next() {
    static std::mutex draw;
    const std::lock_guard<std::mutex> lock(draw);
    return cases_.next();
  }

 private:
  generators::CaseStream cases_;
};

bool claims_dtype(Kernel& k, DType d) {
  const auto ds = k.capabilities().dtypes;
  return std::find(ds.begin(), ds.end(), d) != ds.end();
}

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// A failure of the call itself: the kernel was not left in a state worth more calls (each would
// cost a worker restart or a timeout).
bool call_failed(checks::FailKind k) {
  return k == checks::FailKind::crashed || k == checks::FailKind::hung || k == checks::FailKind::refused ||
         k == checks::FailKind::out_of_bounds || k == checks::FailKind::input_written;
}

// A memory fault of the kernel (a write into an input, a touch outside its buffers) fails every
// requirement whose calls meet it: it is one finding, kept by R14 for a written input or else by
// the first result in report order; the others whose every finding is that fault become NOT
// JUDGED, pointing at it. (Results that also failed otherwise stay FAIL.)
void one_finding_per_fault(ConformanceReport& rep) {
  for (const checks::FailKind kind : {checks::FailKind::input_written, checks::FailKind::out_of_bounds}) {
    const std::string id(checks::fail_kind_id(kind));
    auto only = [&](const RequirementResult& r) {
      return r.verdict == Verdict::fail && !r.findings.empty() &&
             std::all_of(r.findings.begin(), r.findings.end(), [&](const Finding& f) { return f.kind == id; });
    };
    const RequirementResult* owner = nullptr;
    for (const RequirementResult& r : rep.results)
      if (only(r) && r.id == "R14" && kind == checks::FailKind::input_written && !owner) owner = &r;
    for (const RequirementResult& r : rep.results)
      if (only(r) && !owner) owner = &r;
    if (!owner) continue;
    const std::string where = owner->id + "/" + std::string(dtype_name(owner->dtype));
    for (RequirementResult& r : rep.results) {
      if (&r == owner || !only(r)) continue;
      r.verdict = Verdict::not_judged;
      r.note = "not judged: its calls met the kernel's " + std::string(checks::fail_kind_text(kind)) + " fault, reported once under " + where;
    }
  }
}

std::string reproduce_line(const Requirement& r, DType dtype, std::uint64_t seed, int index) {
  std::ostringstream o;
  o << r.id << ' ' << r.property << " dtype=" << dtype_name(dtype) << " seed=" << seed << " case=" << index;
  return o.str();
}

// The finding as finding.txt states it (the certificate's words, for a reader of the folder).
std::string finding_text(const Requirement& r, DType dtype, const checks::PropertyResult& pr, const std::string& line,
                         const Kernel& k) {
  std::ostringstream o;
  o << r.id << ' ' << r.property << " on " << dtype_name(dtype) << ": " << r.statement << "\nkernel:    " << k.name();
  if (!k.configuration().empty()) o << " (" << k.configuration() << ')';
  o << "\nfinding:   " << pr.message;
  if (!pr.worst.empty()) o << "\nworst:     " << pr.worst;
  o << "\ncase:      " << pr.case_id << "\ncase line: " << line << '\n';
  return o.str();
}

// Saves the evidence of a failing case (evidence.h); returns its folder, or why it could not.
std::string save_case(const ConformanceOptions& opt, const Requirement& r, DType dtype, int index,
                      const generators::PropertyCase& pc, const checks::PropertyResult& pr, const checks::Recording& rec,
                      const Kernel& k, std::optional<bool> recurred) {
  if (opt.save_failures_dir.empty()) return "";
  try {
    const std::filesystem::path dir = std::filesystem::path(opt.save_failures_dir) /
                                      (r.id + "_" + r.property + "_" + std::string(dtype_name(dtype)) + "_case" +
                                       std::to_string(index));
    std::filesystem::create_directories(dir.parent_path());
    const std::string line = reproduce_line(r, dtype, opt.seed, index);
    return write_evidence(dir, r, dtype, opt.seed, index, pc, rec, k.name(), k.configuration(), recurred,
                          finding_text(r, dtype, pr, line, k))
        .string();
  } catch (const std::exception& e) {
    return std::string("(not saved: ") + e.what() + ")";
  }
}

// Whether a failure kept as a finding comes back when the same case is judged again at once
// (the same kind of failure): a kernel not deterministic there fails it only sometimes, and a
// later pass of it (attnv repro) would be no evidence of a fix. A crash costs a worker restart to
// judge again, which is cheap; nullopt for a hang, which would cost another timeout. The calls
// judging it again make are not kept: the evidence is the first judgement's.
std::optional<bool> failure_recurs(Kernel& k, const Requirement& r, const generators::PropertyCase& pc,
                                   const checks::PropertyResult& first, std::optional<checks::RecordRuns>& recording) {
  if (first.kind == checks::FailKind::hung) return std::nullopt;
  const checks::PropertyResult again = judge_case(k, r, pc);
  if (recording) recording->take();
  // attnv's own error the second time says nothing of the kernel: unknown, not "did not recur".
  if (again.status == checks::Status::attnv_error) return std::nullopt;
  return again.judged() && !again.ok && again.kind == first.kind;
}

// "all in bthd", or "bhtd 30, gapped 7": where the failing cases were laid out.
std::string layout_pattern(const std::array<int, 3>& failed, int total) {
  const Layout layouts[] = {Layout::bhtd, Layout::bthd, Layout::gapped};
  std::string s;
  for (std::size_t l = 0; l < 3; ++l) {
    if (failed[l] == total) return "all in " + std::string(layout_name(layouts[l]));
    if (failed[l] > 0) s += std::string(s.empty() ? "" : ", ") + std::string(layout_name(layouts[l])) + " " + std::to_string(failed[l]);
  }
  return s;
}

void fold(RequirementResult& res, const checks::PropertyResult& pr, int index, const Problem& problem,
          std::vector<UsedFeature> features) {
  const bool judged = pr.judged();
  if (judged) {
    ++res.cases_checked;
    // In the requirement's unit: a check whose unit is the judged case may still return a
    // result that counts elements (R3's V = ones judgement failing: 99,504 "cases judged" of 100).
    res.exercised += res.exercised_unit == "cases judged" ? 1 : pr.exercised;
  }
  res.uninformative += pr.uninformative;  // a not-exercised case may hold them too
  if (pr.status == checks::Status::not_claimed) ++res.cases_not_claimed;
  const bool declined = pr.status == checks::Status::not_supported;
  if (declined) {
    ++res.cases_not_supported;
    res.declined.push_back({index, pr.case_id, starts_with(pr.message, "not supported: ") ? pr.message.substr(15) : pr.message});
  }
  if (pr.status == checks::Status::not_exercised) {
    ++res.cases_not_exercised;
    if (res.not_exercised_why.empty())
      res.not_exercised_why = starts_with(pr.message, "not exercised: ") ? pr.message.substr(15) : pr.message;
  }
  // A failure the check measured no ratio beyond 1 for (a crash, a NaN, a leak found bitwise)
  // ranks as infinity: no headline may show a failed case as a ratio under the bound.
  const double ratio = !pr.ok && !(pr.worst_ratio > 1) ? HUGE_VAL : pr.worst_ratio;
  res.cases.push_back({index, pr.case_id, problem, judged, pr.ok, ratio, declined, std::move(features)});
  res.hist += pr.hist;
  res.tightness += pr.tightness;
  if (ratio > res.worst_ratio) {
    res.worst_ratio = ratio;
    res.worst_case = pr.case_id;
  }
  if (res.note.empty() && pr.status == checks::Status::not_claimed) res.note = pr.message;
}

// A PASS needs the tier's minimum of evidence (Requirement::min_exercised): judging a few cases
// with nothing in them is not the check having run. Below it the result is NOT EXERCISED, also
// when the kernel declined cases (the note counts them): some of the requirement was judged and
// held, but not enough of it. NOT SUPPORTED is kept for a requirement it computed none of.
void judge_evidence(RequirementResult& res, Tier tier) {
  if (res.verdict != Verdict::pass || res.exercised >= res.min_exercised) return;
  res.verdict = Verdict::not_exercised;
  res.note = "exercised only " + std::to_string(res.exercised) + " " + res.exercised_unit + " over " +
             std::to_string(res.cases_checked) + " judged cases; the " + std::string(tier_name(tier)) + " tier needs " +
             std::to_string(res.min_exercised);
  if (res.uninformative > 0)
    res.note += " (" + std::to_string(res.uninformative) +
                " more elements were judged but uninformative: their allowance covered the visible values' range, "
                "so any of those values would have passed)";
}

// The declined cases said in the note of a result that still stands (a PASS or a FAIL shows how
// much of its stream the kernel declined; a NOT SUPPORTED already says it).
void note_declines(RequirementResult& res) {
  if (res.cases_not_supported == 0) return;
  const std::string d = std::to_string(res.cases_not_supported) + " of " + std::to_string(res.cases_run) +
                        " cases declined by the kernel (the first: " + res.declined.front().why + ")";
  if (res.verdict == Verdict::not_supported && res.cases_checked == 0) return;
  res.note += (res.note.empty() ? "" : "; ") + d;
}

RequirementResult run_campaign(Kernel& k, const Requirement& r, DType dtype, const ConformanceOptions& opt, int n) {
  RequirementResult res;
  res.id = r.id;
  res.property = r.property;
  res.dtype = dtype;
  Stream stream(r, dtype, opt.seed, k.capabilities());
  std::vector<Case> cases;
  // A statistical test over the stream: the cases the kernel declines are left out of it (and
  // counted), the test runs on the others.
  SupportGuard guard(k);
  for (int i = 0; i < n; ++i) {
    Case c = stream.next().c;
    Support s;
    try {
      s = k.supports(c.problem, KernelOp::forward);
    } catch (const std::exception& e) {
      // supports() is the kernel's code: what it throws is the kernel's failure.
      const auto* f = dynamic_cast<const KernelFault*>(&e);
      res.cases_run = n;
      res.verdict = Verdict::fail;
      res.findings.push_back({i, c.id, std::string("supports() failed: ") + e.what(), "", reproduce_line(r, dtype, opt.seed, i), "",
                              std::string(checks::fail_kind_id(f ? fail_kind(f->kind()) : checks::FailKind::crashed)),
                              std::nullopt});
      return res;
    }
    if (!s.ok) {
      ++res.cases_not_supported;
      res.declined.push_back({i, c.id, s.why});
      res.cases.push_back({i, c.id, c.problem, false, true, -1, /*declined=*/true, features_used(c.problem, k.capabilities())});
      continue;
    }
    cases.push_back(std::move(c));
  }
  res.cases_run = n;
  res.exercised_unit = r.exercised;
  res.min_exercised = min_exercised(r, opt.tier);
  if (cases.empty()) {
    res.verdict = Verdict::not_supported;
    res.note = "the kernel declined all " + std::to_string(n) + " cases (the first: " + res.declined.front().why + ")";
    return res;
  }
  checks::PropertyResult pr;
  try {
    pr = r.campaign(guard, cases);
  } catch (const KernelDeclined& e) {
    res.verdict = Verdict::not_supported;
    res.note = "the kernel declined a call the campaign derived: " + e.why();
    return res;
  } catch (const KernelFault& e) {
    pr = checks::PropertyResult::fail(r.property, "", e.what()).with_kind(fail_kind(e.kind()));
  } catch (const std::exception& e) {
    res.verdict = Verdict::attnv_error;
    res.note = std::string("attnv error: ") + e.what() + " (attnv's own error, not the kernel's)";
    return res;
  }
  res.cases_checked = static_cast<int>(cases.size());
  res.exercised = pr.exercised;
  for (std::size_t i = 0, d = 0; i < static_cast<std::size_t>(n); ++i) {
    // Declined cases already have their record; the judged ones fill the gaps in stream order.
    if (d < res.declined.size() && res.declined[d].case_index == static_cast<int>(i)) {
      ++d;
      continue;
    }
    const Case& c = cases[i - d];
    res.cases.push_back({static_cast<int>(i), c.id, c.problem, true, pr.ok, -1, false, features_used(c.problem, k.capabilities())});
  }
  std::sort(res.cases.begin(), res.cases.end(), [](const CaseRecord& a, const CaseRecord& b) { return a.index < b.index; });
  if (!pr.ok) {
    res.verdict = Verdict::fail;
    res.findings.push_back({0, pr.case_id, pr.message, pr.worst,
                            r.id + " " + r.property + " dtype=" + std::string(dtype_name(dtype)) +
                                " seed=" + std::to_string(opt.seed) + " cases=0.." + std::to_string(n - 1),
                            "", std::string(checks::fail_kind_id(pr.kind)), std::nullopt});
  } else {
    res.note = pr.message;
    judge_evidence(res, opt.tier);
  }
  note_declines(res);
  return res;
}

}  // namespace

std::string_view tier_name(Tier t) {
  switch (t) {
    case Tier::quick: return "quick";
    case Tier::standard: return "standard";
    case Tier::full: return "full";
  }
  return "?";
}

Tier parse_tier(std::string_view s) {
  for (Tier t : {Tier::quick, Tier::standard, Tier::full})
    if (tier_name(t) == s) return t;
  throw InputError("unknown conformance tier '" + std::string(s) + "' (quick, standard, full)");
}

std::string_view verdict_name(Verdict v) {
  switch (v) {
    case Verdict::pass: return "PASS";
    case Verdict::fail: return "FAIL";
    case Verdict::not_claimed: return "not claimed";
    case Verdict::not_exercised: return "NOT EXERCISED";
    case Verdict::note: return "NOTE";
    case Verdict::attnv_error: return "ATTNV ERROR";
    case Verdict::not_judged: return "NOT JUDGED";
    case Verdict::not_supported: return "NOT SUPPORTED";
  }
  return "?";
}

const Requirement& requirement(const std::string& key) {
  for (const Requirement& r : requirements())
    if (r.id == key || r.property == key) return r;
  throw InputError("no conformance requirement named '" + key + "'");
}

generators::PropertyCase reproduce_case(const std::string& key, DType dtype, std::uint64_t seed, int case_index,
                                   const std::optional<Capabilities>& claims) {
  const Requirement& r = requirement(key);
  if (case_index < 0) throw InputError("case index must be >= 0");
  Stream stream(r, dtype, seed, claims);
  for (int i = 0; i < case_index; ++i) stream.next();
  return stream.next();
}

RequirementResult run_requirement(Kernel& k, const std::string& key, DType dtype, const ConformanceOptions& opt) {
  const Requirement& r = requirement(key);
  RequirementResult res;
  res.id = r.id;
  res.property = r.property;
  res.dtype = dtype;
  res.exercised_unit = r.exercised;
  res.min_exercised = min_exercised(r, opt.tier);
  if (!claims_dtype(k, dtype)) {
    res.verdict = Verdict::not_claimed;
    res.note = "not claimed: dtype " + std::string(dtype_name(dtype));
    return res;
  }
  // Requirements that exist only for a capability (R2, R10, R11, R19) are not claimed as a whole;
  // the others draw only cases the kernel claims.
  if (const std::string need = r.missing(k.capabilities()); !need.empty()) {
    res.verdict = Verdict::not_claimed;
    res.note = "not claimed: " + need;
    return res;
  }
  const int n = static_cast<int>(cases_at(r, opt.tier));
  if (r.campaign) return run_campaign(k, r, dtype, opt, n);
  Stream stream(r, dtype, opt.seed, k.capabilities());
  std::array<int, 3> failed_by_layout{};  // bhtd, bthd, gapped
  // Every call a check makes is kept while failures are saved: the evidence of a failure holds
  // exactly what the kernel was given and returned.
  std::optional<checks::RecordRuns> recording;
  if (!opt.save_failures_dir.empty()) recording.emplace();
  for (int i = 0; i < n; ++i) {
    const generators::PropertyCase pc = stream.next();
    std::vector<UsedFeature> features;
    const checks::PropertyResult pr = judge_case(k, r, pc, &features);
    const checks::Recording rec = recording ? recording->take() : checks::Recording{};
    ++res.cases_run;
    if (opt.on_case) opt.on_case(r.id, dtype, res.cases_run, n);
    if (pr.status == checks::Status::attnv_error) {
      // attnv cannot judge this requirement here: said as attnv's, and nothing more is run on it.
      if (res.verdict != Verdict::fail) res.verdict = Verdict::attnv_error;
      res.note = pr.message + " (attnv's own error, not the kernel's; case " + pc.c.id + ", " +
                 reproduce_line(r, dtype, opt.seed, i) + ")";
      break;
    }
    fold(res, pr, i, pc.c.problem, std::move(features));
    if (!pr.ok) {
      res.verdict = Verdict::fail;
      ++res.cases_failed;
      ++failed_by_layout[static_cast<std::size_t>(pc.layout)];
      // The first max_findings failures are kept (and saved); the rest are counted, so the
      // certificate can say "failed 37 of 200 cases, all in bthd" rather than "1/1".
      if (static_cast<int>(res.findings.size()) < std::max(1, opt.max_findings)) {
        const std::optional<bool> recurred = failure_recurs(k, r, pc, pr, recording);
        checks::PropertyResult found = pr;
        if (recurred == false) {
          while (!found.message.empty() && (found.message.back() == '\n' || found.message.back() == ' '))
            found.message.pop_back();
          found.message += "\n(judged again at once, this case did not fail the same way: the kernel is not "
                           "deterministic here, and attnv repro may see it pass)";
        }
        res.findings.push_back({i, found.case_id, found.message, found.worst, reproduce_line(r, dtype, opt.seed, i),
                                save_case(opt, r, dtype, i, pc, found, rec, k, recurred),
                                std::string(checks::fail_kind_id(found.kind)), recurred});
      }
      // A call that failed (a crash, a hang, a refusal, a stray write) is not counted on: each would
      // cost a worker restart or a timeout. Nor is anything once the caller asked to stop at its findings.
      if (call_failed(pr.kind) || (opt.stop_at_findings && static_cast<int>(res.findings.size()) >= std::max(1, opt.max_findings)))
        break;
    }
  }
  if (res.cases_failed > 0) res.failure_pattern = layout_pattern(failed_by_layout, res.cases_failed);
  if (res.verdict == Verdict::fail && r.robustness && !k.capabilities().hidden_nonfinite) {
    res.verdict = Verdict::note;
    res.note = "robustness note: NaN/inf in hidden positions reached an output; the kernel does not claim "
               "hidden_nonfinite, so this is reported, not failed";
  }
  // A PASS needs at least one case the check judged: cases that were all outside the claims are
  // "not claimed"; cases within them that gave the check nothing to exercise (no hidden key, no
  // fully masked row, MHA for the GQA check) are NOT EXERCISED, never a pass.
  // Cases the kernel declined are neither: when it declined every case within its claims, the
  // requirement is NOT SUPPORTED. (A case it computed that gave the check nothing to exercise
  // makes it NOT EXERCISED below, the declines counted in the note.)
  if (res.verdict == Verdict::pass && res.cases_checked == 0 && res.cases_not_supported > 0 &&
      res.cases_not_supported + res.cases_not_claimed == res.cases_run) {
    res.verdict = Verdict::not_supported;
    res.note = "the kernel declined " + std::to_string(res.cases_not_supported) + " of " + std::to_string(res.cases_run) +
               " cases and no case was judged (the first: " + res.declined.front().why + ")";
  }
  if (res.verdict == Verdict::pass && res.cases_checked == 0) {
    const bool all_unclaimed = res.cases_run > 0 && res.cases_not_claimed == res.cases_run;
    res.verdict = all_unclaimed ? Verdict::not_claimed : Verdict::not_exercised;
    if (res.verdict == Verdict::not_exercised)
      res.note = "none of " + std::to_string(res.cases_run) + " cases exercised it" +
                 (res.not_exercised_why.empty() ? std::string() : " (the first: " + res.not_exercised_why + ")");
  }
  judge_evidence(res, opt.tier);
  note_declines(res);
  return res;
}

namespace {

struct Job {
  std::string id;
  DType dtype;
};

std::vector<Job> jobs(Kernel& k, const ConformanceOptions& opt) {
  std::vector<DType> dtypes = opt.dtypes;
  if (dtypes.empty())
    for (DType d : kAllDTypes)
      if (claims_dtype(k, d)) dtypes.push_back(d);
  std::vector<Job> js;
  for (const Requirement& r : requirements()) {
    if (!opt.only.empty() && std::find(opt.only.begin(), opt.only.end(), r.id) == opt.only.end() &&
        std::find(opt.only.begin(), opt.only.end(), r.property) == opt.only.end())
      continue;
    for (DType d : dtypes) js.push_back({r.id, d});
  }
  return js;
}

// Runs one job, times it and reports it to opt.on_result (one caller at a time).
class JobRunner {
 public:
  JobRunner(const ConformanceOptions& opt, std::size_t total) : opt_(opt), total_(total) {}
  RequirementResult run(Kernel& k, const Job& j) {
    const auto t0 = std::chrono::steady_clock::now();
    RequirementResult r = run_requirement(k, j.id, j.dtype, opt_);
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (opt_.on_result) {
      const std::lock_guard<std::mutex> lock(mutex_);
      opt_.on_result(r, ++done_, total_);
    }
    return r;
  }

 private:
  const ConformanceOptions& opt_;
  std::size_t total_;
  std::size_t done_ = 0;
  std::mutex mutex_;
};

}  // namespace

ConformanceReport run_conformance(Kernel& k, const ConformanceOptions& opt) {
  ConformanceReport rep{k.name(), opt.tier, opt.seed, {}, {}, {}};
  const std::vector<Job> js = jobs(k, opt);
  JobRunner runner(opt, js.size());
  for (const Job& j : js) rep.results.push_back(runner.run(k, j));
  one_finding_per_fault(rep);
  rep.declines = feature_declines(rep.results);
  rep.exercised = feature_use(rep.results, k.capabilities());
  return rep;
}

ConformanceReport run_conformance(const KernelFactory& make, const ConformanceOptions& opt) {
  const std::unique_ptr<Kernel> probe = make();
  ConformanceReport rep{probe->name(), opt.tier, opt.seed, {}, {}, {}};
  const std::vector<Job> js = jobs(*probe, opt);
  rep.results.resize(js.size());
  JobRunner runner(opt, js.size());
  // One job per index (grain 1 would still hand contiguous chunks out; jobs differ in cost, so
  // each worker takes every n-th job instead).
  const int threads = std::max(1, opt.threads > 0 ? opt.threads : default_threads());
  parallel_for(threads, [&](std::int64_t t0, std::int64_t t1) {
    for (std::int64_t t = t0; t < t1; ++t) {
      const std::unique_ptr<Kernel> k = make();
      for (std::size_t n = static_cast<std::size_t>(t); n < js.size(); n += static_cast<std::size_t>(threads))
        rep.results[n] = runner.run(*k, js[n]);
    }
  }, threads, 1);
  one_finding_per_fault(rep);
  rep.declines = feature_declines(rep.results);
  rep.exercised = feature_use(rep.results, probe->capabilities());
  return rep;
}

bool ConformanceReport::ok() const {
  return std::none_of(results.begin(), results.end(),
                      [](const RequirementResult& r) {
                        return r.verdict == Verdict::fail || r.verdict == Verdict::attnv_error ||
                               r.verdict == Verdict::not_supported;
                      }) &&
         std::none_of(declines.begin(), declines.end(), [](const FeatureDeclines& f) { return f.uncovered(); });
}

std::vector<UsedFeature> features_used(const Problem& p, const Capabilities& claims) {
  // The claim table's names for what the problem uses (the names unsupported() reports), for
  // the claims the kernel makes.
  std::vector<UsedFeature> used;
  if (std::find(claims.dtypes.begin(), claims.dtypes.end(), p.dtype) != claims.dtypes.end()) {
    const std::string name = "dtype " + std::string(dtype_name(p.dtype));
    used.push_back({name, name});
  }
  for (const ClaimInfo& c : kClaims) {
    if (!c.used_by || !(claims.*c.member)) continue;
    const std::string why(c.used_by(p));
    if (!why.empty() && std::none_of(used.begin(), used.end(), [&](const UsedFeature& u) { return u.name == why; }))
      used.push_back({why, std::string(c.key)});
  }
  return used;
}

std::vector<FeatureDeclines> feature_declines(const std::vector<RequirementResult>& results) {
  std::vector<FeatureDeclines> out;
  auto entry = [&](const std::string& f) -> FeatureDeclines& {
    for (FeatureDeclines& e : out)
      if (e.feature == f) return e;
    return out.emplace_back(FeatureDeclines{f, 0, 0});
  };
  for (const RequirementResult& r : results)
    for (const CaseRecord& c : r.cases) {
      if (!c.declined && !c.judged) continue;
      for (const UsedFeature& f : c.features) {
        FeatureDeclines& e = entry(f.name);
        (c.declined ? e.declined : e.judged) += 1;
      }
    }
  std::erase_if(out, [](const FeatureDeclines& f) { return f.declined == 0; });
  return out;
}

std::vector<FeatureUse> feature_use(const std::vector<RequirementResult>& results, const Capabilities& claims) {
  std::vector<FeatureUse> out;
  for (DType d : claims.dtypes)  // the claimed dtypes the run asked for (--dtype may ask for fewer)
    if (std::any_of(results.begin(), results.end(), [d](const RequirementResult& r) { return r.dtype == d; })) {
      const std::string name = "dtype " + std::string(dtype_name(d));
      out.push_back({name, name, 0});
    }
  for (const ClaimInfo& c : kClaims)
    if (c.used_by && claims.*c.member) out.push_back({std::string(c.key), std::string(c.label), 0});
  for (const RequirementResult& r : results)
    for (const CaseRecord& rec : r.cases) {
      if (!rec.judged) continue;
      for (FeatureUse& e : out)
        if (std::any_of(rec.features.begin(), rec.features.end(), [&](const UsedFeature& f) { return f.claim == e.claim; }))
          ++e.judged;
    }
  return out;
}

checks::PropertyResult judge_case(Kernel& k, const Requirement& r, const generators::PropertyCase& pc,
                                 std::vector<UsedFeature>* features) {
  // What the claims rule out is not judged. The suite never draws such a case, but a saved one
  // judged again with another kernel (repro) may be: then it is neither fixed nor failing.
  const Capabilities caps = k.capabilities();
  if (const std::string need = r.missing(caps); !need.empty())
    return checks::PropertyResult::not_claimed(r.property, pc.c.id, need);
  if (pc.layout != Layout::bhtd && !caps.strided)
    return checks::PropertyResult::not_claimed(r.property, pc.c.id,
                                              "strided layouts (the case is laid out " + std::string(layout_name(pc.layout)) + ")");
  SupportGuard guard(k);
  if (features) {
    // Computed calls add their features; a declined call's replace them (the case is then
    // judged on nothing but its decline).
    guard.on_call = [features, &caps](const Problem& p, KernelOp, const Support& s) {
      if (!s.ok) features->clear();
      for (UsedFeature& f : features_used(p, caps))
        if (std::find(features->begin(), features->end(), f) == features->end()) features->push_back(std::move(f));
    };
  }
  try {
    return r.check(guard, pc);
  } catch (const KernelDeclined& e) {
    // The kernel said it does not compute one of the case's calls: honest, and not judged.
    return checks::PropertyResult::not_supported(r.property, pc.c.id, e.why());
  } catch (const KernelFault& e) {
    return checks::PropertyResult::fail(r.property, pc.c.id, e.what()).with_kind(fail_kind(e.kind()));
  } catch (const std::exception& e) {
    return checks::PropertyResult::attnv_error(r.property, pc.c.id, e.what());
  }
}

std::string describe(const RequirementResult& r) {
  std::ostringstream o;
  o << r.id << ' ' << r.property << " [" << dtype_name(r.dtype) << "] " << verdict_name(r.verdict) << ": "
    << r.cases_checked << " of " << r.cases_run << " cases judged";
  if (r.cases_checked > 0) o << " (" << r.exercised << ' ' << r.exercised_unit << ")";
  if (r.cases_failed > 0) o << ", " << r.cases_failed << " failed (" << r.failure_pattern << ")";
  if (r.cases_not_exercised > 0) o << " (" << r.cases_not_exercised << " not exercised)";
  if (r.cases_not_supported > 0) o << " (" << r.cases_not_supported << " declined: not supported)";
  if (std::isinf(r.worst_ratio)) o << ", worst case " << r.worst_case << " (failed without a ratio)";
  else if (r.worst_ratio >= 0) o << ", worst " << r.worst_ratio << "x the allowance (" << r.worst_case << ")";
  if (!r.note.empty()) o << "; " << r.note;
  for (const Finding& f : r.findings) {
    o << "\n  " << (f.kind.empty() ? "" : "[" + f.kind + "] ") << f.message;
    if (!f.worst.empty()) o << "; worst: " << f.worst;
    o << "\n  case: " << f.case_id << "\n  reproduce: " << f.reproduce;
    if (!f.saved_case.empty()) o << "\n  saved: " << f.saved_case;
  }
  return o.str();
}

std::string ConformanceReport::table() const {
  std::ostringstream o;
  o << "conformance of " << kernel << ", tier " << tier_name(tier) << ", seed " << seed << '\n';
  for (const RequirementResult& r : results) o << describe(r) << '\n';
  for (const FeatureDeclines& f : declines)
    o << "declined " << f.declined << " cases using " << f.feature << ", judged " << f.judged
      << (f.uncovered() ? ": claimed but every case declined, not certified for it" : "") << '\n';
  return o.str();
}

}  // namespace attnv::conformance
