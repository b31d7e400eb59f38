// attnv cases check: replay the exported suite on a program's answers, and judge what replayed
// answers cannot show from the files themselves: R13 on a second run of the program (--second),
// R14 on the input files' hashes recorded at export.
#include <algorithm>
#include <fstream>
#include <iterator>
#include <optional>

#include "cases/call_hash.h"
#include "cases/cases.h"
#include "cases/replay_kernel.h"
#include "io/exchange.h"
#include "problem/error.h"
#include "properties/checks/runs.h"

namespace attnv::cases {
namespace {

namespace fs = std::filesystem;
using conformance::Finding;
using conformance::Requirement;
using conformance::RequirementResult;
using conformance::Verdict;
using ThroughFiles = Requirement::ThroughFiles;

std::string file_text(const fs::path& file) {
  std::ifstream f(file, std::ios::binary);
  if (!f) throw InputError(file.string() + ": cannot open for reading");
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

bool runs(const Suite& s, const Requirement& r) {
  return s.only.empty() ||
         std::any_of(s.only.begin(), s.only.end(), [&](const std::string& o) { return o == r.id || o == r.property; });
}

// A second answer set is only evidence if the program answered the very same cases: DIR2 must hold
// the same export, byte for byte (a copy of DIR made before answering it).
void require_same_export(const fs::path& dir, const fs::path& second) {
  const std::string where = "--second " + second.string();
  if (!fs::is_directory(second)) throw InputError(where + ": the folder does not exist");
  std::error_code ec;
  if (fs::equivalent(dir, second, ec))
    throw InputError(where + ": that is " + dir.string() +
                     " itself; comparing a folder with itself proves nothing. Copy the export, run the program on "
                     "the copy too, and give the copy");
  for (const std::string& name : {std::string(kExportFile), std::string(io::kManifestFile)}) {
    const fs::path mine = dir / name, theirs = second / name;
    if (!fs::exists(theirs))
      throw InputError(where + ": " + theirs.string() + " is missing: the second folder must be a copy of the export " +
                       dir.string() + " (cp -r), answered by a second run of the program");
    if (file_text(mine) != file_text(theirs))
      throw InputError(where + ": " + theirs.string() + " differs from " + mine.string() +
                       ": the second folder is not a copy of the same export");
  }
}

struct ResultTensor {
  const char* name;
  std::vector<double> Outputs::*field;
};
constexpr ResultTensor kResults[] = {
    {"out", &Outputs::out}, {"lse", &Outputs::lse}, {"dq", &Outputs::dq}, {"dk", &Outputs::dk}, {"dv", &Outputs::dv},
    {"dsinks", &Outputs::dsinks}};

// "" when the case folder's answers are the same bits in both runs, else the first difference.
// Values are compared as read (a file saved as <f4 in one run and <f8 in the other, with the same
// values, is the same answer); a file present in one run only is a difference.
std::string answer_difference(const fs::path& dir, const fs::path& second, const ReplayKernel::Entry& e) {
  Case c;
  c.id = e.id;
  c.problem = e.problem;
  const fs::path a = dir / e.dir, b = second / e.dir;
  Outputs first, again;
  try {
    first = io::read_outputs(a, "", c);
    again = io::read_outputs(b, "", c);
  } catch (const InputError& err) {
    return std::string("cannot compare the two runs: ") + err.what();
  }
  for (const ResultTensor& t : kResults) {
    const std::vector<double>& x = first.*t.field;
    const std::vector<double>& y = again.*t.field;
    const std::string file = std::string(t.name) + ".npy";
    if (x.empty() && y.empty()) continue;
    if (x.empty() != y.empty())
      return "the two runs differ: " + ((x.empty() ? b : a) / file).string() + " exists, " +
             ((x.empty() ? a : b) / file).string() + " does not";
    const std::string d = checks::detail::bitwise_difference(c, t.name, x, y);
    if (!d.empty()) return "the two runs differ: " + (a / file).string() + " vs " + (b / file).string() + ": " + d;
  }
  return "";
}

// "" when the case folder holds the input files recorded at export, unchanged; else what changed.
std::string input_change(const fs::path& folder, const std::vector<std::string>& names,
                         const std::map<std::string, std::string>& recorded) {
  for (const std::string& name : names) {
    const fs::path f = folder / name;
    const auto it = recorded.find(name);
    const bool exists = fs::exists(f);
    if (it == recorded.end()) {
      if (exists) return "input written: " + f.string() + " appeared since export";
      continue;
    }
    if (!exists) return "input written: " + f.string() + " removed since export";
    try {
      if (hash_hex(file_hash(f)) != it->second) return "input written: " + f.string() + " changed since export";
    } catch (const InputError& err) {
      return std::string("input unreadable: ") + err.what();
    }
  }
  return "";
}

// Folder findings come first: they name the case folder and the element, and with one finding
// kept per requirement they are the one the certificate shows.
void merge(RequirementResult& r, std::vector<Finding> found, int failed, int judged, std::size_t max_findings,
           const std::string& pattern) {
  r.cases_failed += failed;
  if (failed > 0) {
    r.verdict = Verdict::fail;
    r.failure_pattern += (r.failure_pattern.empty() ? "" : "; ") + pattern;
  } else if (r.verdict == Verdict::not_exercised && judged > 0) {
    r.verdict = Verdict::pass;
  }
  found.insert(found.end(), r.findings.begin(), r.findings.end());
  if (found.size() > max_findings) found.resize(max_findings);
  r.findings = std::move(found);
}

Finding folder_finding(const RequirementResult& r, const ReplayKernel::Entry& e, const fs::path& folder,
                       std::string message) {
  Finding f;
  f.case_index = -1;  // a case folder, not a case of the requirement's stream
  f.case_id = e.id;
  f.message = std::move(message);
  f.reproduce = r.id + " " + r.property + " dtype=" + std::string(dtype_name(r.dtype)) + " case folder " + e.dir;
  f.saved_case = folder.string();
  return f;
}

// R13 through files: the replayed check already compared the two runs on its own cases (the
// replay answers repeated calls from the second folder); every other case folder of the dtype is
// compared here, so any bit the program does not reproduce is found wherever it is.
void judge_second_run(RequirementResult& r, const fs::path& dir, const fs::path& second,
                      const std::vector<ReplayKernel::Entry>& entries, std::size_t max_findings) {
  std::vector<Finding> found;
  int compared = 0, differ = 0;
  for (const ReplayKernel::Entry& e : entries) {
    if (e.problem.dtype != r.dtype) continue;
    ++compared;
    std::string d = answer_difference(dir, second, e);
    if (d.empty()) continue;
    ++differ;
    if (found.size() < max_findings) found.push_back(folder_finding(r, e, dir / e.dir, std::move(d)));
  }
  r.cases_run += compared;
  r.cases_checked += compared;
  merge(r, std::move(found), differ, compared, max_findings,
        std::to_string(differ) + " of " + std::to_string(compared) + " case folders differ between the two runs");
  r.note += (r.note.empty() ? "" : "; ") + std::string("repeated calls answered from the second run (") + second.string() +
            "), and " + std::to_string(compared) + " case folders compared bit for bit with it";
}

// R14 through files: judged on the input files, not on replayed calls (whose inputs are attnv's
// own buffers and cannot be written by a program that never sees them). A case counts when export
// hashed its inputs; it fails when any input file changed in DIR or in the second folder.
void judge_input_files(RequirementResult& r, const std::vector<fs::path>& roots, const InputRecord& inputs,
                       const std::vector<ReplayKernel::Entry>& entries, std::size_t max_findings) {
  std::vector<Finding> found;
  int judged = 0, changed = 0;
  for (const ReplayKernel::Entry& e : entries) {
    if (e.problem.dtype != r.dtype) continue;
    const auto it = inputs.hashes.find(e.dir);
    if (it == inputs.hashes.end()) continue;
    ++judged;
    for (const fs::path& root : roots) {
      std::string what = input_change(root / e.dir, inputs.files, it->second);
      if (what.empty()) continue;
      ++changed;
      if (found.size() < max_findings) found.push_back(folder_finding(r, e, root / e.dir, std::move(what)));
      break;
    }
  }
  r.cases_run = r.cases_checked = judged;
  r.cases_not_exercised = 0;
  merge(r, std::move(found), changed, judged, max_findings,
        std::to_string(changed) + " of " + std::to_string(judged) + " case folders with an input file changed since export");
  r.note += (r.note.empty() ? "" : "; ") + std::string("judged on the input files of ") + std::to_string(judged) +
            " case folders, hashed at export";
}

}  // namespace

void mark_unobservable_through_files(RequirementResult& r, const FileEvidence& seen) {
  const ThroughFiles need = conformance::requirement(r.id).through_files;
  if (r.verdict != Verdict::pass || need == ThroughFiles::answers) return;
  if ((need == ThroughFiles::second_run && seen.second_run) || (need == ThroughFiles::input_files && seen.input_files))
    return;
  r.verdict = Verdict::not_exercised;
  r.cases_not_exercised = r.cases_checked;
  r.cases_checked = 0;
  r.exercised = 0;  // the replayed answers gave the check nothing it could judge
  r.judged_only_with = need == ThroughFiles::second_run ? "--second COPY (a second run of the program)"
                                                         : "an export that records its input files' hashes";
  r.note = need == ThroughFiles::second_run
               ? "through files the answers are read back, so two runs cannot differ: copy the export before "
                 "answering it, run the program twice (once on each copy) and check with --second COPY to judge this"
               : "this export recorded no hashes of its input files (an earlier attnv wrote it): export again to "
                 "judge whether the program writes its inputs";
}

Suite checked_suite(const fs::path& dir, const CheckOptions& opt) {
  if (!fs::is_directory(dir)) throw InputError(dir.string() + ": the folder does not exist");
  const fs::path export_file = dir / kExportFile;
  Suite suite = read_suite(export_file);
  if (!opt.claims.empty()) {
    // The exported calls were drawn for the exported capabilities (a case the claims exclude was
    // never exported); the precision model only sets the bounds the answers are judged by.
    Claims c = read_claims(opt.claims, suite.dtypes);
    const std::string where = "--claims " + opt.claims.string();
    if (const std::string d = capability_difference(c, suite.claims, export_file.string()); !d.empty())
      throw InputError(where + ": " + d + ": a check may change only \"precision\"; the exported calls were drawn " +
                       "for the exported capabilities (export again to claim others)");
    for (const auto& [d, m] : c.precision)
      if (std::find(suite.dtypes.begin(), suite.dtypes.end(), d) == suite.dtypes.end())
        throw InputError(where + ": \"precision\": the export holds no " + std::string(dtype_name(d)) + " cases");
    suite.claims = std::move(c);
  }
  for (DType d : opt.dtypes)
    if (std::find(suite.dtypes.begin(), suite.dtypes.end(), d) == suite.dtypes.end())
      throw InputError(dir.string() + ": the export holds no " + std::string(dtype_name(d)) + " cases");
  if (!opt.dtypes.empty()) suite.dtypes = opt.dtypes;
  for (const std::string& id : opt.only) {
    const Requirement& r = conformance::requirement(id);
    if (!runs(suite, r)) throw InputError(dir.string() + ": the export does not hold requirement " + r.id);
  }
  if (!opt.only.empty()) suite.only = opt.only;
  if (!opt.second.empty()) {
    require_same_export(dir, opt.second);
    const auto& all = conformance::requirements();
    const auto judges_second_run = [&](const Requirement& r) {
      return r.through_files == ThroughFiles::second_run && runs(suite, r);
    };
    if (std::none_of(all.begin(), all.end(), judges_second_run))
      throw InputError("--second " + opt.second.string() +
                       ": a second run is evidence for R13 (determinism), which this check does not run");
  }
  return suite;
}

conformance::ConformanceReport check(const fs::path& dir, const Progress& progress, const CheckOptions& opt) {
  const Suite suite = checked_suite(dir, opt);
  std::optional<InputRecord> hashes;
  (void)read_suite(dir / kExportFile, &hashes);
  std::optional<fs::path> second;
  std::vector<fs::path> roots{dir};
  if (!opt.second.empty()) {
    second = opt.second;
    roots.push_back(opt.second);
  }
  ReplayKernel replay(dir, suite.claims, second);
  const FileEvidence seen{second.has_value(), hashes.has_value()};
  const int max_findings = conformance::ConformanceOptions{}.max_findings;
  const auto max_kept = static_cast<std::size_t>(std::max(max_findings, 1));
  const auto on_start = [&](const std::string& id, DType d) {
    replay.start(id, d, conformance::requirement(id).through_files == ThroughFiles::second_run);
  };
  const auto on_done = [&](RequirementResult& r) {
    if (r.verdict != Verdict::not_claimed) {
      const ThroughFiles need = conformance::requirement(r.id).through_files;
      if (need == ThroughFiles::second_run && second) judge_second_run(r, dir, *second, replay.entries(), max_kept);
      if (need == ThroughFiles::input_files && hashes) judge_input_files(r, roots, *hashes, replay.entries(), max_kept);
    }
    mark_unobservable_through_files(r, seen);
    if (progress) progress(r);
  };
  return run_suite(replay, suite, max_findings, on_start, on_done, opt.failures.string());
}

}  // namespace attnv::cases
