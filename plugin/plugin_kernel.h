#pragma once
// PluginKernel: a third-party kernel (a shared library implementing include/attnv_plugin.h)
// behind attnv::Kernel, run in its own worker process so that whatever it does wrong becomes a
// KernelFailure with a one-line diagnosis instead of a crash or a hang of attnv:
//   crashed (signal, and where: "wrote into input q at element [0,0,1,2]", "wrote out of bounds
//   past the end of out ..."), exited, hung (no answer within the timeout: SIGKILLed), wrote
//   outside its output buffers (canary), refused (nonzero return and its last_error text).
// After a failure the worker is restarted on the next call, so a certification run goes on.
//
// Each call copies the full extent of every view (from its data pointer to the last element the
// strides reach) into shared memory (worker/protocol.h), calls, and copies the outputs back.
// Not thread-safe: one call at a time per PluginKernel (make one per thread).
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kernel_failure.h"
#include "attnv_plugin.h"
#include "problem/kernel.h"

namespace attnv::plugin {

struct PluginOptions {
  double timeout_seconds = 60;  // per call (and for loading)
  // attnv-worker to run. Empty: next to the running program, else ../libexec/attnv/ from its
  // folder (an installed attnv), else $ATTNV_WORKER, else (programs of the build tree only) the
  // one this build made.
  std::string worker_path;
  // --kernel-option settings (key, value), given to the plugin's set_option (ABI version 2) in
  // this order when it loads, before its claims are read. A plugin without set_option given
  // any is an InputError.
  std::vector<std::pair<std::string, std::string>> kernel_options;
};

// "key=value" -> {key, value} (split at the first '='); InputError naming the text when the key
// is empty or there is no '='.
std::pair<std::string, std::string> parse_kernel_option(const std::string& text);

// The worker program PluginOptions{} would use.
std::string default_worker_path();

class WorkerProcess;
class SharedRegion;

class PluginKernel : public Kernel {
 public:
  // Starts the worker and reads the plugin's declaration. InputError when the worker or the
  // plugin cannot be loaded or the declaration is invalid; KernelFailure when loading crashes.
  explicit PluginKernel(std::string path, PluginOptions opt = {});
  ~PluginKernel() override;

  std::string name() const override { return name_; }
  // The plugin's own attnv_kernel::configuration (the core plugin's "ATTNV_CORE_ISA=avx512"), then
  // its options, "--kernel-option KEY=VALUE" each, in the order they were set; "" for neither.
  std::string configuration() const override;
  std::string version() const { return version_; }
  Capabilities capabilities() const override { return caps_; }
  bool claims_decode() const { return decode_; }
  unsigned abi_version() const { return abi_version_; }  // the plugin's: 1 or 2
  bool has_precision_for() const { return has_precision_for_; }  // its model may depend on the problem
  PrecisionModel precision(DType storage) const override;
  // Asks the plugin's precision_for() when it has one (a round trip to the worker per call);
  // else precision(p.dtype).
  PrecisionModel precision_for(const Problem& p) const override;
  // The plugin's supports() through the worker (a version 1 plugin, or none: every problem).
  // The worker also asks before every call and answers a declined one without making it:
  // forward, backward and decode then throw KernelDeclined.
  Support supports(const Problem& p, KernelOp op) override;
  void forward(const Problem& p, const KernelViews& views) override;
  void backward(const Problem& p, const KernelViews& views) override;
  // Through the worker like forward: the caches are copied in, the plugin's decode appends to
  // them in the shared region (they are its only writable inputs), and they are copied back.
  void decode(const Problem& p, const DecodeViews& views) override;

  // Workers started so far (1 + restarts after failures).
  int worker_starts() const { return starts_; }

 private:
  void start_worker();
  void call(int op, const Problem& p, const attnv_views& v);  // op: a wire::Op
  // The problem as the ABI passes it; HarnessError for one using a feature whose fields the
  // plugin may not have (an unclaimed varlen).
  attnv_problem abi_problem(const Problem& p) const;
  [[noreturn]] void fail(const std::string& what, const std::string& why, FaultKind kind = FaultKind::crashed);

  std::string path_;
  PluginOptions opt_;
  std::unique_ptr<SharedRegion> region_;
  std::unique_ptr<WorkerProcess> worker_;
  std::string name_, version_;
  Capabilities caps_;
  bool decode_ = false;
  unsigned abi_version_ = 1;
  bool has_supports_ = false;
  bool has_precision_for_ = false;
  std::string own_configuration_;  // attnv_kernel::configuration, as the worker read it
  PrecisionModel precision_[4];
  int starts_ = 0;
};

}  // namespace attnv::plugin
