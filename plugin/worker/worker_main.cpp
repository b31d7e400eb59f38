// attnv-worker: runs one plugin kernel in its own process for PluginKernel (protocol.h). Whatever
// the plugin does (crash, hang, scribble) happens here; the parent only sees the outcome.
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <ucontext.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

#include "abi_convert.h"
#include "loader.h"
#include "problem/error.h"
#include "protocol.h"

namespace {

using namespace attnv;
using namespace attnv::plugin;
using wire::Hello;
using wire::Reply;

wire::Status* volatile g_status = nullptr;

// Records what happened for the parent to classify, then leaves at once: nothing in this process
// can be trusted after a fault in the plugin.
void on_fatal_signal(int sig, siginfo_t* si, void* ctx) {
  wire::Status* s = g_status;
  if (s) {
    s->signal = sig;
    s->si_code = si ? si->si_code : 0;
    s->fault_addr = si ? reinterpret_cast<std::uint64_t>(si->si_addr) : 0;
    s->access = 0;
#if defined(__x86_64__)
    if (ctx && (sig == SIGSEGV || sig == SIGBUS)) {
      // Bit 1 of the page-fault error code: the access was a write.
      const auto* uc = static_cast<const ucontext_t*>(ctx);
      s->access = (uc->uc_mcontext.gregs[REG_ERR] & 2) ? 2 : 1;
    }
#else
    (void)ctx;
#endif
    __atomic_store_n(&s->magic, wire::kMagic, __ATOMIC_RELEASE);
  }
  _exit(128 + sig);
}

// Installed in main, so after the sanitizer runtime's own handlers (which it sets up before
// main): ours replace them (ASan's allow_user_segv_handler is on by default).
void install_handlers() {
  static char alt_stack[64 * 1024];
  stack_t ss{};
  ss.ss_sp = alt_stack;
  ss.ss_size = sizeof alt_stack;
  sigaltstack(&ss, nullptr);
  struct sigaction sa{};
  sa.sa_sigaction = on_fatal_signal;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) sigaction(sig, &sa, nullptr);
}

void copy_text(char* dst, std::size_t n, const std::string& s) { std::snprintf(dst, n, "%s", s.c_str()); }

template <class T>
bool send_msg(const T& m) {
  for (;;) {
    const ssize_t r = send(wire::kSocketFd, &m, sizeof m, MSG_NOSIGNAL);
    if (r == static_cast<ssize_t>(sizeof m)) return true;
    if (r < 0 && errno == EINTR) continue;
    return false;
  }
}

Hello describe(const attnv_kernel* k) {
  Hello h;
  h.abi_version = k->abi_version;
  h.has_supports = k->supports != nullptr;
  h.has_precision_for = k->precision_for != nullptr;
  for (int d = 0; d < 4; ++d) h.withdrawn[d] = k->withdrawn[d];
  // A configuration too long for the Hello is sent whole-or-not: cut, it would name other code.
  if (k->configuration && std::strlen(k->configuration) >= sizeof h.configuration)
    throw attnv::InputError("attnv_kernel::configuration is " + std::to_string(std::strlen(k->configuration)) +
                            " bytes, longer than " + std::to_string(sizeof h.configuration - 1));
  copy_text(h.configuration, sizeof h.configuration, k->configuration ? k->configuration : "");
  copy_text(h.name, sizeof h.name, k->name);
  copy_text(h.version, sizeof h.version, k->version);
  h.dtypes = k->dtypes;
  h.caps = k->caps;
  h.has_precision = k->precision != nullptr;
  for (int d = ATTNV_F64; d <= ATTNV_BF16; ++d)
    if (k->precision && (k->dtypes & ATTNV_DTYPE_BIT(d))) {
      h.precision[d] = precision_request();  // struct_size: how much the plugin may write
      h.precision_rc[d] = k->precision(d, &h.precision[d]);
    }
  return h;
}

