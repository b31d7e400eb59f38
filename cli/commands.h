#pragma once
// Each subcommand of `attnv` registers itself on the app; its callback returns the exit status
// through `exit_code` (0 ok, 1 findings, 2 usage or input error).
#include <CLI/CLI.hpp>

namespace attnv::cli {

void add_reference_command(CLI::App& app, int& exit_code);
void add_selfcheck_command(CLI::App& app, int& exit_code);
void add_calibrate_command(CLI::App& app, int& exit_code);
void add_certify_command(CLI::App& app, int& exit_code);
void add_requirements_command(CLI::App& app, int& exit_code);
void add_cases_command(CLI::App& app, int& exit_code);
void add_fuzz_command(CLI::App& app, int& exit_code);
void add_repro_command(CLI::App& app, int& exit_code);
void add_schema_command(CLI::App& app, int& exit_code);

}  // namespace attnv::cli
