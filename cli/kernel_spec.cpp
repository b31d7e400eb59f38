#include "cli/kernel_spec.h"

#include <filesystem>

#include "core/core_kernel.h"
#include "plugin/plugin_kernel.h"
#include "problem/error.h"
#include "properties/kernels/naive_kernel.h"

namespace attnv::cli {

KernelChoice parse_kernel_spec(const std::string& spec, const KernelSpecOptions& opt) {
  if (spec == "builtin:core")
    return {spec, [] { return std::unique_ptr<Kernel>(std::make_unique<core::CoreKernel>()); }, ATTNV_VERSION, {}};
  if (spec == "builtin:naive")
    return {spec, [] { return std::unique_ptr<Kernel>(std::make_unique<props::NaiveKernel>()); }, ATTNV_VERSION, {}};
  if (spec.rfind("plugin:", 0) == 0) {
    const std::string path = spec.substr(7);
    if (path.empty()) throw InputError("--kernel plugin: needs a path to a shared library (plugin:PATH)");
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
      throw InputError("--kernel " + spec + ": no such file (build the plugin first; see plugin/README.md)");
    const std::string abs = std::filesystem::absolute(path).lexically_normal().string();
    const plugin::PluginOptions popt{opt.timeout_seconds, ""};
    // Load it once here: a plugin that cannot be loaded or declares nonsense is a usage error
    // before any case runs, and its version and decode claim go into the certificate.
    const plugin::PluginKernel probe(abs, popt);
    KernelChoice choice{"plugin:" + abs,
                        [abs, popt] { return std::unique_ptr<Kernel>(std::make_unique<plugin::PluginKernel>(abs, popt)); },
                        probe.version(), {}};
    if (probe.claims_decode())
      choice.notes.push_back("claims decode with a KV cache: not yet exercised by any requirement");
    return choice;
  }
  throw InputError("unknown kernel '" + spec + "' (use " + kKernelSpecForms + ")");
}

}  // namespace attnv::cli
