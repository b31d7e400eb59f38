// attnv: verification and property testing for attention kernels.
#include <exception>
#include <iostream>
#include <new>

#include "cli/commands.h"
#include "core/isa.h"
#include "io/text.h"
#include "problem/error.h"

int main(int argc, char** argv) {
  CLI::App app{"attnv: verification and property testing for attention kernels.\n"
               "Exit status: 0 success, 1 findings, 2 usage or input error."};
  app.name("attnv");
  app.require_subcommand(1);
  app.set_version_flag("--version", "attnv " ATTNV_VERSION);
  int exit_code = 0;
  attnv::cli::add_certify_command(app, exit_code);
  attnv::cli::add_requirements_command(app, exit_code);
  attnv::cli::add_reference_command(app, exit_code);
  attnv::cli::add_selfcheck_command(app, exit_code);
  attnv::cli::add_calibrate_command(app, exit_code);
  attnv::cli::add_cases_command(app, exit_code);
  attnv::cli::add_fuzz_command(app, exit_code);
  attnv::cli::add_repro_command(app, exit_code);
  attnv::cli::add_schema_command(app, exit_code);
  // CLI11 reports an unknown first word as "A subcommand is required"; name it instead.
  if (argc > 1 && argv[1][0] != '-') {
    try {
      app.get_subcommand(argv[1]);
    } catch (const CLI::OptionNotFound&) {
      std::cerr << "attnv: unknown subcommand " << attnv::io::single_quoted(argv[1]) << "; the subcommands are:";
      for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
        std::cerr << ' ' << sub->get_name();
      std::cerr << " (see attnv --help)\n";
      return 2;
    }
  }
  try {
    // ATTNV_CORE_ISA (core/isa.h) is checked before a command runs: the built-in core and every
    // certificate's provenance follow it, and a bad value found at the end of a long run (the
    // provenance is written last) would waste the run.
    if (argc > 1 && argv[1][0] != '-') attnv::core::resolve_isa(attnv::core::Isa::best);
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints help or the usage error
    return code == 0 ? 0 : 2;
  } catch (const attnv::InputError& e) {
    // Messages quote ids, paths and plugin text: printable() keeps their control characters
    // from reaching the terminal.
    std::cerr << "attnv: error: " << attnv::io::printable(e.what()) << '\n';
    return 2;
  } catch (const std::bad_alloc&) {
    // The readers and `attnv reference` name the file or case that needs the memory; this is
    // the last resort for an allocation elsewhere.
    std::cerr << "attnv: error: out of memory: the input needs more memory than this machine can give\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "attnv: internal error: " << attnv::io::printable(e.what()) << '\n';
    return 3;
  }
  return exit_code;
}
