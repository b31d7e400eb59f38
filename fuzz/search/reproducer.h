#pragma once
// The folder `attnv fuzz` leaves for a finding and `attnv repro` reads: an exchange folder
// (io/exchange.h, docs/exchange-format.md) with one case, its inputs (dout included when the
// backward was judged), the kernel's outputs (prefix ""), the reference's ("ref_") and the
// per-element bound ("bound_"), and finding.txt (what was found, for people). The case's meta
// holds what a replay needs beyond the tensors: {"attnv_fuzz": {"finding", "layout", "kernel",
// "kernel_configuration", "worst", "recurred"}}; the layout matters (a kernel may only fail on
// gapped or BTHD strides), and so does the configuration (Kernel::configuration(): the core's ISA
// path, a plugin's options). A decode finding also records its plan ("decode": steps, page_size,
// prefix, seed, label) and has no output tensors: its case is the prompt, and the calls' outputs
// have other shapes (finding.txt names the call that failed). "recurred" says whether the found case failed the same way when
// attnv fuzz judged it again: when it did not, a pass of it is no evidence of a fix.
#include <filesystem>
#include <optional>
#include <string>

#include "fuzz/numeric/differential_judge.h"
#include "io/exchange.h"

namespace attnv::fuzz {

// Writes the reproducer into `dir` (created; every file atomically, manifest last). `recurred`:
// the finding came back when its case was judged again (ShrinkResult::recurred).
void write_reproducer(const std::filesystem::path& dir, const fuzz::Finding& f, bool recurred,
                      const std::string& kernel_spec, const std::string& kernel_configuration,
                      const PrecisionModel& model, const std::string& report_text);

// The case of attnv's own error during `attnv fuzz` (its reference or bound could not judge it),
// as an exchange folder in `dir` like a reproducer's: the inputs only, meta.attnv_fuzz =
// {"attnv_error", "layout", "kernel", "kernel_configuration", "recurred"}, and finding.txt.
// `attnv repro` on it meets the same error (exit 3) until attnv is fixed, when the error recurred.
void write_attnv_error_case(const std::filesystem::path& dir, const Case& c, Layout layout, bool recurred,
                            const std::string& kernel_spec, const std::string& kernel_configuration,
                            const std::string& error, const std::string& report_text);

// The layout a reproducer's case asks for (meta.attnv_fuzz.layout), BHTD when absent.
// InputError when it names no layout.
Layout reproducer_layout(const io::ExchangeCase& c);

// A string field of a reproducer case's meta.attnv_fuzz ("kernel", "kernel_configuration"), nullopt
// when the case records none (a plain exchange folder, or one written before attnv recorded it).
// InputError when it is not a string.
std::optional<std::string> reproducer_field(const io::ExchangeCase& c, const char* key);

// meta.attnv_fuzz.recurred of a reproducer case: false when the failure did not come back when
// attnv fuzz judged its case again (a kernel, or attnv, not deterministic there), so that a pass
// of the case says nothing of a fix; nullopt when the case records none (a plain exchange folder,
// or one written before attnv recorded it). InputError when it is not a boolean.
std::optional<bool> reproducer_recurred(const io::ExchangeCase& c);

// meta.attnv_fuzz.decode of a reproducer case: the decode plan its failure was found with (the
// case is then the prompt, judge/decode.h), nullopt for a forward or backward case. InputError
// when it is malformed or does not fit the case's prompt.
std::optional<judge::DecodePlan> reproducer_decode_plan(const io::ExchangeCase& c);

}  // namespace attnv::fuzz
