#include "cases/replay_kernel.h"

#include <nlohmann/json.hpp>
#include <sstream>

#include "cases/call_hash.h"
#include "io/exchange.h"
#include "io/manifest.h"
#include "problem/buffers.h"
#include "problem/error.h"
#include "problem/kernel_fault.h"

namespace attnv::cases {

ReplayKernel::ReplayKernel(std::filesystem::path dir, Claims claims, std::optional<std::filesystem::path> second)
    : dir_(std::move(dir)), claims_(std::move(claims)), second_(std::move(second)) {
  const std::filesystem::path file = dir_ / std::string(io::kManifestFile);
  for (io::ManifestEntry& e : io::read_manifest(dir_)) {
    std::string hash;
    try {
      hash = nlohmann::json::parse(e.meta_json.empty() ? "{}" : e.meta_json).value("hash", "");
    } catch (const nlohmann::json::exception&) {
    }
    if (hash.empty()) throw InputError(file.string() + ": case '" + e.id + "' has no \"hash\" in its meta (not written by attnv cases export?)");
    by_hash_[hash] = entries_.size();
    entries_.push_back({e.id, e.dir, e.problem});
  }
}

void ReplayKernel::start(const std::string& requirement_id, DType dtype, bool second_run) {
  job_ = requirement_id + "/" + std::string(dtype_name(dtype));
  second_run_ = second_run && second_.has_value();
  repeats_.clear();
}

void ReplayKernel::answer(const Problem& p, const KernelViews& views, bool backward) {
  const Case c = case_from_views(p, views);
  const std::string hex = hash_hex(call_hash(c));
  const auto it = by_hash_.find(hex);
  if (it == by_hash_.end())
    throw HarnessError("no answer for a call of " + job_ + " (hash " + hex + "): the export has no such case (" +
                     (c.has_dout() ? "backward" : "forward") + ", " + describe(p) +
                     "); was the folder exported with other options, or did the check take a path the exporting "
                     "kernel's answers did not lead to (cases/README.md)?");
  const Entry& e = entries_[it->second];
  const std::string name = "case " + e.id;
  if (!(e.problem == p)) throw HarnessError(name + ": manifest problem differs from the call's (" + describe(p) + ")");
  // Odd-numbered calls from DIR, even-numbered from the second run: R13's two forwards in a row
  // get one run each, and so do its two forward+backward runs (the lone forward between them
  // hashes to the forward-only case, counted apart).
  const bool from_second = second_run_ && ++repeats_[{hex, backward}] % 2 == 0;
  const std::filesystem::path folder = (from_second ? *second_ : dir_) / e.dir;
  Outputs o;
  try {
    o = io::read_outputs(folder, "", c);
  } catch (const InputError& err) {
    throw KernelFault(FaultKind::missing_output, name + ": " + err.what());
  }
  auto need = [&](const std::vector<double>& v, const char* file) {
    if (v.empty())
      throw KernelFault(FaultKind::missing_output, "no answer for " + name + ": " + (folder / file).string() + " missing");
  };
  if (backward) {
    need(o.dq, "dq.npy");
    need(o.dk, "dk.npy");
    need(o.dv, "dv.npy");
    if (p.has_sinks) need(o.dsinks, "dsinks.npy");
    o.out.clear();  // the forward call already wrote them; the views still hold them
    o.lse.clear();
  } else {
    need(o.out, "out.npy");
    if (views.lse.present()) need(o.lse, "lse.npy");
    o.dq.clear();
    o.dk.clear();
    o.dv.clear();
    o.dsinks.clear();
  }
  // Outputs must already be in the storage dtype: rounding them here would hide how the program
  // rounds (truncating to bf16 is a bug R15 exists to catch). LSE, kept in f32 by kernels, is
  // rounded to the view's dtype like any kernel's.
  auto storage = [&](const std::vector<double>& v, const TensorRef& t, const char* file) {
    for (std::size_t n = 0; n < v.size(); ++n)
      if (!representable(t.dtype, v[n])) {
        std::ostringstream m;
        m.precision(17);
        m << name << ": " << (folder / file).string() << ": element " << n << " = " << v[n]
          << " is not representable in " << dtype_name(t.dtype) << " (write answers in the storage dtype)";
        throw KernelFault(FaultKind::missing_output, m.str());
      }
  };
  storage(o.out, views.out, "out.npy");
  storage(o.dq, views.dq, "dq.npy");
  storage(o.dk, views.dk, "dk.npy");
  storage(o.dv, views.dv, "dv.npy");
  storage(o.dsinks, views.dsinks, "dsinks.npy");
  write_outputs(o, p, views);
}

void ReplayKernel::forward(const Problem& p, const KernelViews& views) { answer(p, views, false); }
void ReplayKernel::backward(const Problem& p, const KernelViews& views) { answer(p, views, true); }

}  // namespace attnv::cases
