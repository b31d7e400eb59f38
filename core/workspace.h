#pragma once
// Per-thread scratch of the tile loop: `capacity` query rows (one query block, or the forward's
// few blocks that share each key tile) and one key tile in the accumulator type, never a
// Tq x Tk buffer. Size: (2 capacity + 2 KB) x D + QB x KB + a few rows per query row.
#include <cstdint>
#include <cstdlib>
#include <algorithm>
#include <memory>

#include "core/block_range.h"
#include "core/online_softmax.h"

namespace attnv::core {

// Query rows per block (large: each block streams all its keys once) and keys per tile. kKeyBlock is the `block` of the precision model.
inline constexpr int kQueryBlock = 192;
inline constexpr int kKeyBlock = 64;
// Query blocks the forward runs against each key tile it loads (tile_loop.h): the transposed K
// and panel-major V tiles are built once for all of them instead of once per block. Each block
// keeps its own rows, key interval and tile grid, so the bits are those of one block at a time.
inline constexpr int kForwardBlocks = 4;
static_assert(kKeyBlock % 16 == 0, "the scores kernel works on 16 keys at a time");

inline std::int64_t round_up(std::int64_t d, std::int64_t to) { return (d + to - 1) / to * to; }

// Rows of the staging buffer (row()) of the forward's and backward's workspaces: the K tile
// transposition stages 16 converted rows (f16, bf16 or strided storage) for the register
// transpose of MicroKernels::transpose_keys.
inline constexpr int kStagingRows = 16;

template <class T>
class AlignedArray {
 public:
  explicit AlignedArray(std::int64_t n)
      : p_(static_cast<T*>(std::aligned_alloc(64, bytes(n)))) {
    if (!p_) throw std::bad_alloc();
  }
  T* get() const { return p_.get(); }

 private:
  static std::size_t bytes(std::int64_t n) {
    const std::size_t b = static_cast<std::size_t>(n > 0 ? n : 1) * sizeof(T);
    return (b + 63) / 64 * 64;
  }
  struct Free {
    void operator()(T* p) const { std::free(p); }
  };
  std::unique_ptr<T, Free> p_;
};

template <class T>
struct Workspace {
  // `rows`: the capacity, query rows held at once (q, o, the softmax rows, ranges); the scores tile s is
  // one block's, kQueryBlock x kKeyBlock, whatever the capacity.
  Workspace(std::int64_t dk, std::int64_t dv, std::int64_t rows = kQueryBlock)
      : dk_pad(round_up(dk, kDkPad)), dv_pad(round_up(dv, kPanel)), capacity(rows),
        q_(capacity * dk_pad), k_(kKeyBlock * dk_pad), v_(kKeyBlock * dv_pad),
        s_(kQueryBlock * kKeyBlock), o_(capacity * dv_pad), rows_(5 * capacity),
        row_(kStagingRows * std::max(dk_pad, dv_pad)), ranges_(capacity) {}
  std::int64_t dk_pad, dv_pad, capacity;
  static constexpr std::int64_t lds = kKeyBlock;  // a multiple of 16: see MicroKernels::scores
  static constexpr std::int64_t ldk = kKeyBlock;  // transposed K tile: dk_pad x kKeyBlock
  static constexpr std::int64_t ldv = kKeyBlock * kPanel;  // one V panel: kKeyBlock x 16
  T* q() const { return q_.get(); }
  T* k() const { return k_.get(); }
  T* v() const { return v_.get(); }
  T* s() const { return s_.get(); }
  T* o() const { return o_.get(); }
  T* row() const { return row_.get(); }  // kStagingRows staging rows of K or V
  T* lse() const { return rows_.get() + 4 * capacity; }
  SoftmaxRows<T> softmax() const {
    T* r = rows_.get();
    return {r, r + capacity, r + 2 * capacity, r + 3 * capacity};
  }
  KeyRange* ranges() const { return ranges_.get(); }

 private:
  AlignedArray<T> q_, k_, v_, s_, o_, rows_, row_;
  AlignedArray<KeyRange> ranges_;
};

}  // namespace attnv::core
