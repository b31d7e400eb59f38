#pragma once
// Per-thread scratch of the tile loop: one query block and one key tile in the accumulator
// type, never a Tq x Tk buffer. Size: (QB + 2 KB) x D + QB x KB + a few rows.
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
  Workspace(std::int64_t dk, std::int64_t dv)
      : dk_pad(round_up(dk, kDkPad)), dv_pad(round_up(dv, kPanel)),
        q_(kQueryBlock * dk_pad), k_(kKeyBlock * dk_pad), v_(kKeyBlock * dv_pad),
        s_(kQueryBlock * kKeyBlock), o_(kQueryBlock * dv_pad), rows_(5 * kQueryBlock),
        row_(kStagingRows * std::max(dk_pad, dv_pad)), ranges_(kQueryBlock) {}
  std::int64_t dk_pad, dv_pad;
  static constexpr std::int64_t lds = kKeyBlock;  // a multiple of 16: see MicroKernels::scores
  static constexpr std::int64_t ldk = kKeyBlock;  // transposed K tile: dk_pad x kKeyBlock
  static constexpr std::int64_t ldv = kKeyBlock * kPanel;  // one V panel: kKeyBlock x 16
  T* q() const { return q_.get(); }
  T* k() const { return k_.get(); }
  T* v() const { return v_.get(); }
  T* s() const { return s_.get(); }
  T* o() const { return o_.get(); }
  T* row() const { return row_.get(); }  // kStagingRows staging rows of K or V
  T* lse() const { return rows_.get() + 4 * kQueryBlock; }
  SoftmaxRows<T> softmax() const {
    T* r = rows_.get();
    return {r, r + kQueryBlock, r + 2 * kQueryBlock, r + 3 * kQueryBlock};
  }
  KeyRange* ranges() const { return ranges_.get(); }

 private:
  AlignedArray<T> q_, k_, v_, s_, o_, rows_, row_;
  AlignedArray<KeyRange> ranges_;
};

}  // namespace attnv::core
