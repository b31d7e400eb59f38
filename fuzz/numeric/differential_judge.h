#pragma once
// The differential judge of attnv fuzz: a genome (or a case) made into a case within the
// kernel's claims and judged by the one judge every tool uses (judge/judge.h: the kinds of
// finding, their order, the bound of the kernel's own precision model). Shared by the libFuzzer
// target (numeric_fuzzer.cpp, which traps on a finding so libFuzzer saves the input), by `attnv
// fuzz` (fuzz/search/search.cpp: search, shrink, write a reproducer) and by `attnv repro` (one
// exchange case judged again).
//
// What is the fuzzer's own: the genome's wide exponent range, so the backward is judged only in
// backward_range() and where the exact gradients fit the output dtype; a case the reference
// declines, or the kernel's supports() declines (KernelDeclined), is skipped (not judged, no
// finding); floating-point exceptions and a second call are
// on by default (in-process kernels; a plugin runs in its own process).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/numeric/case_genome.h"
#include "problem/buffers.h"
#include "problem/case.h"
#include "problem/fail_kind.h"
#include "problem/kernel.h"
#include "judge/decode.h"
#include "judge/judge.h"
#include "reference/bound/bound.h"

namespace attnv::fuzz {

using judge::FpCheck;

struct DifferentialOptions {
  bool twice = true;            // call twice, compare bits (determinism)
  FpCheck fp = FpCheck::flags;  // floating-point exceptions inside the kernel
  bool backward = true;         // judge the backward where the case has dout and the kernel claims it
};

struct Finding {
  FailKind kind = FailKind::outside_bound;
  std::string message;  // what was found, possibly over several lines (the comparison summary)
  std::string worst;    // the worst element ("out[b=0,h=1,i=3,d=2] = ..., exact ..., bound ... (12x the allowance)"); may be empty
  Case c;               // the case as the kernel received it (dout included when the backward ran)
  Layout layout = Layout::bhtd;
  Outputs got;          // what the kernel wrote (empty after a kernel failure, and for a decode)
  bool backward = false;
  // A decode finding: the plan of the calls; `c` is then the prompt (judge/decode.h) and the
  // message names the call that failed.
  std::optional<judge::DecodePlan> decode{};
};

struct Verdict {
  bool judged = false;       // false: skipped (the reference or the kernel's supports() declined the case)
  std::string skipped_why;
  bool declined = false;     // skipped because the kernel's supports() declined the case
  bool backward = false;     // the backward was part of the run
  std::optional<Finding> finding;
  Outputs exact;             // the reference's outputs (when judged)
  bound::Comparison comparison;   // a forward's (a decode judges many calls: decode_ratio)
  double decode_ratio = 0;        // a decode's worst error/threshold ratio over its calls
  std::int64_t decode_elements = 0;  // and the output elements it compared
  std::vector<std::uint16_t> buckets;  // numeric_signal.h buckets reached (guidance)
};

// The kernel's claims, narrowed to one storage dtype when `dtype` is set. InputError when the
// kernel does not claim that dtype (the message lists what it claims).
Capabilities fuzzed_claims(const Kernel& k, std::optional<DType> dtype);

// Whether the case is in the range where the backward is judged: finite inputs, |q|, |k| <= 2^10,
// |v| <= 2^16, logits and sinks within +-32 (max |scale q.k| after softcap plus max |bias|; |bias| <= 16
// or -inf), no nonzero |q|, |k|, |v| below 2^-30, and 32 max|v| Dv (a bound on dS) within a
// quarter of the storage dtype's largest value. The genome's wide exponent range is for the
// forward's overflow paths; past these limits backward_bound gave NaN bounds, or correct kernels
// (naive and core alike) fell outside it: gaps of the bound's domain, not kernel bugs.
bool backward_range(const Case& c);
// The case a genome describes for these claims, with dO drawn from the genome's seed (ordinary
// range, rounded to the storage dtype) when `backward` and backward_range(case).
Case genome_case(const Genome& g, const Capabilities& claims, bool backward);
// The layout the genome asks for, or BHTD for a kernel that does not claim strided views.
Layout genome_layout(const Genome& g, const Capabilities& claims);

// The decode plan the genome names for these claims (case_genome.h, header[kB] bits 5-7), on the
// prompt `c` (genome_case's); nullopt for a forward.
std::optional<judge::DecodePlan> genome_decode_plan(const Genome& g, const Capabilities& claims, const Case& c);

// Judges one case in one layout. Throws std::logic_error when the harness itself is wrong (an
// invalid case or views), never for the kernel's behaviour.
Verdict judge_fuzzed_case(Kernel& k, const Case& c, Layout layout, const DifferentialOptions& opt);
// Judges a decode of the case's prompt by the plan (judge::judge_decode): skipped when the kernel
// does not claim the decode's problem, declines a call, or the reference declines a call's
// forward. With opt.fp, an exception raised inside a call fails it; with opt.twice the plan runs
// again on fresh buffers and every call must give the same bits.
Verdict judge_decode_case(Kernel& k, const Case& c, Layout layout, const judge::DecodePlan& plan,
                          const DifferentialOptions& opt);
// genome_case + genome_layout + judge_fuzzed_case (backward per opt.backward and the claims), or
// judge_decode_case when the genome asks for a decode.
Verdict judge_genome(Kernel& k, const Genome& g, const Capabilities& claims, const DifferentialOptions& opt);

// One line for a case: the problem, the layout and the value ranges ("B=1 Hq=2 ... layout bthd |q|<=...").
std::string case_line(const Case& c, Layout layout);

}  // namespace attnv::fuzz
