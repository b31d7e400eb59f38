#pragma once
// The kernel `attnv cases check` reruns the conformance suite on: each call is hashed
// (call_hash), its case folder found in the export's manifest, and the answers the user's
// program wrote there (out.npy, lse.npy, dq/dk/dv.npy) are read and written into the views.
// A missing or malformed answer is an InputError naming the case and the file; the conformance
// runner turns it into a finding of the requirement that made the call.
#include <filesystem>
#include <string>
#include <unordered_map>

#include "cases/claims.h"
#include "problem/kernel.h"

namespace attnv::cases {

class ReplayKernel : public Kernel {
 public:
  // Reads DIR/manifest.json (not the tensors: the calls bring their inputs).
  ReplayKernel(std::filesystem::path dir, Claims claims);
  std::string name() const override { return "answers in " + dir_.string(); }
  Capabilities capabilities() const override { return claims_.caps; }
  PrecisionModel precision(DType storage) const override { return claims_.model(storage); }
  void forward(const Problem& p, const KernelViews& views) override;
  void backward(const Problem& p, const KernelViews& views) override;

  void start(const std::string& requirement_id, DType dtype);
  std::size_t cases() const { return by_hash_.size(); }

 private:
  struct Entry {
    std::string id, dir;
    Problem problem;
  };
  void answer(const Problem& p, const KernelViews& views, bool backward);
  std::filesystem::path dir_;
  Claims claims_;
  std::unordered_map<std::string, Entry> by_hash_;
  std::string job_ = "?";
};

}  // namespace attnv::cases
