#pragma once
// `--kernel KERNEL`: which kernel a command runs. builtin:core (the optimized core, in process),
// builtin:naive (the plain naive kernel, in process) or plugin:PATH (a shared library
// implementing plugin/include/attnv_plugin.h, run in a worker process).
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "properties/conformance/conformance.h"
#include "report/certificate.h"

namespace attnv::cli {

struct KernelSpecOptions {
  double timeout_seconds = 60;  // per call, plugins only
  // --kernel-option KEY=VALUE, in command line order: given to a plugin's set_option (ABI
  // version 2) at load. Built-in kernels take none.
  std::vector<std::string> kernel_options;
};

// Adds the repeatable --kernel-option KEY=VALUE to a command that takes --kernel.
void add_kernel_option_flag(CLI::App& cmd, std::vector<std::string>& into);

struct KernelChoice {
  conformance::KernelFactory make;  // one kernel per worker thread
  // What the certificate says about it: the normalised spec ("plugin:/abs/path.so"), name,
  // version, claims, precision model per claimed dtype, notes.
  report::KernelInfo info;
};

// Makes one kernel to describe it, so a plugin that cannot be loaded or declares nonsense is an
// InputError (naming the spec) before any case runs.
KernelChoice parse_kernel_spec(const std::string& spec, const KernelSpecOptions& opt = {});

// The environment a run of `spec` depends on, as a shell prefix for the commands that rerun it:
// "ATTNV_CORE_ISA=<path>" when spec is builtin:core and that variable forced its path (another
// path computes other bits; avx512_bf16 declares another precision model), else "".
std::string kernel_environment(const std::string& spec);

// The accepted forms, for help texts and errors.
inline constexpr const char* kKernelSpecForms = "builtin:core, builtin:naive or plugin:PATH";

}  // namespace attnv::cli
