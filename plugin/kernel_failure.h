#pragma once
// What PluginKernel throws when the plugin misbehaves during a call: it crashed, exited, hung,
// wrote outside its output buffers or refused the call. One line saying which, and where.
// The conformance runner turns it into a finding like any exception; InputError (a plugin that
// cannot be loaded or declares nonsense) stays a usage error.
#include <string>

#include "problem/kernel_fault.h"

namespace attnv::plugin {

class KernelFailure : public KernelFault {
 public:
  using KernelFault::KernelFault;
};

}  // namespace attnv::plugin
