#pragma once
// One running attnv-worker: spawned (posix_spawn, never a bare fork), spoken to over a
// SOCK_SEQPACKET socketpair with a deadline on every answer, killed and reaped on the way out.
#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "worker/protocol.h"

namespace attnv::plugin {

// Why no answer came.
struct Death {
  enum Kind { hung, exited, signaled, broken } kind = broken;
  int code = 0;        // exit status or signal number
  std::string detail;  // broken: what was wrong with the message
};

class WorkerProcess {
 public:
  // Starts `worker PLUGIN ARGS...` with the socket on fd 3 and the region on fd 4. InputError
  // when the worker cannot be started.
  WorkerProcess(const std::string& worker, const std::string& plugin, int region_fd,
                const std::vector<std::string>& args = {});
  ~WorkerProcess();  // closes the socket (the worker exits on EOF); SIGKILL if it lingers
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  // Waits for the Hello (deadline `timeout` seconds). nullopt: the worker died (see death()).
  std::optional<wire::Hello> hello(double timeout);
  // Sends the request and waits for the reply. nullopt: the worker died or hung (then it has
  // been SIGKILLed and reaped); death() says which.
  std::optional<wire::Reply> call(const wire::Request& r, double timeout);
  const Death& death() const { return death_; }
  pid_t pid() const { return pid_; }

 private:
  // Receives exactly one message of sizeof(T) within the deadline.
  template <class T>
  std::optional<T> receive(double timeout);
  void reap_after_eof();
  void kill_and_reap();
  int sock_ = -1;
  pid_t pid_ = -1;
  Death death_;
};

}  // namespace attnv::plugin
