// attnv cases export|check: certify a kernel written in any language through files.
//   export --suite TIER --dtype LIST --out DIR: every call the conformance suite would make, as an
//          exchange folder (one case per distinct call) plus DIR/attnv-export.json;
//   check DIR: the same suite replayed on the answers a program wrote into the case folders.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <unistd.h>

#include "cases/cases.h"
#include "cli/certificate_output.h"
#include "cli/commands.h"
#include "cli/seed_option.h"
#include "cli/output_target.h"
#include "cli/progress.h"
#include "cli/dtype_option.h"
#include "io/text.h"
#include "problem/error.h"

namespace attnv::cli {
namespace {

struct ExportArgs {
  std::string suite = "quick", out, claims;
  std::vector<std::string> dtypes, only;
  std::uint64_t seed = conformance::ConformanceOptions{}.seed;
};

struct CheckArgs {
  std::string dir, second, claims;
  std::vector<std::string> dtypes, only;
  OutputOptions out;
};

cases::Progress progress_line() {
  if (!isatty(STDERR_FILENO)) return {};
  return [](const conformance::RequirementResult& r) {
    std::cerr << "\r\033[K  " << io::printable(r.id) << " [" << dtype_name(r.dtype) << "] " << verdict_name(r.verdict) << std::flush;
  };
}

void run_export(const ExportArgs& a) {
  cases::Suite s;
  s.tier = conformance::parse_tier(a.suite);
  s.seed = a.seed;
  for (const std::string& d : a.dtypes) s.dtypes.push_back(*parse_dtype(d));
  s.only = a.only;
  s.claims = a.claims.empty() ? cases::default_claims(s.dtypes) : cases::read_claims(a.claims, s.dtypes);
  const cases::ExportSummary sum = cases::export_cases(a.out, s, progress_line());
  if (isatty(STDERR_FILENO)) std::cerr << "\r\033[K";
  std::cout << "attnv cases export: " << sum.cases << " case(s) from " << sum.calls << " kernel call(s), "
            << sum.bytes << " bytes, " << sum.seconds << " s, written to " << io::printable(a.out) << '\n'
            << "next: write out.npy" << (s.claims.caps.lse ? " and lse.npy" : "")
            << (s.claims.caps.backward ? " (and dq.npy, dk.npy, dv.npy where dout.npy exists)" : "") << " into each\n"
            << "case folder listed in " << io::printable((std::filesystem::path(a.out) / "manifest.json").string())
            << ", then run: attnv cases check " << io::printable(report::shell_quote(a.out)) << '\n';
  if (!sum.answer_findings.empty()) {
    std::cerr << "attnv cases export: warning: the naive kernel that answered the recording fails these under the\n"
                 "claimed precision model; checks stop at a failure, so calls a correct kernel would get may be\n"
                 "missing from the export (loosen the claimed model):\n";
    for (const std::string& f : sum.answer_findings) std::cerr << "  " << io::printable(f, true) << '\n';
  }
}

// `suite` is the one check ran: its precision models are the ones the answers were judged by
// (the export's, or those of --claims).
report::KernelInfo files_kernel(const CheckArgs& a, const cases::Suite& suite) {
  report::KernelInfo k;
  k.spec = "files:" + a.dir;
  k.name = "files";
  k.caps = suite.claims.caps;
  for (DType d : suite.claims.caps.dtypes) k.precision.emplace_back(d, suite.claims.model(d));
  k.notes.push_back("answers read from the case folders of " + a.dir + " (attnv cases export, " +
                    std::string(conformance::tier_name(suite.tier)) + " suite)");
  if (!a.claims.empty())
    k.notes.push_back("precision models from --claims " + a.claims + ", replacing those recorded at export");
  if (!a.second.empty()) k.notes.push_back("R13 compares these answers with a second run's, in " + a.second);
  return k;
}

int run_check(const CheckArgs& a) {
  cases::CheckOptions opt;
  for (const std::string& d : a.dtypes) opt.dtypes.push_back(*parse_dtype(d));
  opt.only = a.only;
  opt.second = a.second;
  opt.claims = a.claims;
  if (!a.out.report_dir.empty()) opt.failures = std::filesystem::path(a.out.report_dir) / "failures";
  // Every input (the export, --second, --claims) is validated before any output is touched.
  const cases::Suite suite = cases::checked_suite(a.dir, opt);
  prepare_outputs(a.out);
  Progress progress(can_redraw(STDERR_FILENO));
  std::size_t done = 0;
  report::Certificate cert;
  cert.report = cases::check(a.dir, [&](const conformance::RequirementResult& r) { progress.update(r, ++done, 0); }, opt);
  progress.finish();
  cert.kernel = files_kernel(a, suite);
  // The whole run's command keeps the options that change verdicts; per-requirement reruns add
  // --dtype and --only to it (report::reproduce_command).
  cert.command = "attnv cases check " + report::shell_quote(a.dir) +
                 (a.second.empty() ? "" : " --second " + report::shell_quote(a.second)) +
                 (a.claims.empty() ? "" : " --claims " + report::shell_quote(a.claims));
  return emit_certificate(cert, a.out);
}

}  // namespace

void add_cases_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("cases", "Certify a kernel in any language through files: export cases, check answers");
  cmd->require_subcommand(1);
  cmd->footer(
      "1. attnv cases export --suite quick --dtype f32 --out DIR   (the conformance suite's calls, as\n"
      "   exchange folders: docs/exchange-format.md)\n"
      "2. your program writes out.npy and lse.npy (and dq, dk, dv where dout.npy exists) into each case\n"
      "   folder, in the storage dtype (examples/numpy/attention.py)\n"
      "3. attnv cases check DIR   (the same suite on your answers; exit 1 on findings)\n"
      "   To judge determinism (R13): copy DIR before step 2, answer both copies, and add --second COPY.");

