#pragma once
// What did the certifying (report::Provenance): this attnv build (its commit, read when CMake
// configures) and this machine (its compiler and CPU); the core's ISA path is the caller's to
// name (report/ does not depend on core/).
#include <string>

#include "report/certificate.h"

namespace attnv::report {

// `isa`: the SIMD path the core's kernels take in this process (core::isa_features).
Provenance this_run(std::string isa);

}  // namespace attnv::report
