#include "properties/conformance/evidence_repro.h"

#include "problem/kernel_configuration.h"
#include "io/text.h"
#include "problem/error.h"

namespace attnv::conformance {

int rejudge_evidence(Kernel& k, const Evidence& e, const std::string& kernel_name, const std::string& where,
                     std::ostream& out) {
  const bool same_kernel = e.kernel == k.name();
  require_same_configuration(e.kernel_configuration, same_kernel, k, where);
  const std::string config =
      e.kernel_configuration ? *e.kernel_configuration : (same_kernel ? k.configuration() : std::string());
  out << "evidence: " << io::printable(e.id) << ' ' << io::printable(e.property) << " on " << dtype_name(e.dtype)
      << ", case " << e.case_index << " of seed " << e.suite_seed << " (failed with kernel " << io::printable(e.kernel)
      << (config.empty() ? "" : ", " + io::printable(config))
      << (e.kernel_configuration || config.empty() ? "" : " as this run has it: the evidence does not record one")
      << ")\ncase: " << io::printable(e.pc.c.id) << ", layout " << layout_name(e.pc.layout) << ", " << e.runs.size()
      << " recorded call" << (e.runs.size() == 1 ? "" : "s") << '\n';
  const Rejudgement j = rejudge(k, e);
  const std::string kernel = io::printable(kernel_name);
  if (!j.mismatch.empty()) {
    out << "attnv repro: attnv's own error, not the kernel's: the check no longer makes the calls this evidence "
           "recorded (" << io::printable(j.mismatch) << "); it was written by another attnv version, or edited\n";
    return 3;
  }
  const checks::PropertyResult& r = j.result;
  if (r.status == checks::Status::attnv_error) {
    out << "  ATTNV ERROR: " << io::printable(r.message, true) << '\n'
        << "attnv repro: attnv could not judge this case (its own error, not the kernel's): neither fixed nor failing\n";
    return 3;
  }
  if (!r.judged()) {
    out << "  NOT JUDGED: " << io::printable(r.message, true) << '\n';
    throw InputError("attnv repro: " + e.id + " cannot judge this case with kernel " + kernel +
                     ": neither fixed nor failing (" + r.message + ")");
  }
  if (!r.ok) {
    out << "  FAIL: " << io::printable(io::indent_lines(r.message, "    "), true) << '\n';
    if (!r.worst.empty()) out << "  worst: " << io::printable(r.worst, true) << '\n';
    out << "attnv repro: FAILS: " << e.id << " still fails this case with kernel " << kernel << '\n';
    return 1;
  }
  out << "  PASS" << (r.message.empty() ? "" : ": " + io::printable(r.message, true)) << '\n';
  if (e.recurred == false) {
    out << "  but when the certifier judged this case again after it failed, it passed then too: this pass is no "
           "evidence of a fix\n";
    throw InputError("attnv repro: neither fixed nor failing: " + e.id + " holds on this case with kernel " + kernel +
                     " now, but the case did not fail the same way when it was judged again at once after failing "
                     "(the kernel is not deterministic there), so passing it now does not show the bug gone; run "
                     "the certification again to look for it");
  }
  out << "attnv repro: passes: " << e.id << " holds on this case with kernel " << kernel << " (" << j.runs_compared
      << " call" << (j.runs_compared == 1 ? "" : "s") << " checked against the evidence's inputs)\n";
  return 0;
}

}  // namespace attnv::conformance
