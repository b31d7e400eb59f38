#pragma once
// Strided tensor views: how a kernel receives its buffers. Strides are in elements, so
// [B,H,T,D] and [B,T,H,D] layouts and views with gaps are all valid input (SPEC).
// The plugin C ABI mirrors these structs field for field.
#include <array>
#include <cstdint>

#include "problem/dtype.h"

namespace attnv {

struct TensorRef {
  void* data = nullptr;  // null: the tensor is absent
  DType dtype = DType::f32;
  int rank = 4;                         // 4 for q/k/v/out/dq/dk/dv/dout, 3 for lse, 1 for sinks;
                                        // mask/bias: 2 for [Tq,Tk], 4 for [B|1,Hq|1,Tq,Tk]
  std::array<std::int64_t, 4> shape{};  // the first `rank` entries are used
  std::array<std::int64_t, 4> stride{};
  bool present() const { return data != nullptr; }
};

// Dense row-major strides for a shape.
std::array<std::int64_t, 4> dense_strides(const std::array<std::int64_t, 4>& shape, int rank);

// Offset of element (b, h, i, j) of a mask or bias view: rank 2 [Tq, Tk] is shared by every
// (b, h); rank 4 [B|1, Hq|1, Tq, Tk] broadcasts an extent of 1 (its index is 0 whatever b or h).
inline std::int64_t broadcast_offset(const TensorRef& t, std::int64_t b, std::int64_t h, std::int64_t i,
                                     std::int64_t j) {
  if (t.rank == 2) return i * t.stride[0] + j * t.stride[1];
  return (t.shape[0] == 1 ? 0 : b) * t.stride[0] + (t.shape[1] == 1 ? 0 : h) * t.stride[1] + i * t.stride[2] +
         j * t.stride[3];
}

// The buffers of one kernel call. Mask elements are uint8 (0 hidden, 1 visible) whatever
// mask.dtype says; kv_len is int64[B] (int64[S] with packed
// sequences: per-sequence key lengths) or null.
struct KernelViews {
  TensorRef q, k, v;
  TensorRef mask, bias;  // rank 2 [Tq,Tk], or rank 4 [B|1,Hq|1,Tq,Tk] when the problem's dims say so
  const std::int64_t* kv_len = nullptr;
  TensorRef sinks;       // [Hq] in the storage dtype, or absent (attnv_views.sinks in the plugin ABI v2)
  TensorRef alibi;       // ALiBi slopes [Hq] in the storage dtype, or absent (attnv_views.alibi in the plugin ABI v2)
  // Packed sequences' bounds, int64 [S+1] each (S = Problem::varlen_sequences), or null; like
  // kv_len, plain arrays (attnv_views.cu_seqlens_q/_k in the plugin ABI v2).
  const std::int64_t* cu_seqlens_q = nullptr;
  const std::int64_t* cu_seqlens_k = nullptr;
  TensorRef dout;        // backward only
  TensorRef out, lse;    // forward outputs
  TensorRef dq, dk, dv;  // backward outputs
  TensorRef dsinks;      // backward output [Hq] in the storage dtype, present iff the problem has sinks
};

// The buffers of one decode call (problem/kernel.h, Kernel::decode; mirrors attnv_decode_views,
// block_table included). n = Problem.shape.Tq new tokens, capacity =
// Problem.shape.Tk cache positions per sequence.
struct DecodeViews {
  TensorRef q;                  // [B, Hq, n, Dk]
  TensorRef k_new, v_new;       // [B, Hkv, n, Dk] and [B, Hkv, n, Dv]: appended to the cache
  // Contiguous (Problem::page_size = 0): [B, Hkv, capacity, Dk|Dv], written only at cache_len[b]
  // .. + n - 1. Paged (page_size > 0): pools of pages [num_pages, Hkv, page_size, Dk|Dv];
  // position pos of sequence b lives in page block_table[b][pos / page_size], slot
  // pos % page_size, and only the appended positions are written.
  TensorRef k_cache, v_cache;
  const std::int64_t* cache_len = nullptr;  // int64 [B]: positions already filled
  // Paged only (else null): int64 [B, capacity / page_size], dense row-major. Only the entries
  // of blocks below ceil((cache_len[b] + n) / page_size) are read; the others may hold anything.
  const std::int64_t* block_table = nullptr;
  TensorRef out, lse;           // [B, Hq, n, Dv] and [B, Hq, n] (lse optional), as in a forward
  TensorRef sinks;              // [Hq] in the storage dtype, present iff the problem has sinks
  TensorRef alibi;              // [Hq] ALiBi slopes in the storage dtype, present iff the problem has ALiBi
};

}  // namespace attnv
