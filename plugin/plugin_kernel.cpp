#include "plugin_kernel.h"

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "abi_convert.h"
#include "declaration.h"
#include "fault_report.h"
#include "problem/error.h"
#include "problem/validate.h"
#include "shared_region.h"
#include "worker_process.h"

namespace attnv::plugin {

std::string default_worker_path() {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  fs::path installed;
  if (!ec) {
    // Beside this program (the build tree's layout for tools built into one folder), then where
    // `cmake --install` puts it relative to bin/ (ATTNV_WORKER_FROM_BIN: ../libexec/attnv/attnv-worker).
    for (const fs::path& next : {self.parent_path() / "attnv-worker", self.parent_path() / ATTNV_WORKER_FROM_BIN}) {
      if (access(next.c_str(), X_OK) == 0) return next.lexically_normal().string();
    }
    installed = (self.parent_path() / ATTNV_WORKER_FROM_BIN).lexically_normal();
  }
  if (const char* env = std::getenv("ATTNV_WORKER"); env && *env) return env;
  // The build tree's worker serves only programs of the build tree: an installed attnv must
  // find its own (and says where it looked), not silently run a build folder's copy.
  const std::string build_dir = ATTNV_BUILD_DIR;
  if (installed.empty() || self.string().rfind(build_dir + "/", 0) == 0) return ATTNV_WORKER_BUILD_PATH;
  return installed.string();
}

std::pair<std::string, std::string> parse_kernel_option(const std::string& text) {
  const std::size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError("--kernel-option '" + text + "': expected KEY=VALUE (a non-empty key, then '=')");
  return {text.substr(0, eq), text.substr(eq + 1)};
}

PluginKernel::PluginKernel(std::string path, PluginOptions opt) : path_(std::move(path)), opt_(std::move(opt)) {
  if (opt_.worker_path.empty()) opt_.worker_path = default_worker_path();
  if (!(opt_.timeout_seconds > 0)) throw InputError("plugin " + path_ + ": timeout must be > 0 seconds");
  if (access(path_.c_str(), R_OK) != 0) throw InputError("plugin " + path_ + ": no such readable file");
  region_ = std::make_unique<SharedRegion>();
  start_worker();
}

PluginKernel::~PluginKernel() = default;

void PluginKernel::start_worker() {
  std::vector<std::string> args;
  for (const auto& [key, value] : opt_.kernel_options) args.push_back(key + "=" + value);
  // Cleared before the worker starts, never after: a plugin whose constructor aborts can write
  // its fault report before the parent gets here (seen under load: the report was wiped and an
  // abort read as "exited with status 134").
  region_->status() = {};
  worker_ = std::make_unique<WorkerProcess>(opt_.worker_path, path_, region_->fd(), args);
  ++starts_;
  const std::optional<wire::Hello> h = worker_->hello(opt_.timeout_seconds);
  if (!h) {
    const Death d = worker_->death();
    worker_.reset();
    const wire::Status& s = region_->status();
    std::string why = s.magic == wire::kMagic ? describe_fault(s, CallLayout{}).text
                      : d.kind == Death::hung ? "hung (no answer within " + std::to_string(opt_.timeout_seconds) + " s; worker killed)"
                      : d.kind == Death::exited ? "exited with status " + std::to_string(d.code)
                      : d.kind == Death::signaled ? "killed by " + signal_name(d.code)
                                                  : d.detail;
    // The first load failing is a plugin that cannot be loaded (its initialization crashed or hung
    // before it declared anything): a usage error, nothing certified, and never attnv's own
    // error. A later restart failing (after a fault in a call) is the kernel's failure in that run.
    if (starts_ == 1)
      throw InputError("plugin " + path_ + " cannot be loaded: it " + why +
                       " while loading (its initialization, before attnv_kernel_entry answered), in the worker process");
    throw KernelFailure(d.kind == Death::hung ? FaultKind::hung : FaultKind::crashed, "plugin " + path_ + ": while loading: " + why);
  }
  if (h->kind != wire::ReplyKind::ok) {
    worker_.reset();
    throw InputError(received_text(h->text));
  }
  if (starts_ > 1) return;  // a restart: the declaration was read the first time
  Declaration d = read_declaration(*h, "plugin " + path_);
  name_ = std::move(d.name);
  version_ = std::move(d.version);
  caps_ = d.caps;
  decode_ = d.decode;
  abi_version_ = d.abi_version;
  has_supports_ = d.has_supports;
  has_precision_for_ = d.has_precision_for;
  own_configuration_ = std::move(d.configuration);
  for (std::size_t i = 0; i < d.precision.size(); ++i) precision_[i] = d.precision[i];
}

std::string PluginKernel::configuration() const {
  std::string s = own_configuration_;  // the plugin's own word (the core plugin's ATTNV_CORE_ISA path), then attnv's flags
  for (const auto& [key, value] : opt_.kernel_options) s += (s.empty() ? "" : " ") + std::string("--kernel-option ") + key + "=" + value;
  return s;
}

PrecisionModel PluginKernel::precision(DType storage) const { return precision_[dtype_to_abi(storage)]; }

PrecisionModel PluginKernel::precision_for(const Problem& p) const {
  if (!has_precision_for_) return precision(p.dtype);
  // precision_for is const for its callers; asking the worker is not (it may restart it).
  auto& self = const_cast<PluginKernel&>(*this);
  if (!self.worker_) self.start_worker();
  wire::Request r;
  r.op = wire::Op::precision;
  r.region_bytes = region_->size();
  r.problem = abi_problem(p);
  region_->status() = {};
  const std::optional<wire::Reply> rep = self.worker_->call(r, opt_.timeout_seconds);
  if (!rep) {
    const Death d = self.worker_->death();
    self.worker_.reset();
    if (const wire::Status& s = region_->status(); s.magic == wire::kMagic) {
      const Fault f = describe_fault(s, CallLayout{});
      self.fail("precision_for", f.text, f.kind);
    }
    self.fail("precision_for", d.kind == Death::hung ? "hung: no answer within the timeout (worker killed)" : "crashed (worker died)",
              d.kind == Death::hung ? FaultKind::hung : FaultKind::crashed);
  }
  if (rep->kind == wire::ReplyKind::refused) self.fail("precision_for", received_text(rep->text), FaultKind::refused);
  if (rep->kind != wire::ReplyKind::ok) {
    self.worker_.reset();
    self.fail("precision_for", "worker error: " + received_text(rep->text));
  }
  // A malformed model is the plugin's error, like a refusal.
  try {
    return precision_from_abi(rep->precision, p.dtype, "plugin " + name_ + ": precision_for(" + describe(p) + ")");
  } catch (const InputError& e) {
    self.fail("precision_for", e.what(), FaultKind::refused);
  }
}

Support PluginKernel::supports(const Problem& p, KernelOp op) {
  if (!has_supports_) return Support::yes();
  if (!worker_) start_worker();
  wire::Request r;
  r.op = wire::Op::supports;
  r.ask = op == KernelOp::backward ? wire::Op::backward : op == KernelOp::decode ? wire::Op::decode : wire::Op::forward;
  r.region_bytes = region_->size();
  r.problem = abi_problem(p);
  region_->status() = {};
  const std::optional<wire::Reply> rep = worker_->call(r, opt_.timeout_seconds);
  if (!rep) {
    // supports() itself crashed or hung: a failure of the plugin like any call's.
    const Death d = worker_->death();
    worker_.reset();
    if (const wire::Status& s = region_->status(); s.magic == wire::kMagic) {
      const Fault f = describe_fault(s, CallLayout{});
      fail("supports", f.text, f.kind);
    }
    fail("supports", d.kind == Death::hung ? "hung: no answer within the timeout (worker killed)" : "crashed (worker died)",
         d.kind == Death::hung ? FaultKind::hung : FaultKind::crashed);
  }
  if (rep->kind == wire::ReplyKind::declined) return Support::no(received_text(rep->text));
  if (rep->kind == wire::ReplyKind::refused) fail("supports", received_text(rep->text), FaultKind::refused);
  if (rep->kind != wire::ReplyKind::ok) {
    worker_.reset();
    fail("supports", "worker error: " + received_text(rep->text));
  }
  return Support::yes();
}

void PluginKernel::forward(const Problem& p, const KernelViews& views) {
  call(static_cast<int>(wire::Op::forward), p, views_to_abi(views));
}

void PluginKernel::backward(const Problem& p, const KernelViews& views) {
  if (!caps_.backward) throw KernelFailure(FaultKind::refused, "plugin " + name_ + " does not claim backward");
  call(static_cast<int>(wire::Op::backward), p, views_to_abi(views));
}

void PluginKernel::decode(const Problem& p, const DecodeViews& views) {
  if (!caps_.decode) throw KernelFailure(FaultKind::refused, "plugin " + name_ + " does not claim decode");
  // Validated here, before anything is copied: the copies' extents come from these shapes, and a
  // block table entry outside the pool would otherwise reach the plugin as its own crash.
  if (const std::vector<std::string> e = check_decode_views(p, views); !e.empty())
    throw InputError("plugin " + name_ + " decode: invalid call: " + e[0]);
  call(static_cast<int>(wire::Op::decode), p, decode_in_slots(decode_views_to_abi(views), abi_problem(p)));
}

attnv_problem PluginKernel::abi_problem(const Problem& p) const {
  // A plugin that does not claim packed sequences or a paged cache may be built against a header
  // whose attnv_problem ends before the field: it would compute the packed batch as one sequence,
  // or read the page pools as contiguous caches, and be blamed for it. The drawing stays within
  // the claims; this says so if not, as attnv's error, never the plugin's.
  const auto unclaimed = [&](const char* bit, const char* what) {
    return HarnessError("plugin " + name_ + " does not claim " + bit + "; attnv must not pass it " + what + " (" +
                        describe(p) + ")");
  };
  if (p.varlen_sequences > 0 && !caps_.varlen) throw unclaimed("ATTNV_CAP_VARLEN", "packed sequences");
  // kv_len [S] with packed sequences: a plugin claiming varlen and kv_len was never sent them
  // together, and would read kv_len[0] as the whole batch's key count.
  if (p.varlen_sequences > 0 && p.has_kv_len && !caps_.varlen_kv_len)
    throw unclaimed("ATTNV_CAP_VARLEN_KV_LEN", "per-sequence key lengths");
  if (p.page_size != 0 && !caps_.paged_kv) throw unclaimed("ATTNV_CAP_PAGED_KV", "a paged KV cache");
  return problem_to_abi(p);
}

void PluginKernel::fail(const std::string& what, const std::string& why, FaultKind kind) {
  throw KernelFailure(kind, "plugin " + name_ + " " + what + ": " + why);
}

void PluginKernel::call(int op_code, const Problem& p, const attnv_views& v) {
  const auto op = static_cast<wire::Op>(op_code);
  const char* what = op == wire::Op::backward ? "backward" : op == wire::Op::decode ? "decode" : "forward";
  if (!worker_) start_worker();  // lazily, after a failure
  const attnv_problem abi = abi_problem(p);
  const CallLayout l = plan_call(v, abi, op);
  region_->reserve(l.total);
  region_->copy_in(l);
  region_->status() = {};
  wire::Request r;
  r.op = op;
  r.region_bytes = region_->size();
  r.problem = abi;
  for (int s = 0; s < wire::kSlots; ++s) r.t[s] = l.t[s];

  const std::optional<wire::Reply> rep = worker_->call(r, opt_.timeout_seconds);
  if (!rep) {
    const Death d = worker_->death();
    worker_.reset();
    const wire::Status& s = region_->status();
    if (s.magic == wire::kMagic) {
      const Fault f = describe_fault(s, l);
      fail(what, f.text, f.kind);
    }
    char t[64];
    std::snprintf(t, sizeof t, "%g", opt_.timeout_seconds);
    switch (d.kind) {
      case Death::hung: fail(what, std::string("hung: no answer within ") + t + " s (worker killed)", FaultKind::hung);
      case Death::exited: fail(what, "exited with status " + std::to_string(d.code) + " during the call");
      case Death::signaled: fail(what, "killed by " + signal_name(d.code) + (d.detail.empty() ? "" : " (" + d.detail + ")"));
      case Death::broken: fail(what, "worker protocol error: " + d.detail);
    }
  }
  if (rep->kind == wire::ReplyKind::declined) throw KernelDeclined(received_text(rep->text));
  if (rep->kind == wire::ReplyKind::refused)
    fail(what, "refused the call (returned " + std::to_string(rep->code) + ")" +
                   (rep->text[0] ? ": " + received_text(rep->text) : std::string(" without a last_error message")),
         FaultKind::refused);
  if (rep->kind != wire::ReplyKind::ok) {
    worker_.reset();
    fail(what, "worker error: " + received_text(rep->text));
  }
  if (const std::string bad = region_->check_canaries(l); !bad.empty())
    fail(what, "wrote outside its output buffers: " + bad, FaultKind::out_of_bounds);
  region_->copy_out(l);
}

}  // namespace attnv::plugin
