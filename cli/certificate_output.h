#pragma once
// Where a certificate goes: the summary on stdout (colored on a terminal), and on request JSON,
// JUnit XML and the HTML page as files, or all of them in a report folder. Shared by
// `attnv certify` and `attnv cases check`, so both print the same certificate.
#include <CLI/CLI.hpp>
#include <string>

#include "report/certificate.h"

namespace attnv::cli {

struct OutputOptions {
  std::string report_dir;  // certificate.json, certificate.junit.xml, certificate.html, failures/
  std::string json, junit, html;  // "-" is standard output (the summary then goes to stderr)
  std::string color = "auto";     // auto, always, never (cli/output_target.h)
};

void add_output_options(CLI::App& cmd, OutputOptions& out);

// Fails early (InputError) when an output cannot be written: a missing parent folder, a report
// folder that is a file, a target that is not a regular file, two outputs on standard output. Called before the run, so a long run never ends in an unwritable path.
void prepare_outputs(const OutputOptions& out);

// Writes every requested file (each atomically), prints the summary; returns the exit status:
// 0 certified, 1 findings.
int emit_certificate(report::Certificate& cert, const OutputOptions& out);

}  // namespace attnv::cli
