#include "cli/kernel_spec.h"

#include <cstdlib>
#include <filesystem>

#include "core/core_kernel.h"
#include "plugin/plugin_kernel.h"
#include "problem/error.h"
#include "kernels/naive_kernel.h"
#include "util/sha256.h"

namespace attnv::cli {
namespace {

report::KernelInfo describe(const std::string& spec, const Kernel& k, std::string version) {
  report::KernelInfo info;
  info.spec = spec;
  info.name = k.name();
  info.version = std::move(version);
  info.caps = k.capabilities();
  info.configuration = k.configuration();
  for (DType d : info.caps.dtypes) info.precision.emplace_back(d, k.precision(d));
  return info;
}

template <class K>
KernelChoice builtin(const std::string& spec) {
  return {[] { return std::unique_ptr<Kernel>(std::make_unique<K>()); }, describe(spec, K(), ATTNV_VERSION)};
}

}  // namespace

void add_kernel_option_flag(CLI::App& cmd, std::vector<std::string>& into) {
  cmd.add_option("--kernel-option", into,
                 "KEY=VALUE given to the plugin's set_option at load (ABI version 2; repeatable, in order): one build "
                 "certified in several configurations; recorded in the certificate")
      ->type_name("KEY=VALUE")
      // One value per --kernel-option, so that a positional after it (repro's DIR) stays one.
      ->allow_extra_args(false);
}

std::string kernel_environment(const std::string& spec) {
  const char* isa = std::getenv("ATTNV_CORE_ISA");
  if (spec != "builtin:core" || isa == nullptr || *isa == '\0') return "";
  return core::CoreKernel().configuration();  // the path the variable resolves to, as the core names it
}

namespace {
std::string file_kind(std::filesystem::file_type t) {
  switch (t) {
    case std::filesystem::file_type::directory: return "a directory";
    case std::filesystem::file_type::fifo: return "a FIFO";
    case std::filesystem::file_type::character: return "a character device";
    case std::filesystem::file_type::block: return "a block device";
    case std::filesystem::file_type::socket: return "a socket";
    default: return "not a regular file";
  }
}
}  // namespace

KernelChoice parse_kernel_spec(const std::string& spec, const KernelSpecOptions& opt) {
  std::vector<std::pair<std::string, std::string>> options;
  for (const std::string& o : opt.kernel_options) options.push_back(plugin::parse_kernel_option(o));
  if (!options.empty() && spec.rfind("plugin:", 0) != 0)
    throw InputError("--kernel-option " + opt.kernel_options.front() + ": only a plugin (plugin:PATH) takes options, not " + spec);
  if (spec == "builtin:core") return builtin<core::CoreKernel>(spec);
  if (spec == "builtin:naive") return builtin<kernels::NaiveKernel>(spec);
  if (spec.rfind("plugin:", 0) == 0) {
    const std::string path = spec.substr(7);
    if (path.empty()) throw InputError("--kernel plugin: needs a path to a shared library (plugin:PATH)");
    std::error_code ec;
    const std::filesystem::file_status st = std::filesystem::status(path, ec);
    if (!std::filesystem::exists(st))
      throw InputError("--kernel " + spec + ": no such file (build the plugin first; see plugin/README.md)");
    if (!std::filesystem::is_regular_file(st))
      throw InputError("--kernel " + spec + ": not a regular file (" + file_kind(st.type()) +
                       "): a plugin is a shared library file (see plugin/README.md)");
    const std::string abs = std::filesystem::absolute(path).lexically_normal().string();
    const plugin::PluginOptions popt{opt.timeout_seconds, "", options};
    const plugin::PluginKernel probe(abs, popt);
    KernelChoice choice{[abs, popt] { return std::unique_ptr<Kernel>(std::make_unique<plugin::PluginKernel>(abs, popt)); },
                        describe("plugin:" + abs, probe, probe.version())};
    choice.info.abi_version = probe.abi_version();
    choice.info.options = options;
    if (probe.has_precision_for())
      choice.info.notes.push_back("declares its precision model per problem (precision_for): the models listed are its "
                                  "per-dtype ones; each case is judged by the model of its own problem");
    // The file's hash names the exact build certified (a name and version string do not).
    choice.info.sha256 = util::sha256_file_hex(abs);
    // A plugin's decode is held to R21 (decode equals prefill) like any claimed capability.
    return choice;
  }
  throw InputError("unknown kernel '" + spec + "' (use " + kKernelSpecForms + ")");
}

}  // namespace attnv::cli
