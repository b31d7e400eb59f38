#pragma once
// The append step of decode: copies the new tokens' K or V rows into the cache at positions
// cache_len[b] .. cache_len[b] + n - 1. The only write into an input a decode call makes.
#include <cstdint>

#include "problem/cache_pages.h"
#include "problem/tensor.h"

namespace attnv::core {

// src [B, H, n, D] into dst at position cache_len[b] + i of KV head (b, h), found through
// `pages` (dst [B, H, capacity, D], or a page pool), element by element in the storage dtype (a
// bit copy: both views hold the problem's dtype, checked by the caller).
void append_rows(const TensorRef& src, const TensorRef& dst, const std::int64_t* cache_len, const CachePages& pages);

}  // namespace attnv::core