  auto e = std::make_shared<ExportArgs>();
  auto* ex = cmd->add_subcommand("export", "Write the cases the conformance suite asks a kernel to answer");
  ex->footer(
      "Runs the conformance suite on a recording kernel that claims what --claims says (default:\n"
      "every forward feature, no backward, never strided) and answers from attnv's naive kernel,\n"
      "and writes each distinct kernel call as a case folder of DIR (manifest.json), plus\n"
      "DIR/attnv-export.json, which `attnv cases check` needs to rerun the suite identically.");
  ex->add_option("--suite", e->suite, "tier: quick, standard or full")
      ->check(CLI::IsMember({"quick", "standard", "full"}))->capture_default_str();
  ex->add_option("--dtype", e->dtypes, "storage dtypes, comma separated (f64, f32, f16, bf16)")
      ->required()->delimiter(',')->check(dtype_validator());
  ex->add_option("--out", e->out, "folder to write the cases into")->required();
  ex->add_option("--seed", e->seed, "suite seed")->check(seed_validator())->capture_default_str();
  ex->add_option("--only", e->only, "requirements to run, comma separated (R1,R5 or names)")->delimiter(',');
  ex->add_option("--claims", e->claims, "JSON file of capabilities and precision models (cases/README.md)");
  ex->callback([e, &exit_code] {
    run_export(*e);
    exit_code = 0;
  });

  auto c = std::make_shared<CheckArgs>();
  auto* ck = cmd->add_subcommand("check", "Rerun the exported suite on the answers written into the case folders");
  ck->footer(
      "Reads DIR/attnv-export.json and reruns the same conformance suite; each kernel call is\n"
      "answered from the out.npy, lse.npy (dq.npy, dk.npy, dv.npy) in its case folder. A missing or\n"
      "malformed answer is a finding naming the case and the file.\n"
      "R13 (determinism) needs two runs of your program: copy DIR before answering it, answer both\n"
      "copies, and give the copy with --second; the two answer sets are compared bit for bit (without\n"
      "--second, R13 is NOT EXERCISED). R14 (inputs never written) is judged on the input files:\n"
      "any q.npy, k.npy, ... changed since export (hashes in attnv-export.json) is a finding.\n"
      "--claims FILE judges the answers under other precision models (its capabilities must be the\n"
      "exported ones; copy \"claims\" from attnv-export.json and edit \"precision\").\n"
      "Exit 0: no findings, 1: findings, 2: usage or input error (then nothing is written), 3: attnv\n"
      "could not judge a requirement (its own error, never a finding against the answers).");
  ck->add_option("DIR", c->dir, "folder written by attnv cases export")->required();
  ck->add_option("--dtype", c->dtypes, "only these dtypes of the export (comma separated)")
      ->delimiter(',')->check(dtype_validator());
  ck->add_option("--only", c->only, "only these requirements of the export (R1,R5 or names)")->delimiter(',');
  ck->add_option("--second", c->second, "a copy of DIR answered by a second run of the program (judges R13)");
  ck->add_option("--claims", c->claims, "claims file whose precision models replace the exported ones");
  add_output_options(*ck, c->out);
  ck->callback([c, &exit_code] { exit_code = run_check(*c); });
}

}  // namespace attnv::cli