class Region {
 public:
  // Maps the region at its current size with everything PROT_NONE, then opens each tensor.
  unsigned char* prepare(const wire::Request& r) {
    const auto bytes = static_cast<std::size_t>(r.region_bytes);
    if (bytes != size_) {
      if (base_) munmap(base_, size_);
      base_ = nullptr;
      size_ = 0;
      void* p = mmap(nullptr, bytes, PROT_NONE, MAP_SHARED, wire::kRegionFd, 0);
      if (p == MAP_FAILED) return nullptr;
      base_ = static_cast<unsigned char*>(p);
      size_ = bytes;
    } else if (mprotect(base_, size_, PROT_NONE) != 0) {
      return nullptr;
    }
    for (const wire::Tensor& t : r.t) {
      if (t.offset < 0 || t.mapped == 0) continue;
      if (static_cast<std::uint64_t>(t.offset + t.mapped) > bytes) return nullptr;
      if (mprotect(base_ + t.offset, static_cast<std::size_t>(t.mapped), t.writable ? PROT_READ | PROT_WRITE : PROT_READ) != 0)
        return nullptr;
    }
    return base_;
  }

 private:
  unsigned char* base_ = nullptr;
  std::size_t size_ = 0;
};

attnv_tensor tensor(const wire::Tensor& t, unsigned char* base) {
  attnv_tensor a{};
  a.data = t.offset < 0 ? nullptr : base + t.offset;
  a.dtype = t.dtype;
  a.rank = t.rank;
  for (int i = 0; i < 4; ++i) {
    a.shape[i] = t.shape[i];
    a.stride[i] = t.stride[i];
  }
  return a;
}

// Asks the plugin's supports() (none: every problem is supported). Fills rep and returns false
// when the call must not be made: declined (with the reason), or an answer that is neither 1
// nor 0 (a refusal: the plugin broke its contract, a finding).
bool supported(const attnv_kernel* k, attnv_problem p, wire::Op op, Reply& rep) {
  if (!k->supports) return true;
  p.struct_size = sizeof(attnv_problem);
  char why[1024] = {};
  const int rc = k->supports(&p, static_cast<std::int32_t>(op), why, sizeof why);
  why[sizeof why - 1] = '\0';  // whatever the plugin wrote, the text ends inside the buffer
  if (rc == 1) return true;
  if (rc == 0) {
    rep.kind = wire::ReplyKind::declined;
    copy_text(rep.text, sizeof rep.text, why[0] ? why : "(supports() gave no reason)");
  } else {
    rep.kind = wire::ReplyKind::refused;
    rep.code = rc;
    copy_text(rep.text, sizeof rep.text, "supports() returned " + std::to_string(rc) + " (must be 1: supported, or 0: declined)");
  }
  return false;
}

