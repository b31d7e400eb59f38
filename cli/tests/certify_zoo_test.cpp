// Every mutant of the zoo, built as a plugin (plugin/plugins/mutant_plugin.cpp), run through
// `attnv certify` on the requirement it is meant to break, in the dtype its kill test uses:
// exit 1, and the certificate names that requirement. (The whole quick suite on every mutant,
// ~270 CPU-s, is docs/kill-table.md's "every requirement that fails it" column, in process;
// this test is about the plugin route catching each one.)
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "attnv_mutant_plugins.h"
#include "cli/tests/run_attnv.h"
#include "properties/conformance/conformance.h"
#include "kernels/mutants.h"

namespace attnv {
namespace {

namespace fs = std::filesystem;

const kernels::Mutant& zoo_entry(const std::string& name) {
  for (const kernels::Mutant& m : kernels::mutant_zoo())
    if (m.name == name) return m;
  throw std::runtime_error("no mutant " + name);
}

TEST(CertifyZoo, EveryMutantPluginExitsOneNamingItsRequirement) {
  const fs::path dir = testing::fresh_dir("certify_zoo");
  ASSERT_EQ(std::size(kAttnvMutantPlugins), kernels::mutant_zoo().size());
  for (const AttnvMutantPlugin& p : kAttnvMutantPlugins) {
    const kernels::Mutant& m = zoo_entry(p.name);
    if (m.in_process_only) continue;  // its feature cannot cross the plugin ABI yet (mutants.h)
    const std::string id = conformance::requirement(m.requirement).id;
    const std::string dtype(dtype_name(m.dtype));
    const auto r = testing::run_attnv(std::string("certify --kernel plugin:") + p.path + " --dtype " + dtype + " --only " + id + " --stop-at-findings", dir);
    EXPECT_EQ(r.status, 1) << p.name << "\n" << r.output;
    // The verdict line lists every failed requirement/dtype: "NOT CERTIFIED: 3 findings in R1/f32, R5/f32 (...".
    const std::size_t verdict = r.output.find("NOT CERTIFIED:");
    ASSERT_NE(verdict, std::string::npos) << p.name << "\n" << r.output;
    const std::string line = r.output.substr(verdict, r.output.find('\n', verdict) - verdict);
    EXPECT_TRUE(line.find(" " + id + "/" + dtype) != std::string::npos)
        << p.name << " should break " << id << " (" << m.requirement << ") in " << dtype << ": " << line;
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace attnv
