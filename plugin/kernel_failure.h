#pragma once
// What PluginKernel throws when the plugin misbehaves during a call: it crashed, exited, hung,
// wrote outside its output buffers or refused the call. One line saying which, and where.
// The conformance runner turns it into a finding like any exception; InputError (a plugin that
// cannot be loaded or declares nonsense) stays a usage error.
#include <stdexcept>
#include <string>

namespace attnv::plugin {

class KernelFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace attnv::plugin
