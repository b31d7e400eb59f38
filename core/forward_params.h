#pragma once
// The flat parameter block of one forward call (FlashAttention's flash.h idea): the problem's
// options resolved once (scale, kv_len, group) and the strided views, so the tile loop never
// looks at optional fields or re-derives anything per tile.
#include <cstdint>

#include "core/dropout.h"
#include "problem/cache_pages.h"
#include "problem/problem.h"
#include "problem/tensor.h"

namespace attnv::core {

struct ForwardParams {
  Shape shape;
  DType dtype = DType::f32;
  double scale = 1;         // effective scale (1/sqrt(Dk) unless given)
  bool has_softcap = false;
  double softcap = 0;
  bool causal = false;
  Alignment alignment = Alignment::top_left;
  Window window;
  std::int64_t chunk = 0;   // chunked local attention: keys of p_i's chunk of `chunk` only (0: none)
  bool has_mask = false;
  bool has_bias = false;
  bool has_sinks = false;   // views.sinks [Hq]: a logit per head in every row's denominator
  bool has_alibi = false;   // slopes in views.alibi
  std::int64_t group = 1;   // G = Hq / Hkv: query head h reads KV head h / G
  KernelViews views;        // q, k, v, mask, bias, kv_len, sinks, out, lse
  CachePages pages;         // where K and V rows live: contiguous, or a paged cache (decode only)
  DropoutOptions dropout{};  // from ForwardOptions (training calls only; docs/dropout.md)

  std::int64_t kv_len(std::int64_t b) const {
    return views.kv_len != nullptr ? views.kv_len[b] : shape.Tk;
  }
};

ForwardParams make_forward_params(const Problem& p, const KernelViews& views);

// Element offset of [i0, i1, i2, i3] in a strided tensor (in elements, not bytes).
inline std::int64_t offset_of(const TensorRef& t, std::int64_t i0, std::int64_t i1,
                              std::int64_t i2, std::int64_t i3 = 0) {
  return i0 * t.stride[0] + i1 * t.stride[1] + i2 * t.stride[2] + i3 * t.stride[3];
}

}  // namespace attnv::core
