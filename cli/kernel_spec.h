#pragma once
// `--kernel KERNEL`: which kernel a command runs. builtin:core (the optimized core, in process),
// builtin:naive (the plain naive kernel, in process) or plugin:PATH (a shared library
// implementing plugin/include/attnv_plugin.h, run in a worker process).
#include <string>

#include "properties/conformance/conformance.h"
#include "report/certificate.h"

namespace attnv::cli {

struct KernelSpecOptions {
  double timeout_seconds = 60;  // per call, plugins only
};

struct KernelChoice {
  conformance::KernelFactory make;  // one kernel per worker thread
  // What the certificate says about it: the normalised spec ("plugin:/abs/path.so"), name,
  // version, claims, precision model per claimed dtype, notes.
  report::KernelInfo info;
};

// Makes one kernel to describe it, so a plugin that cannot be loaded or declares nonsense is an
// InputError (naming the spec) before any case runs.
KernelChoice parse_kernel_spec(const std::string& spec, const KernelSpecOptions& opt = {});

// The accepted forms, for help texts and errors.
inline constexpr const char* kKernelSpecForms = "builtin:core, builtin:naive or plugin:PATH";

}  // namespace attnv::cli
