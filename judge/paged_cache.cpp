#include "judge/paged_cache.h"

#include <cstring>
#include <numeric>
#include <sstream>

#include "gen/rng.h"
#include "problem/buffers.h"
#include "problem/cache_pages.h"

namespace attnv::judge {

namespace {
constexpr std::int64_t kSparePages = 2;  // mapped by no table entry: must stay untouched
}  // namespace

PagedCache::PagedCache(const Problem& p, std::int64_t shared_blocks, std::uint64_t seed, double k_garbage,
                       double v_garbage)
    : p_(p), k_garbage_(k_garbage), v_garbage_(v_garbage) {
  const std::int64_t B = p.shape.B;
  blocks_ = p.shape.Tk / p.page_size;
  shared_ = B > 1 ? std::min(shared_blocks, blocks_) : 0;
  num_pages_ = B * blocks_ - shared_ + kSparePages;
  // Pages handed out in a shuffled order (Fisher-Yates on gen::Rng: the same on every platform).
  std::vector<std::int64_t> order(static_cast<std::size_t>(num_pages_));
  std::iota(order.begin(), order.end(), std::int64_t{0});
  gen::Rng rng(seed);
  for (std::int64_t i = num_pages_ - 1; i > 0; --i)
    std::swap(order[static_cast<std::size_t>(i)], order[static_cast<std::size_t>(rng.uniform_int(0, i))]);
  table_.resize(static_cast<std::size_t>(B * blocks_));
  std::size_t next = 0;
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t t = 0; t < blocks_; ++t)
      table_[static_cast<std::size_t>(b * blocks_ + t)] =
          b == B - 1 && t < shared_ ? table_[static_cast<std::size_t>(t)] : order[next++];
  table_made_ = table_;
  k_pool_ = make_pool(p.shape.Dk, k_garbage);
  v_pool_ = make_pool(p.shape.Dv, v_garbage);
  k_ = k_pool_.ref;
  v_ = v_pool_.ref;
}

PagedCache::Pool PagedCache::make_pool(std::int64_t D, double garbage) const {
  Pool pool;
  pool.ref.dtype = p_.dtype;
  pool.ref.shape = {num_pages_, p_.shape.Hkv, p_.page_size, D};
  pool.ref.stride = dense_strides(pool.ref.shape, 4);
  const std::int64_t elements = num_pages_ * p_.shape.Hkv * p_.page_size * D;
  pool.storage.resize(static_cast<std::size_t>((elements * dtype_bytes(p_.dtype) + 7) / 8));
  pool.ref.data = pool.storage.data();
  for (std::int64_t pg = 0; pg < num_pages_; ++pg)
    for (std::int64_t h = 0; h < p_.shape.Hkv; ++h)
      for (std::int64_t s = 0; s < p_.page_size; ++s)
        for (std::int64_t d = 0; d < D; ++d) store(pool.ref, {pg, h, s, d}, garbage);
  return pool;
}

void PagedCache::write(const std::vector<std::int64_t>& upto, const Values& values, const TensorRef& k,
                       const TensorRef& v) const {
  const CachePages pages{table_made_.data(), p_.page_size, blocks_};
  const Shape& s = p_.shape;
  for (std::int64_t b = 0; b < s.B; ++b)
    for (std::int64_t h = 0; h < s.Hkv; ++h)
      for (std::int64_t j = 0; j < upto[static_cast<std::size_t>(b)]; ++j) {
        for (std::int64_t d = 0; d < s.Dk; ++d) store(k, pages.index(b, h, j, d), values(0, b, h, j, d));
        for (std::int64_t d = 0; d < s.Dv; ++d) store(v, pages.index(b, h, j, d), values(1, b, h, j, d));
      }
}

void PagedCache::prefill(const std::vector<std::int64_t>& upto, const Values& values) { write(upto, values, k_, v_); }

std::string PagedCache::difference(const std::vector<std::int64_t>& cache_len, const Values& values) const {
  if (table_ != table_made_) return "block_table was written (it is an input)";
  // What the pools should hold: fresh garbage pools with the prompt written up to cache_len.
  const Pool k_want = make_pool(p_.shape.Dk, k_garbage_), v_want = make_pool(p_.shape.Dv, v_garbage_);
  write(cache_len, values, k_want.ref, v_want.ref);
  // Which (b, t) maps each page, to name a difference.
  std::vector<std::int64_t> owner(static_cast<std::size_t>(num_pages_), -1);
  for (std::int64_t e = static_cast<std::int64_t>(table_made_.size()) - 1; e >= 0; --e)
    owner[static_cast<std::size_t>(table_made_[static_cast<std::size_t>(e)])] = e;
  const auto eb = static_cast<std::size_t>(dtype_bytes(p_.dtype));
  for (int which = 0; which < 2; ++which) {
    const TensorRef& got = which == 0 ? k_ : v_;
    const TensorRef& want = which == 0 ? k_want.ref : v_want.ref;
    for (std::int64_t pg = 0; pg < num_pages_; ++pg)
      for (std::int64_t h = 0; h < p_.shape.Hkv; ++h)
        for (std::int64_t sl = 0; sl < p_.page_size; ++sl)
          for (std::int64_t d = 0; d < got.shape[3]; ++d) {
            const std::int64_t off = pg * got.stride[0] + h * got.stride[1] + sl * got.stride[2] + d;
            const auto* g = static_cast<const unsigned char*>(got.data) + static_cast<std::size_t>(off) * eb;
            const auto* w = static_cast<const unsigned char*>(want.data) + static_cast<std::size_t>(off) * eb;
            if (std::memcmp(g, w, eb) == 0) continue;
            std::ostringstream o;
            o.precision(17);
            o << (which == 0 ? "k_cache" : "v_cache") << " page " << pg << " [h=" << h << ",slot=" << sl << ",d=" << d
              << "] = " << load(got, {pg, h, sl, d}) << ", expected " << load(want, {pg, h, sl, d});
            const std::int64_t e = owner[static_cast<std::size_t>(pg)];
            if (e < 0) {
              o << " (a page no table entry maps: untouched)";
            } else {
              const std::int64_t b = e / blocks_, pos = (e % blocks_) * p_.page_size + sl;
              o << " (sequence " << b << ", position " << pos
                << (pos < cache_len[static_cast<std::size_t>(b)] ? ": the appended token's value)"
                                                                   : ": untouched, past cache_len + n)");
            }
            return o.str();
          }
  }
  return "";
}

}  // namespace attnv::judge
