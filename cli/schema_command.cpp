// attnv schema manifest|certificate: the JSON Schemas of the exchange manifest and of the
// certificate, each a template of this source tree completed from the feature registry
// (io/manifest_schema.h, report/certificate_schema.h), so they name exactly the keys this attnv
// reads and writes.
#include <iostream>
#include <memory>
#include <span>
#include <string>

#include "cli/commands.h"
#include "cli/output_target.h"
#include "io/manifest_schema.h"
#include "io/npy.h"
#include "report/certificate_schema.h"

namespace attnv::cli {

void add_schema_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("schema", "Print the JSON Schema of the exchange manifest or of the certificate");
  auto which = std::make_shared<std::string>(), out = std::make_shared<std::string>("-");
  cmd->add_option("document", *which, "manifest: an exchange folder's manifest.json; certificate: certify's --json")
      ->required()
      ->check(CLI::IsMember({"manifest", "certificate"}));
  cmd->add_option("-o,--out", *out, "write it to this file (replaced whole, never partly written); - for standard output");
  cmd->callback([&exit_code, which, out] {
    const std::string text = *which == "manifest" ? io::manifest_schema() : report::certificate_schema();
    if (is_stdout(*out)) {
      std::cout << text;
    } else {
      require_regular_target(*out, "--out");
      io::write_text_atomic(*out, text);
    }
    exit_code = 0;
  });
}

}  // namespace attnv::cli
