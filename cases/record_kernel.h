#pragma once
// The kernel `attnv cases export` runs the conformance suite on: it claims what the claims say,
// records every distinct call as a case (once per call_hash) and answers from a correct
// in-process kernel so the checks go on to make every call they would make on a correct kernel.
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "cases/claims.h"
#include "io/exchange.h"
#include "problem/kernel.h"

namespace attnv::cases {

class RecordingKernel : public Kernel {
 public:
  // `answers` computes the outputs (the naive kernel); its own capabilities must cover the claims.
  RecordingKernel(Claims claims, std::unique_ptr<Kernel> answers);
  std::string name() const override { return "cases export (answers from " + answers_->name() + ")"; }
  Capabilities capabilities() const override { return claims_.caps; }
  PrecisionModel precision(DType storage) const override { return claims_.model(storage); }
  void forward(const Problem& p, const KernelViews& views) override;
  void backward(const Problem& p, const KernelViews& views) override;

  // Names the cases recorded from now on: "<requirement>/<dtype>/<NNNN>/<hash>", NNNN counting
  // the new cases of this requirement x dtype.
  void start(const std::string& requirement_id, DType dtype);
  const std::vector<io::ExchangeCase>& cases() const { return cases_; }
  std::vector<io::ExchangeCase> take_cases() { return std::move(cases_); }
  std::uint64_t calls() const { return calls_; }

 private:
  void record(const Problem& p, const KernelViews& views);
  Claims claims_;
  std::unique_ptr<Kernel> answers_;
  std::string requirement_ = "?";
  DType dtype_ = DType::f32;
  int counter_ = 0;
  std::uint64_t calls_ = 0;
  std::unordered_set<std::uint64_t> seen_;
  std::vector<io::ExchangeCase> cases_;
};

}  // namespace attnv::cases
