#include "core/kv_append.h"

#include <cstring>

#include "core/forward_params.h"

namespace attnv::core {

void append_rows(const TensorRef& src, const TensorRef& dst, const std::int64_t* cache_len, const CachePages& pages) {
  const auto eb = static_cast<std::int64_t>(dtype_bytes(src.dtype));
  const auto* in = static_cast<const unsigned char*>(src.data);
  auto* out = static_cast<unsigned char*>(dst.data);
  const std::int64_t B = src.shape[0], H = src.shape[1], n = src.shape[2], D = src.shape[3];
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t h = 0; h < H; ++h)
      for (std::int64_t i = 0; i < n; ++i) {
        const std::int64_t from = offset_of(src, b, h, i), to = pages.offset(dst, b, h, cache_len[b] + i);
        if (src.stride[3] == 1 && dst.stride[3] == 1) {
          std::memcpy(out + to * eb, in + from * eb, static_cast<std::size_t>(D * eb));
          continue;
        }
        for (std::int64_t d = 0; d < D; ++d)
          std::memcpy(out + (to + d * dst.stride[3]) * eb, in + (from + d * src.stride[3]) * eb,
                      static_cast<std::size_t>(eb));
      }
}

}  // namespace attnv::core
