#include "report/provenance.h"

#include <fstream>
#include <string>


#ifndef ATTNV_GIT_COMMIT
#define ATTNV_GIT_COMMIT "unknown"
#endif

namespace attnv::report {
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

Provenance this_run(std::string isa) {
  Provenance p;
  p.attnv_commit = ATTNV_GIT_COMMIT;
  p.compiler = compiler();
  p.cpu = cpu_model();
  p.isa = std::move(isa);
  return p;
}

}  // namespace attnv::report
