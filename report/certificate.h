#pragma once
// The certificate `attnv certify` emits: a conformance report plus what it is about (which
// kernel, which attnv, the command that reproduces the run). The renderers (terminal, JSON,
// JUnit, HTML) each take a Certificate and return text; they never write files, so the caller
// decides where output goes and writes it atomically. Every renderer is a pure function of the
// Certificate except for wall times (RequirementResult::seconds), which only JUnit shows.
//
// The helpers here are shared by the renderers so the four outputs agree on the verdict, the
// reproduce commands and the worst cases.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "problem/kernel.h"
#include "problem/precision.h"
#include "properties/conformance/conformance.h"

namespace attnv::report {

struct KernelInfo {
  std::string spec;     // how --kernel named it: "builtin:core", "plugin:/path/x.so"
  std::string name;     // Kernel::name()
  std::string version;  // the kernel's own version string ("" when it has none)
  Capabilities caps;
  std::vector<std::pair<DType, PrecisionModel>> precision;  // the declared model per dtype
  std::vector<std::string> notes;  // "decode declared but not yet checked", ...
  std::string sha256;  // SHA-256 (hex) of the plugin file certified; "" for built-in kernels and exchange folders
  unsigned abi_version = 0;  // a plugin's ABI version (1 or 2); 0 for everything else
  // The configuration certified: --kernel-option key=value, in command line order (a plugin of
  // ABI version 2). Part of the run's provenance, and of every command that reruns it.
  std::vector<std::pair<std::string, std::string>> options;
  // Kernel::configuration(): what, beside the name, picked the code certified (the core's
  // "ATTNV_CORE_ISA=avx512"; a plugin's own declared configuration, then its options). The
  // same string its failures' evidence records, which attnv repro holds a rerun to.
  std::string configuration;
};

// " --kernel-option key=value ..." for the options (shell-quoted), "" without any.
std::string kernel_option_args(const KernelInfo& k);

// What did the certifying: attnv's own build and the machine. Identifies the run (two builds of
// attnv, or two machines, never look alike); no verdict depends on it.
struct Provenance {
  std::string attnv_commit;  // git commit attnv was configured from ("unknown" outside a git checkout)
  std::string compiler;      // the compiler that built attnv: "GCC 12.2.0"
  std::string cpu;           // the CPU's model name (/proc/cpuinfo; "unknown" when absent)
  std::string isa;           // the ISA path attnv's optimized core took (core/isa.h isa_features): "avx512f+avx512bw+avx512vl+avx512dq+fma+f16c", the same with "+avx512bf16" (avx512_bf16), "avx2+fma+f16c" or "portable"
};

struct Certificate {
  std::string attnv_version;  // "0.1.0"
  std::string command;        // the command line that reproduces the whole run (environment first)
  Provenance provenance;
  KernelInfo kernel;
  conformance::ConformanceReport report;
  // The environment the run depended on, as a shell prefix: "ATTNV_CORE_ISA=avx2" when the
  // built-in core ran on a path forced by it (another path computes other bits, and
  // avx512_bf16 another precision model); empty otherwise. Every rerun and repro command the
  // certificate prints starts with it, so that none of them judges another path's kernel.
  std::string environment;
};

// The run at a glance, as every renderer states it.
struct Summary {
  // Requirement x dtype results by verdict (R1 on f32 and on bf16 count twice).
  int pass = 0, fail = 0, not_claimed = 0, not_exercised = 0, notes = 0, attnv_errors = 0, not_judged = 0;
  int not_supported = 0;  // results the kernel declined (supports()): every case, or too many
  int findings = 0;
  int cases_declined = 0;  // cases the kernel declined, over every result
  // No FAIL, no ATTNV ERROR, no NOT SUPPORTED, no claimed feature declined in every case, and at
  // least one PASS.
  bool certified = false;
  std::vector<DType> dtypes;           // the dtypes of the results, in report order
  std::vector<std::string> ids;        // the requirement ids of the results, in report order
  std::vector<std::string> failed;     // "R5/f32", in report order
  std::vector<std::string> unexercised;  // "R7/f32": claimed, but no case exercised the check
  std::vector<std::string> noted;        // "R6/f32": a robustness requirement not claimed, failed
  std::vector<std::string> unjudged;     // "R1/f32": attnv's own error stopped the requirement
  std::vector<std::string> unsupported;  // "R1/f16": the kernel declined its cases
  // Claimed features the kernel declined in every case that used them: "softcap (40 cases)".
  std::vector<std::string> declined_features;
  // Claimed features no judged case used (ConformanceReport::exercised): "ALiBi". Not a finding,
  // and no certificate for them: the headline names them.
  std::vector<std::string> unexercised_features;
  // NOT EXERCISED results that evidence the user did not give would judge (R13 through files
  // without --second): "R13/f32", and what judges them. Not in `unexercised`; they make the run
  // partial, and the verdict line names them first: never a bare CERTIFIED.
  std::vector<std::string> awaiting_evidence;
  std::vector<std::string> evidence_needed;  // distinct RequirementResult::judged_only_with
  bool partial = false;                // not every requirement of the suite was run, or judged
};
Summary summarize(const Certificate& c);

// "CERTIFIED: 20 requirements pass on f32, bf16 (quick tier, seed 20261121)" or
// "NOT CERTIFIED: 2 findings in R5/f32, R9/f32".
std::string verdict_line(const Certificate& c);

// The command that reruns one requirement on one dtype (the kernel options included):
// "attnv certify --kernel builtin:core --suite quick --dtype f32 --seed 20261121 --only R5".
std::string reproduce_command(const Certificate& c, const conformance::RequirementResult& r);
// Judges a saved finding again: "attnv repro --kernel KERNEL FOLDER" ("" when it was not saved, or
// when the kernel is answers read from files, which repro cannot call).
std::string repro_command(const Certificate& c, const conformance::Finding& f);
// `command` run in the certificate's environment: "ATTNV_CORE_ISA=avx2 attnv ...", or as is.
std::string in_environment(const Certificate& c, const std::string& command);

// A finding's kind for people: "outside_bound" -> "outside the bound" (the id itself if unknown).
std::string kind_text(const std::string& kind_id);

// Quotes a word for a POSIX shell only when it needs it ("plugin:/a b.so" -> 'plugin:/a b.so').
std::string shell_quote(const std::string& word);

// A ratio for people: "0.031", "2.4e-05", "inf", "nan", "-" for "no ratio" (negative).
std::string format_ratio(double r);

// The result of requirement id on dtype d (null when the run has none).
const conformance::RequirementResult* find_result(const Certificate& c, const std::string& id, DType d);

// The worst case of each dtype over all results with a ratio (nullopt when none has one).
struct Worst {
  double ratio = -1;
  const conformance::RequirementResult* result = nullptr;
  const conformance::CaseRecord* record = nullptr;  // null when the result kept no case records
};
std::optional<Worst> worst_for(const Certificate& c, DType d);

// A worst case's ratio for people: format_ratio, except for a failure the check measured no
// ratio for (a crash, a NaN, a bitwise difference, an exact 0 answered nonzero: ranked as
// infinite so that it heads the list), which is "no ratio", never "inf".
std::string worst_ratio_text(const Worst& w);
// The kind of the finding behind such a worst case, for people ("outside the bound"); "" for a
// worst case with a ratio.
std::string worst_failure_kind(const Worst& w);

// The n case records with the largest ratios over every result, largest first (ties: report order).
std::vector<Worst> worst_cases(const Certificate& c, std::size_t n);

// The distinct reasons of a result's declined cases with their counts, most frequent first (ties:
// first seen first): a reason naming the shape differs per case, so the renderers show the first
// few and the JSON every case.
std::vector<std::pair<std::string, int>> decline_reasons(const conformance::RequirementResult& r);

// The requirement's statement from the suite's table ("" for an id the suite does not know).
std::string statement_of(const std::string& id);

}  // namespace attnv::report
