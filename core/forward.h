#pragma once
// The forward driver: splits a call into (batch, head, query block) work items and runs the
// tile loop on each, in parallel. Each item's result depends only on the item, never on the
// thread that ran it, so any thread count gives bitwise the same outputs.
#include "core/forward_params.h"
#include "core/isa.h"

namespace attnv::core {

// Planted bugs of the backward, for tests only: they show the checks catch a wrong gradient.
enum class BackwardPlant { none, dk_missing_scale, no_softcap_derivative };

struct ForwardOptions {
  int threads = 0;             // <= 0: default_threads()
  // The f32 inner loops' ISA path (isa.h): `best` follows ATTNV_CORE_ISA, then the CPU; a path
  // the CPU lacks is an InputError. Tests certify each path in one process with it.
  Isa isa = Isa::best;
  BackwardPlant plant = BackwardPlant::none;  // tests only (core/tests/backward_test.cpp)
  // Dropout on the attention weights (training calls of the core; not part of the Kernel
  // interface). Inactive (inference, or p = 0) leaves the forward bitwise unchanged.
  DropoutOptions dropout{};
  // Decode only (core/decode.h): 0 chooses the split-KV chunk from the problem, < 0 never
  // splits, > 0 splits the keys into chunks of this many (rounded up to a key tile). Tests and
  // benchmarks use it; the result never depends on the thread count either way.
  std::int64_t decode_split_keys = 0;
  // Backward only (core/backward.h): 0 chooses one pass or two from the shape and the threads,
  // 1 or 2 forces it (tests and benchmarks; the bits are the same either way).
  int backward_passes = 0;
};

void forward(const ForwardParams& p, const ForwardOptions& opt);

}  // namespace attnv::core
