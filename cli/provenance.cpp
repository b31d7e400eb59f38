#include "cli/provenance.h"

#include <fstream>
#include <string>

#include "core/isa.h"

#ifndef ATTNV_GIT_COMMIT
#define ATTNV_GIT_COMMIT "unknown"
#endif

namespace attnv::cli {
namespace {

std::string compiler() {
#if defined(__clang__)
  return __VERSION__;  // "Debian Clang 14.0.6": it names itself
#elif defined(__GNUC__)
  return "GCC " __VERSION__;  // "12.2.0"
#else
  return "unknown compiler";
#endif
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) break;
    std::string v = line.substr(colon + 1);
    const auto first = v.find_first_not_of(" \t");
    return first == std::string::npos ? "unknown" : v.substr(first);
  }
  return "unknown";
}

}  // namespace

report::Provenance this_run() {
  report::Provenance p;
  p.attnv_commit = ATTNV_GIT_COMMIT;
  p.compiler = compiler();
  p.cpu = cpu_model();
  // The path the core's f32 micro-kernels take in this process (core/isa.h: ATTNV_CORE_ISA, else
  // the widest the CPU runs). An ATTNV_CORE_ISA this CPU cannot run is an InputError here, before
  // anything is certified. (The fast reference takes AVX2+FMA whenever the CPU has them.)
  p.isa = core::isa_features(core::resolve_isa(core::Isa::best));
  return p;
}

}  // namespace attnv::cli
