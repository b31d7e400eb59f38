#include "fuzz/search/fuzz_run.h"

#include <cstdio>
#include <sstream>

#include "fuzz/search/reproducer.h"
#include "io/text.h"
#include "problem/error.h"
#include "problem/kernel_configuration.h"
#include "report/certificate.h"

namespace attnv::fuzz {

std::string status_line(const SearchStatus& s) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%.1f s, %lld execs (%.0f/s), %lld skipped (%lld declined by the kernel), corpus %zu, %zu signal buckets, best error/bound ratio ",
                s.seconds, static_cast<long long>(s.execs), s.seconds > 0 ? static_cast<double>(s.execs) / s.seconds : 0.0,
                static_cast<long long>(s.skipped), static_cast<long long>(s.declined), s.corpus, s.buckets);
  // format_ratio: a passing ratio below 1 never prints as "1", the failing threshold.
  return buf + report::format_ratio(s.best_ratio);
}

int fuzz_and_save(const KernelFactory& make, Kernel& probe_kernel, const Capabilities& claims,
                  const FuzzJob& job, std::ostream& out, std::ostream& log) {
  const SearchOptions& opt = job.search;
  Kernel* const probe = &probe_kernel;
  log << "attnv fuzz: kernel " << io::printable(job.kernel_name) << " (" << io::printable(job.kernel_spec) << "), dtypes";
  for (DType d : claims.dtypes) log << ' ' << dtype_name(d);
  log << (claims.backward && opt.judging.backward ? ", forward and backward" : ", forward") << (claims.decode ? ", decode" : "")
      << ", " << opt.jobs << " searcher"
      << (opt.jobs == 1 ? "" : "s") << ", " << opt.seeds.size() << " seed inputs, up to " << opt.max_seconds << " s\n";
  const SearchResult r = run_search(make, opt, [&log](const SearchStatus& s) { log << "attnv fuzz: " << status_line(s) << '\n'; });
  const auto reproduce_line = [&] { return job.reproduce_line; };
  if (r.attnv_error) {
    // attnv could not judge an input (its reference or bound failed): no verdict on the kernel,
    // and the search cannot go on honestly past it. The case is kept, shrunk while the same
    // error persists, so the defect can be reproduced and found.
    const bool backward = opt.judging.backward && claims.backward;
    const std::string found_line =
        fuzz::case_line(fuzz::genome_case(r.genome, claims, backward), fuzz::genome_layout(r.genome, claims));
    log << "attnv fuzz: attnv's own error after " << r.status.execs << " execs; shrinking (up to "
              << job.shrink_seconds << " s)\n";
    const AttnvErrorShrinkResult s =
        shrink_attnv_error(*probe, r.genome, *r.attnv_error, claims, opt.judging, job.shrink_seconds);
    const Case c = fuzz::genome_case(s.genome, claims, backward);
    const Layout layout = fuzz::genome_layout(s.genome, claims);
    std::ostringstream text;
    text << "attnv fuzz: ATTNV ERROR (attnv's own defect, not the kernel's) after " << r.status.execs
         << " execs: " << s.error << "\n  case:  " << fuzz::case_line(c, layout) << '\n';
    if (s.recurred)
      text << "  (shrunk in " << s.steps << " steps, " << s.execs << " execs, from: " << found_line << ")\n";
    else
      text << "  (not shrunk: judged again, this case did not meet the error; the saved case may not show it)\n";
    write_attnv_error_case(job.out, c, layout, s.recurred, job.kernel_spec, probe->configuration(), s.error, text.str());
    log << io::printable(text.str(), true) << "  case saved: " << io::printable(job.out) << "/\n" << reproduce_line();
    return 3;
  }
  if (!r.finding && r.status.skipped == r.status.execs) {
    // "No finding" would say the kernel held up; it was never judged (a kernel that declines
    // every case, a reference that can judge none, or no time to run a single input).
    if (r.status.execs == 0)
      log << "attnv fuzz: error: nothing was judged: no input ran within --max-time " << opt.max_seconds
                << " s: " << status_line(r.status) << '\n';
    else
      log << "attnv fuzz: error: nothing was judged: every input was skipped (" << r.status.declined
                << " declined by the kernel): " << status_line(r.status) << '\n';
    return 2;
  }
  if (!r.finding) {
    out << "attnv fuzz: no finding: " << status_line(r.status) << '\n';
    return 0;
  }
  log << "attnv fuzz: found " << fail_kind_id(r.finding->kind) << " after " << r.status.execs
            << " execs; shrinking (up to " << job.shrink_seconds << " s)\n";
  const auto line_of = [](const fuzz::Finding& f) {
    return fuzz::case_line(f.c, f.layout) + (f.decode ? ", decoded in " + judge::plan_line(*f.decode) : "");
  };
  const std::string found_line = line_of(*r.finding);
  const ShrinkResult s = shrink(*probe, r.genome, *r.finding, claims, opt.judging, job.shrink_seconds);
  const fuzz::Finding& f = s.finding;

  std::ostringstream text;
  text << "attnv fuzz: FOUND " << fail_kind_id(f.kind) << " (" << fail_kind_text(f.kind) << ") in "
       << job.kernel_name << " after " << r.status.execs << " execs in " << std::fixed;
  text.precision(3);
  text << r.status.seconds << " s\n";
  text << "  what:  " << io::indent_lines(f.message, "         ") << '\n';
  if (!f.worst.empty()) text << "  worst: " << f.worst << '\n';
  text << "  case:  " << line_of(f) << '\n';
  if (s.recurred)
    text << "  (shrunk in " << s.steps << " steps, " << s.execs << " execs, from: " << found_line << ")\n";
  else if (!s.rejudge_attnv_error.empty())
    text << "  (not shrunk: judged again, attnv met its own error on this case (" << s.rejudge_attnv_error
         << "), so whether the kernel fails it again is unknown, and `attnv repro` may see it pass)\n";
  else
    text << "  (not shrunk: judged again, this case did not fail the same way: the kernel is not deterministic "
            "here, and `attnv repro` may see it pass)\n";
  write_reproducer(job.out, f, s.recurred, job.kernel_spec, probe->configuration(), probe->precision_for(f.c.problem), text.str());
  // The text quotes the plugin's name and messages: printable on the terminal, as is in the file.
  out << io::printable(text.str(), true);
  out << "  reproducer: " << io::printable(job.out) << "/\n";
  out << job.after_folder;
  out << reproduce_line();
  return 1;
}

