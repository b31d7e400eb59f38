// attnv requirements: the conformance requirements a kernel is held to, one line each.
#include <iomanip>
#include <iostream>

#include "cli/commands.h"
#include "properties/conformance/conformance.h"

namespace attnv::cli {

void add_requirements_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("requirements", "List the conformance requirements R1..R21");
  cmd->footer("Each line: id, property name, what must hold, the capability it needs, and the cases per\n"
              "tier (quick/standard/full). properties/conformance/conformance.h documents each one.");
  cmd->callback([&exit_code] {
    for (const conformance::Requirement& r : conformance::requirements())
      std::cout << std::left << std::setw(4) << r.id << ' ' << std::setw(26) << r.property << ' ' << r.statement
                << "\n     needs: " << r.needs << "; cases " << r.cases[0] << '/' << r.cases[1] << '/' << r.cases[2] << '\n';
    exit_code = 0;
  });
}

}  // namespace attnv::cli
