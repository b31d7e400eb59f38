#include "cases/record_kernel.h"

#include <cstdio>

#include "cases/call_hash.h"
#include "problem/buffers.h"

namespace attnv::cases {

RecordingKernel::RecordingKernel(Claims claims, std::unique_ptr<Kernel> answers)
    : claims_(std::move(claims)), answers_(std::move(answers)) {}

void RecordingKernel::start(const std::string& requirement_id, DType dtype) {
  requirement_ = requirement_id;
  dtype_ = dtype;
  counter_ = 0;
}

void RecordingKernel::record(const Problem& p, const KernelViews& views) {
  ++calls_;
  // The forward half of a backward run sees dout too: it hashes to the backward case, whose
  // folder answers both calls (out and lse, then dq, dk, dv).
  Case c = case_from_views(p, views);
  const std::uint64_t h = call_hash(c);
  if (!seen_.insert(h).second) return;
  char num[16];
  std::snprintf(num, sizeof num, "%04d", counter_++);
  const std::string hex = hash_hex(h);
  c.id = requirement_ + "/" + std::string(dtype_name(dtype_)) + "/" + num + "/" + hex;
  const char* kind = c.has_dout() ? "backward" : "forward";
  std::string meta = std::string("{\"hash\":\"") + hex + "\",\"requirement\":\"" + requirement_ + "\",\"kind\":\"" + kind + "\"}";
  cases_.push_back({std::move(c), "", std::move(meta)});
}

void RecordingKernel::forward(const Problem& p, const KernelViews& views) {
  record(p, views);
  answers_->forward(p, views);
}

void RecordingKernel::backward(const Problem& p, const KernelViews& views) {
  record(p, views);
  answers_->backward(p, views);
}

}  // namespace attnv::cases
