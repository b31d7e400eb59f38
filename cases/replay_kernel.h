#pragma once
// The kernel `attnv cases check` reruns the conformance suite on: each call is hashed
// (call_hash), its case folder found in the export's manifest, and the answers the user's
// program wrote there (out.npy, lse.npy, dq/dk/dv.npy) are read and written into the views.
// A missing or malformed answer is an InputError naming the case and the file; the conformance
// runner turns it into a finding of the requirement that made the call.
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cases/claims.h"
#include "problem/kernel.h"

namespace attnv::cases {

class ReplayKernel : public Kernel {
 public:
  // Reads DIR/manifest.json (not the tensors: the calls bring their inputs). `second`: a copy
  // of the export answered by a second run of the program (`cases check --second`).
  ReplayKernel(std::filesystem::path dir, Claims claims, std::optional<std::filesystem::path> second = {});
  std::string name() const override { return "answers in " + dir_.string(); }
  Capabilities capabilities() const override { return claims_.caps; }
  PrecisionModel precision(DType storage) const override { return claims_.model(storage); }
  void forward(const Problem& p, const KernelViews& views) override;
  void backward(const Problem& p, const KernelViews& views) override;

  // Starts a requirement x dtype job. `second_run`: in this job a repeated identical call (same
  // hash, same direction) is answered alternately from DIR and the second folder, so a check that
  // compares two runs of a case (R13) compares the two runs of the program.
  void start(const std::string& requirement_id, DType dtype, bool second_run = false);
  std::size_t cases() const { return by_hash_.size(); }

  struct Entry {
    std::string id, dir;
    Problem problem;
  };
  // The manifest's cases, in manifest order.
  const std::vector<Entry>& entries() const { return entries_; }

 private:
  void answer(const Problem& p, const KernelViews& views, bool backward);
  std::filesystem::path dir_;
  Claims claims_;
  std::optional<std::filesystem::path> second_;
  std::vector<Entry> entries_;
  std::unordered_map<std::string, std::size_t> by_hash_;  // index into entries_
  std::string job_ = "?";
  bool second_run_ = false;
  std::map<std::pair<std::string, bool>, int> repeats_;  // calls per (hash, backward) in this job
};

}  // namespace attnv::cases
