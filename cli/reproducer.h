#pragma once
// The folder `attnv fuzz` leaves for a finding and `attnv repro` reads: an exchange folder
// (io/exchange.h, docs/exchange-format.md) with one case, its inputs (dout included when the
// backward was judged), the kernel's outputs (prefix ""), the reference's ("ref_") and the
// per-element bound ("bound_"), and finding.txt (what was found, for people). The case's meta
// holds what a replay needs beyond the tensors: {"attnv_fuzz": {"finding", "layout", "kernel",
// "worst"}}; the layout matters (a kernel may only fail on gapped or BTHD strides).
#include <filesystem>
#include <string>

#include "fuzz/numeric/oracle.h"
#include "io/exchange.h"

namespace attnv::cli {

// Writes the reproducer into `dir` (created; every file atomically, manifest last).
void write_reproducer(const std::filesystem::path& dir, const fuzz::Finding& f, const std::string& kernel_spec,
                      const PrecisionModel& model, const std::string& report_text);

// Text over several lines with every line after the first indented by `indent` (a finding's
// message carries the comparison summary, one line per tensor); no trailing newline.
std::string indent_lines(const std::string& text, const std::string& indent);

// The layout a reproducer's case asks for (meta.attnv_fuzz.layout), BHTD when absent.
// InputError when it names no layout.
Layout reproducer_layout(const io::ExchangeCase& c);

}  // namespace attnv::cli