Reply run(const attnv_kernel* k, const wire::Request& r, Region& region) {
  Reply rep;
  if (r.op == wire::Op::supports) {
    (void)supported(k, r.problem, r.ask, rep);
    return rep;
  }
  if (r.op == wire::Op::precision) {
    if (!k->precision_for) {
      rep.kind = wire::ReplyKind::protocol_error;
      copy_text(rep.text, sizeof rep.text, "the plugin has no precision_for");
      return rep;
    }
    attnv_problem p = r.problem;
    p.struct_size = sizeof(attnv_problem);
    rep.precision = precision_request();
    if (const int rc = k->precision_for(&p, &rep.precision); rc != 0) {
      rep.kind = wire::ReplyKind::refused;
      rep.code = rc;
      const char* why = k->last_error ? k->last_error() : nullptr;
      copy_text(rep.text, sizeof rep.text, why ? why : "");
    }
    return rep;
  }
  // attnv never calls a problem the plugin declines for this operation (the ABI's promise).
  if (!supported(k, r.problem, r.op, rep)) return rep;
  unsigned char* base = region.prepare(r);
  if (!base) {
    rep.kind = wire::ReplyKind::protocol_error;
    copy_text(rep.text, sizeof rep.text, std::string("worker cannot map the shared region: ") + std::strerror(errno));
    return rep;
  }
  g_status->region_base = reinterpret_cast<std::uint64_t>(base);
  attnv_views v{};
  v.q = tensor(r.t[wire::q], base);
  v.k = tensor(r.t[wire::k], base);
  v.v = tensor(r.t[wire::v], base);
  v.mask = tensor(r.t[wire::mask], base);
  v.bias = tensor(r.t[wire::bias], base);
  auto int64s = [&](int slot) {
    return r.t[slot].offset < 0 ? nullptr : reinterpret_cast<const std::int64_t*>(base + r.t[slot].offset);
  };
  v.dout = tensor(r.t[wire::dout], base);
  v.out = tensor(r.t[wire::out], base);
  v.lse = tensor(r.t[wire::lse], base);
  v.dq = tensor(r.t[wire::dq], base);
  v.dk = tensor(r.t[wire::dk], base);
  v.dv = tensor(r.t[wire::dv], base);
  v.dsinks = tensor(r.t[wire::dsinks], base);
  for (const HeadInput& h : kHeadInputs) v.*h.abi_view = tensor(r.t[wire::slot_named(h.name)], base);
  for (const IndexInput& x : kIndexInputs) v.*x.abi_view = int64s(wire::slot_named(x.name));
  v.struct_size = sizeof(attnv_views);
  attnv_problem problem = r.problem;
  problem.struct_size = sizeof(attnv_problem);
  int rc = 0;
  if (r.op == wire::Op::decode) {
    if (!k->decode) {
      rep.kind = wire::ReplyKind::protocol_error;
      copy_text(rep.text, sizeof rep.text, "the plugin has no decode");
      return rep;
    }
    // attnv gives a paged call only to a plugin that claims it (PluginKernel::decode); checked
    // again here, where the plugin's own declaration is at hand.
    if (problem.page_size != 0 && !(k->caps & ATTNV_CAP_PAGED_KV)) {
      rep.kind = wire::ReplyKind::protocol_error;
      copy_text(rep.text, sizeof rep.text, "a paged decode call for a plugin that does not claim ATTNV_CAP_PAGED_KV");
      return rep;
    }
    const attnv_decode_views d = decode_from_slots(v);
    rc = k->decode(&problem, &d);
  } else {
    int (*fn)(const attnv_problem*, const attnv_views*) = r.op == wire::Op::backward ? k->backward : k->forward;
    if (!fn) {
      rep.kind = wire::ReplyKind::protocol_error;
      copy_text(rep.text, sizeof rep.text, "the plugin has no backward");
      return rep;
    }
    rc = fn(&problem, &v);
  }
  if (rc != 0) {
    rep.kind = wire::ReplyKind::refused;
    rep.code = rc;
    const char* why = k->last_error ? k->last_error() : nullptr;
    copy_text(rep.text, sizeof rep.text, why ? why : "");
  }
  return rep;
}

}  // namespace

int main(int argc, char** argv) {
  install_handlers();
  if (argc < 2) {
    std::fprintf(stderr, "usage: attnv-worker PLUGIN [KEY=VALUE ...] (started by attnv, with fds %d and %d set up)\n",
                 wire::kSocketFd, wire::kRegionFd);
    return 2;
  }
  void* status = mmap(nullptr, static_cast<std::size_t>(sysconf(_SC_PAGESIZE)), PROT_READ | PROT_WRITE, MAP_SHARED,
                      wire::kRegionFd, 0);
  if (status == MAP_FAILED) {
    std::perror("attnv-worker: mmap of the shared region");
    return 2;
  }
  g_status = static_cast<wire::Status*>(status);

  attnv_kernel kernel{};
  const attnv_kernel* k = nullptr;
  Hello hello;
  try {
    KernelOptions options;
    for (int i = 2; i < argc; ++i) {
      const std::string kv = argv[i];
      const std::size_t eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) throw attnv::InputError("kernel option '" + kv + "' is not KEY=VALUE");
      options.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
    }
    kernel = load_plugin(argv[1], options);
    k = &kernel;
    hello = describe(k);
  } catch (const std::exception& e) {
    k = nullptr;  // not loaded: the worker ends once the parent has the reason
    hello = Hello{};
    hello.kind = wire::ReplyKind::load_error;
    copy_text(hello.text, sizeof hello.text, e.what());
  }
  if (!send_msg(hello) || !k) _exit(0);

  Region region;
  for (;;) {
    wire::Request req;
    const ssize_t n = recv(wire::kSocketFd, &req, sizeof req, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) _exit(0);  // the parent closed the socket (or is gone): nothing left to do
    Reply rep;
    if (n != static_cast<ssize_t>(sizeof req) || req.magic != wire::kMagic) {
      rep.kind = wire::ReplyKind::protocol_error;
      copy_text(rep.text, sizeof rep.text, "malformed request");
    } else {
      rep = run(k, req, region);
    }
    if (!send_msg(rep)) _exit(0);
  }
}
