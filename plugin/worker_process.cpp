#include "worker_process.h"

#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "problem/error.h"
#include "shared_region.h"

extern char** environ;

namespace attnv::plugin {

namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

WorkerProcess::WorkerProcess(const std::string& worker, const std::string& plugin, int region_fd,
                             const std::vector<std::string>& args) {
  if (access(worker.c_str(), X_OK) != 0)
    throw InputError("plugin worker '" + worker + "' cannot be run: " + std::strerror(errno) +
                     " (set ATTNV_WORKER to the attnv-worker program)");
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
    throw InputError(std::string("plugin: socketpair failed: ") + std::strerror(errno));
  sock_ = move_fd_high(sv[0]);
  const int child = move_fd_high(sv[1]);

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, child, wire::kSocketFd);
  posix_spawn_file_actions_adddup2(&fa, region_fd, wire::kRegionFd);
  // The worker starts with no signal blocked and default dispositions, whatever this thread has.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int s : {SIGPIPE, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM, SIGINT}) sigaddset(&defaults, s);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<char*> argv = {const_cast<char*>(worker.c_str()), const_cast<char*>(plugin.c_str())};
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const int rc = posix_spawn(&pid_, worker.c_str(), &fa, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  ::close(child);
  if (rc != 0) {
    ::close(sock_);
    sock_ = -1;
    pid_ = -1;
    throw InputError("plugin worker '" + worker + "' cannot be started: " + std::strerror(rc));
  }
}

WorkerProcess::~WorkerProcess() {
  if (sock_ >= 0) ::close(sock_);
  if (pid_ > 0) reap_after_eof();
}

void WorkerProcess::kill_and_reap() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int st = 0;
  while (waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
}

// The worker exits on EOF or after a fault; give it a moment, then make sure.
void WorkerProcess::reap_after_eof() {
  const auto deadline = Clock::now() + std::chrono::seconds(2);
  for (;;) {
    int st = 0;
    const pid_t r = waitpid(pid_, &st, WNOHANG);
    if (r == pid_) {
      if (WIFEXITED(st)) death_ = {Death::exited, WEXITSTATUS(st), ""};
      else if (WIFSIGNALED(st)) death_ = {Death::signaled, WTERMSIG(st), ""};
      pid_ = -1;
      return;
    }
    if (r < 0 && errno != EINTR) {
      pid_ = -1;
      return;
    }
    if (Clock::now() > deadline) {
      kill_and_reap();
      death_ = {Death::signaled, SIGKILL, "closed its socket but kept running"};
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

template <class T>
std::optional<T> WorkerProcess::receive(double timeout) {
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout));
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left < 0) {
      kill_and_reap();
      death_ = {Death::hung, 0, ""};
      return std::nullopt;
    }
    pollfd pfd{sock_, POLLIN, 0};
    const int pr = poll(&pfd, 1, static_cast<int>(std::min<long long>(left + 1, 1 << 30)));
    if (pr < 0 && errno == EINTR) continue;
    if (pr == 0) continue;  // the deadline check above decides
    T msg;
    const ssize_t n = recv(sock_, &msg, sizeof msg, MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n == static_cast<ssize_t>(sizeof msg) && msg.magic == wire::kMagic) return msg;
    if (n <= 0) {  // EOF or a reset: the worker is gone
      ::close(sock_);
      sock_ = -1;
      reap_after_eof();
      return std::nullopt;
    }
    kill_and_reap();
    death_ = {Death::broken, 0, "a malformed message of " + std::to_string(n) + " bytes"};
    return std::nullopt;
  }
}

std::optional<wire::Hello> WorkerProcess::hello(double timeout) { return receive<wire::Hello>(timeout); }

std::optional<wire::Reply> WorkerProcess::call(const wire::Request& r, double timeout) {
  if (sock_ < 0 || pid_ <= 0) {
    death_ = {Death::broken, 0, "the worker is not running"};
    return std::nullopt;
  }
  for (;;) {
    const ssize_t n = send(sock_, &r, sizeof r, MSG_NOSIGNAL);
    if (n == static_cast<ssize_t>(sizeof r)) break;
    if (n < 0 && errno == EINTR) continue;
    // EPIPE / ECONNRESET: it died before reading; find out how.
    ::close(sock_);
    sock_ = -1;
    reap_after_eof();
    return std::nullopt;
  }
  return receive<wire::Reply>(timeout);
}

}  // namespace attnv::plugin
