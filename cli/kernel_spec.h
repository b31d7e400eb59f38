#pragma once
// `--kernel SPEC`: which kernel a command runs. builtin:core (the optimized core, in process),
// builtin:naive (the plain naive kernel, in process) or plugin:PATH (a shared library
// implementing plugin/include/attnv_plugin.h, run in a worker process).
#include <string>

#include "properties/conformance/conformance.h"

namespace attnv::cli {

struct KernelSpecOptions {
  double timeout_seconds = 60;  // per call, plugins only
};

struct KernelChoice {
  std::string spec;                   // as given, normalised ("plugin:/abs/path.so")
  conformance::KernelFactory make;    // one kernel per worker thread
  std::string version;                // the kernel's declared version ("" when it has none)
  std::vector<std::string> notes;     // what the certificate should say about the claims
};

// InputError naming the spec when it is malformed or the plugin cannot be loaded.
KernelChoice parse_kernel_spec(const std::string& spec, const KernelSpecOptions& opt = {});

// The accepted forms, for help texts and errors.
inline constexpr const char* kKernelSpecForms = "builtin:core, builtin:naive or plugin:PATH";

}  // namespace attnv::cli
