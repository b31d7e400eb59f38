#include "cli/certificate_output.h"

#include <filesystem>
#include <iostream>
#include <span>
#include <unistd.h>

#include "cli/output_target.h"
#include "core/isa.h"
#include "report/provenance.h"
#include "io/npy.h"
#include "io/text.h"
#include "problem/error.h"
#include "report/html_report.h"
#include "report/json_report.h"
#include "report/junit_report.h"
#include "report/terminal_report.h"

namespace attnv::cli {
namespace fs = std::filesystem;

namespace {

void write_text(const fs::path& path, const std::string& text) {
  io::write_text_atomic(path, text);
}

void require_parent(const std::string& file, const char* option) {
  if (file.empty() || is_stdout(file)) return;
  require_regular_target(file, option);
  const fs::path parent = fs::absolute(fs::path(file)).parent_path();
  if (!fs::is_directory(parent))
    throw InputError(std::string(option) + " " + file + ": the folder " + parent.string() + " does not exist");
  if (fs::is_directory(file)) throw InputError(std::string(option) + " " + file + ": is a folder, give a file name");
}

// The certificate as the terminal shows it: every string that can come from outside attnv (a
// plugin's name, version and messages, case ids from an exchange folder, paths and words from
// the command line) made printable, so none can drive the terminal. The files keep the
// original text; each renderer escapes it for its own format.
report::Certificate for_terminal(report::Certificate c) {
  auto clean = [](std::string& s, bool lines = false) { s = io::printable(s, lines); };
  clean(c.command);
  clean(c.kernel.spec);
  clean(c.kernel.name);
  clean(c.kernel.version);
  clean(c.kernel.configuration);
  clean(c.provenance.cpu);
  clean(c.provenance.compiler);
  for (std::string& n : c.kernel.notes) clean(n, true);
  clean(c.report.kernel);
  for (auto& [key, value] : c.kernel.options) {
    clean(key);
    clean(value);
  }
  for (conformance::RequirementResult& r : c.report.results) {
    clean(r.id);
    clean(r.property);
    clean(r.worst_case);
    clean(r.note, true);
    for (conformance::Finding& f : r.findings) {
      clean(f.case_id);
      clean(f.message, true);
      clean(f.worst, true);
      clean(f.reproduce);
      clean(f.saved_case);
    }
    for (conformance::CaseRecord& k : r.cases) clean(k.case_id);
    for (conformance::Declined& d : r.declined) {  // a plugin's supports() wrote the reason
      clean(d.case_id);
      clean(d.why);
    }
  }
  return c;
}

}  // namespace

namespace {

// A failures/ left in a reused --report folder by an earlier run would sit beside this run's
// certificate (a CERTIFIED one, say) as if it were this run's: attnv's own folder is emptied
// first. One holding anything attnv does not write there (a file, or a folder that is not
// evidence: no manifest.json) is the user's, and is left alone with an error.
void remove_old_failures(const fs::path& failures) {
  std::error_code ec;
  if (!fs::exists(failures, ec)) return;
  const auto refuse = [&](const std::string& why) {
    throw InputError("--report: " + failures.string() + " " + why +
                     ": attnv writes each failing case there, so it removes what an earlier run left; move it away");
  };
  if (!fs::is_directory(failures)) refuse("is not a folder");
  for (const fs::directory_entry& e : fs::directory_iterator(failures))
    if (!e.is_directory() || !fs::exists(e.path() / "manifest.json"))
      refuse("holds " + e.path().filename().string() + ", which is not an evidence folder attnv wrote");
  fs::remove_all(failures, ec);
  if (ec) throw InputError("--report: cannot remove the earlier run's " + failures.string() + " (" + ec.message() + ")");
}

}  // namespace

void add_output_options(CLI::App& cmd, OutputOptions& out) {
  cmd.add_option("--report", out.report_dir,
                 "folder for the whole certificate: certificate.json, certificate.junit.xml, certificate.html "
                 "and failures/ (each failing case in the exchange layout)");
  cmd.add_option("--json", out.json,
                 "write the certificate as JSON (docs/certificate.md; byte-identical per seed); - for standard output");
  cmd.add_option("--junit", out.junit, "write JUnit XML for CI systems; - for standard output");
  cmd.add_option("--html", out.html, "write the self-contained HTML certificate; - for standard output");
  cmd.add_option("--color", out.color,
                 "colour the summary: auto (on a terminal, unless NO_COLOR is set or TERM=dumb), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}))->capture_default_str();
}

void prepare_outputs(const OutputOptions& out) {
  require_parent(out.json, "--json");
  require_parent(out.junit, "--junit");
  require_parent(out.html, "--html");
  if (is_stdout(out.json) + is_stdout(out.junit) + is_stdout(out.html) > 1)
    throw InputError("only one of --json, --junit and --html can be - (standard output): they would be mixed");
  if (!out.report_dir.empty()) {
    std::error_code ec;
    fs::create_directories(out.report_dir, ec);
    if (!fs::is_directory(out.report_dir))
      throw InputError("--report " + out.report_dir + ": cannot create the folder" + (ec ? " (" + ec.message() + ")" : ""));
    remove_old_failures(fs::path(out.report_dir) / "failures");
  }
}

int emit_certificate(report::Certificate& cert, const OutputOptions& out) {
  if (cert.attnv_version.empty()) cert.attnv_version = ATTNV_VERSION;
  // The path the core's f32 micro-kernels take in this process (core/isa.h: ATTNV_CORE_ISA, else
  // the widest the CPU runs). An ATTNV_CORE_ISA this CPU cannot run is an InputError here, before
  // anything is certified. (The fast reference takes AVX2+FMA whenever the CPU has them.)
  if (cert.provenance.attnv_commit.empty())
    cert.provenance = report::this_run(core::isa_features(core::resolve_isa(core::Isa::best)));
  // Each form is rendered once, and only when some output wants it.
  const fs::path dir(out.report_dir);
  const bool to_dir = !out.report_dir.empty();
  const struct {
    const std::string& file;
    const char* in_dir;
    std::string (*render)(const report::Certificate&);
  } forms[] = {{out.json, "certificate.json", report::to_json},
               {out.junit, "certificate.junit.xml", report::to_junit},
               {out.html, "certificate.html", report::to_html}};
  for (const auto& f : forms) {
    if (f.file.empty() && !to_dir) continue;
    const std::string text = f.render(cert);
    if (is_stdout(f.file))
      std::cout << text << std::flush;
    else if (!f.file.empty())
      write_text(f.file, text);
    if (to_dir) write_text(dir / f.in_dir, text);
  }
  // With a report on standard output the summary goes to stderr, so stdout stays parseable.
  const bool summary_to_stderr = is_stdout(out.json) || is_stdout(out.junit) || is_stdout(out.html);
  std::ostream& summary = summary_to_stderr ? std::cerr : std::cout;
  summary << path_note();
  summary << report::terminal_summary(for_terminal(cert), use_color(out.color, summary_to_stderr ? STDERR_FILENO : STDOUT_FILENO));
  if (!out.report_dir.empty())
    summary << "certificate written to " << io::printable(out.report_dir) << "/certificate.{json,junit.xml,html}\n";
  const report::Summary s = report::summarize(cert);
  // attnv's own error is never the kernel's finding: its own exit status (unless findings exist).
  if (s.fail == 0 && s.attnv_errors > 0) return 3;
  if (!cert.report.ok()) return 1;
  if (s.pass == 0) {
    std::cerr << "attnv: error: nothing was certified: the kernel claims none of the requested requirements "
                 "and dtypes (see the 'not claimed' notes above; check --dtype and --only)\n";
    return 2;
  }
  return 0;
}

}  // namespace attnv::cli
