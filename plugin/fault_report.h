#pragma once
// Turns what the worker's signal handler recorded into one line about the plugin's mistake:
// "wrote into input q at element [0,0,1,2]", "wrote out of bounds past the end of out: byte
// offset 4096, extent 4096 bytes", "crashed with SIGSEGV at address 0x0 (write)".
#include <string>

#include "problem/kernel_fault.h"
#include "shared_region.h"

namespace attnv::plugin {

std::string signal_name(int sig);  // "SIGSEGV", ...
struct Fault {
  FaultKind kind;
  std::string text;
};
Fault describe_fault(const wire::Status& s, const CallLayout& l);

}  // namespace attnv::plugin