int rejudge_reproducer(Kernel& k, const std::vector<io::ExchangeCase>& cases, const DifferentialOptions& opt,
                       const std::string& kernel_spec, const std::string& kernel_name, std::ostream& out) {
  if (cases.empty()) throw InputError("the manifest lists no case");
  const Capabilities caps = k.capabilities();
  int failed = 0;
  std::vector<std::string> unsteady;  // cases passed now whose failure did not recur when found
  for (const io::ExchangeCase& ec : cases) {
    const Case& c = ec.c;
    const std::optional<std::string> found_with = reproducer_field(ec, "kernel");
    require_same_configuration(reproducer_field(ec, "kernel_configuration"), !found_with || *found_with == kernel_spec, k,
                               "case '" + c.id + "'");
    if (const std::string why = caps.unsupported(c.problem); !why.empty())
      throw InputError("case '" + c.id + "' (" + describe(c.problem) + "): kernel " + kernel_name + " does not claim " + why);
    Layout layout = reproducer_layout(ec);
    std::string note;
    if (layout != Layout::bhtd && !caps.strided) {
      note = " (layout " + std::string(layout_name(layout)) + " asked for; the kernel only claims dense bhtd)";
      layout = Layout::bhtd;
    }
    const std::optional<judge::DecodePlan> plan = reproducer_decode_plan(ec);
    if (c.has_dout() && !caps.backward && !plan) note += " (case has dout; the kernel claims no backward: forward only)";
    const Verdict v = plan ? judge_decode_case(k, c, layout, *plan, opt) : judge_fuzzed_case(k, c, layout, opt);
    if (!v.judged) throw InputError("case '" + c.id + "': cannot be judged: " + v.skipped_why);
    out << "case " << io::printable(c.id) << ": " << case_line(c, layout)
        << (plan ? ", decoded in " + judge::plan_line(*plan) : v.backward ? ", forward and backward" : ", forward") << note << '\n';
    if (v.finding) {
      ++failed;
      const Finding& f = *v.finding;
      // The message may quote the plugin's own error text: printable, newlines kept.
      out << "  FAIL " << fail_kind_id(f.kind) << ": " << io::printable(io::indent_lines(f.message, "    "), true) << '\n';
      if (!f.worst.empty()) out << "  worst: " << io::printable(f.worst, true) << '\n';
    } else {
      if (plan)
        out << "  PASS: every decode call, worst error/bound ratio " << report::format_ratio(v.decode_ratio) << '\n';
      else
        out << "  PASS: worst error/bound ratio " << report::format_ratio(v.comparison.worst_ratio()) << "\n    "
            << io::indent_lines(v.comparison.summary(), "    ") << '\n';
      if (reproducer_recurred(ec) == false) {
        unsteady.push_back(c.id);
        out << "  but when attnv fuzz judged this case again after finding it, the "
            << (reproducer_field(ec, "attnv_error") ? "error" : "failure")
            << " did not come back: this pass is no evidence of a fix\n";
      }
    }
  }
  const std::string counts = std::to_string(failed) + " of " + std::to_string(cases.size()) + " case" +
                             (cases.size() == 1 ? "" : "s") + " failed with kernel " + io::printable(kernel_name);
  if (failed) {
    out << "attnv repro: FAILS: " << counts << '\n';
    return 1;
  }
  if (!unsteady.empty())
    throw InputError("attnv repro: neither fixed nor failing: " + counts + ", but case '" + unsteady.front() + "'" +
                     (unsteady.size() > 1 ? " and " + std::to_string(unsteady.size() - 1) + " more" : "") +
                     " did not fail the same way when attnv fuzz judged it again (the kernel, or attnv, is not "
                     "deterministic there), so passing it now does not show the bug gone; run attnv fuzz again to "
                     "look for it");
  out << "attnv repro: passes: " << counts << '\n';
  return 0;
}

}  // namespace attnv::fuzz
