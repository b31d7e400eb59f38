#pragma once
// Per-thread scratch of the backward tile loops: one query tile (kBwdRows rows) against one key
// tile (kBwdKeys keys) in the accumulator type, plus the accumulators of one item (a key tile's
// dK and dV, or a query tile's dQ). Never a Tq x Tk buffer.
#include <algorithm>
#include <cstdint>

#include "core/block_range.h"
#include "core/microkernels.h"
#include "core/workspace.h"

namespace attnv::core {

// 64 x 64 tiles: both passes keep five tile-sized score buffers live (S/P, dP/dS, the softcap
// derivative, P^T, dS^T), and the accumulators of a 64-key tile stay in L2 next to them.
inline constexpr int kBwdRows = 64;
inline constexpr int kBwdKeys = 64;
static_assert(kBwdKeys % 16 == 0, "the scores kernel works on 16 keys at a time");

template <class T>
struct BackwardWorkspace {
  BackwardWorkspace(std::int64_t dk, std::int64_t dv)
      : dk8(round_up(dk, kDkPad)), dv8(round_up(dv, kDkPad)), dk16(round_up(dk, kPanel)),
        dv16(round_up(dv, kPanel)),
        kt_(dk8 * kBwdKeys), vt_(dv8 * kBwdKeys), kp_(kBwdKeys * dk16),
        q_(kBwdRows * dk8), qp_(kBwdRows * dk16), dout_(kBwdRows * dv8), dop_(kBwdRows * dv16),
        s_(kBwdRows * kBwdKeys), ds_(kBwdRows * kBwdKeys), cd_(kBwdRows * kBwdKeys),
        pt_(kBwdKeys * kBwdRows), dst_(kBwdKeys * kBwdRows),
        acc_k_(std::max(kBwdKeys, kBwdRows) * dk16), acc_v_(kBwdKeys * dv16),
        ones_(std::max(kBwdKeys, kBwdRows)), row_(kStagingRows * std::max(dk16, dv16)), ranges_(kBwdRows) {
    std::fill(ones_.get(), ones_.get() + std::max(kBwdKeys, kBwdRows), T(1));
  }
  // Dk, Dv padded to the dot-product lanes (row-major operands of the scores kernel) and to whole
  // panels (operands of the pv kernel).
  std::int64_t dk8, dv8, dk16, dv16;
  static constexpr std::int64_t lds = kBwdKeys;       // S, dS, softcap derivative: rows x keys
  static constexpr std::int64_t ldk = kBwdKeys;       // K^T, V^T tiles: d x keys
  static constexpr std::int64_t ldt = kBwdRows;       // P^T, dS^T: keys x rows
  static constexpr std::int64_t ldqp = kBwdRows * kPanel;  // Q, dO panels (rows x 16 each)
  static constexpr std::int64_t ldkp = kBwdKeys * kPanel;  // K panels (keys x 16 each)

  T* kt() const { return kt_.get(); }
  T* vt() const { return vt_.get(); }
  T* kp() const { return kp_.get(); }
  T* q() const { return q_.get(); }
  T* qp() const { return qp_.get(); }
  T* dout() const { return dout_.get(); }
  T* dop() const { return dop_.get(); }
  T* s() const { return s_.get(); }
  T* ds() const { return ds_.get(); }
  T* cd() const { return cd_.get(); }
  T* pt() const { return pt_.get(); }
  T* dst() const { return dst_.get(); }
  T* acc_k() const { return acc_k_.get(); }
  T* acc_v() const { return acc_v_.get(); }
  const T* ones() const { return ones_.get(); }
  T* row() const { return row_.get(); }
  KeyRange* ranges() const { return ranges_.get(); }

 private:
  AlignedArray<T> kt_, vt_, kp_, q_, qp_, dout_, dop_, s_, ds_, cd_, pt_, dst_, acc_k_, acc_v_,
      ones_, row_;
  AlignedArray<KeyRange> ranges_;
};

}  // namespace attnv::core
