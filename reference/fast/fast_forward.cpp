// fast_forward: rows in parallel over (batch, block of query rows); within a block the visible
// key lists are computed once per row and reused by every head, and each head's K and V are
// swept by kRowBlock rows in a row while they are in cache.
#include <algorithm>
#include <atomic>

#include "reference/fast/accumulator.h"
#include "reference/fast/case_checks.h"
#include "reference/fast/fast.h"
#include "reference/fast/row_output.h"
#include "reference/fast/row_softmax.h"
#include "problem/visibility.h"
#include "util/parallel.h"

namespace attnv::reference {
namespace fd = fast_detail;

namespace {
constexpr std::int64_t kRowBlock = 16;
}  // namespace

Outputs fast_forward(const Case& c, const FastOptions& opt, FastStats* stats,
                     FastAccuracy* accuracy) {
  fd::require_readable(c, false);
  const Shape& s = c.problem.shape;
  Outputs out;
  out.out.assign(static_cast<std::size_t>(out_elements(s)), 0.0);
  out.lse.assign(static_cast<std::size_t>(lse_elements(s)), 0.0);
  fd::prepare_accuracy(out, accuracy);
  const fd::RowContext ctx(c);
  const std::int64_t blocks_per_batch = (s.Tq + kRowBlock - 1) / kRowBlock;
  std::atomic<std::int64_t> unresolved{0};

  // Every output element is written by exactly one task and computed the same way whatever the
  // partition: the result does not depend on the thread count.
  parallel_for(
      s.B * blocks_per_batch,
      [&](std::int64_t begin, std::int64_t end) {
        fd::RowWeights w;
        fd::Accumulators acc;
        std::vector<std::vector<std::int64_t>> keys(kRowBlock);
        fd::ElementSink sink{&out, accuracy};
        for (std::int64_t task = begin; task < end; ++task) {
          const std::int64_t b = task / blocks_per_batch;
          const std::int64_t i0 = (task % blocks_per_batch) * kRowBlock;
          const std::int64_t i1 = std::min(s.Tq, i0 + kRowBlock);
          // A mask or bias per head gives each head its own keys; otherwise head 0's serve all.
          const bool per_head = (c.problem.has_mask && c.problem.mask_dims.heads) ||
                                (c.problem.has_bias && c.problem.bias_dims.heads);
          for (std::int64_t h = 0; h < s.Hq; ++h) {
            if (h == 0 || per_head)
              for (std::int64_t i = i0; i < i1; ++i)
                keys[static_cast<std::size_t>(i - i0)] = visible_keys(c, b, h, i);
            for (std::int64_t i = i0; i < i1; ++i) {
              w.keys = keys[static_cast<std::size_t>(i - i0)];
              fd::compute_row_weights(ctx, b, h, i, w, false);
              fd::write_row_output(ctx, b, h, i, w, acc, sink);
            }
          }
        }
        unresolved += sink.unresolved;
      },
      opt.threads, 1);

  if (stats) {
    stats->elements += out_elements(s) + lse_elements(s);
    stats->unresolved += unresolved.load();
  }
  return out;
}

}  // namespace attnv::reference
