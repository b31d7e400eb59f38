#pragma once
// The tile-level building blocks shared by the forward and backward tile loops: loading rows of
// strided views into the micro-kernels' layouts (microkernels.h), the logit rules (visibility,
// softcap, bias) on a tile of scores, and the NaN-safe variant of the pv micro-kernel.
// Templates on the accumulator type, header-only so both loops inline them.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "core/forward_params.h"
#include "core/microkernels.h"
#include "core/tensor_io.h"
#include "core/visibility.h"
#include "core/workspace.h"

namespace attnv::core {

// Loads rows [first, first + n) of a [B, H, T, D] view into buf [n x ld] in T, zero-padding
// columns [d, ld) so padded dot products and outputs stay exact.
template <class T>
void load_rows(const MicroKernels<T>& mk, const TensorRef& t, std::int64_t b, std::int64_t h,
               std::int64_t first, std::int64_t n, std::int64_t d, std::int64_t ld, T* buf) {
  for (std::int64_t r = 0; r < n; ++r) {
    T* row = buf + r * ld;
    load_row(mk, t, offset_of(t, b, h, first + r), t.stride[3], d, row);
    std::fill(row + d, row + ld, T(0));
  }
}

// Row `off` of view t read in place when it already holds what load_row would write (storage
// dtype T, unit stride, no padding to add), else null: the staging copy through row_buf was a
// tenth of the forward's time at D = 128 (memmove calls of 512 and 64 bytes per key).
template <class T>
const T* row_in_place(const TensorRef& t, std::int64_t off, std::int64_t d, std::int64_t d_pad) {
  constexpr DType own = sizeof(T) == sizeof(float) ? DType::f32 : DType::f64;
  if (t.dtype != own || t.stride[3] != 1 || d != d_pad) return nullptr;
  return static_cast<const T*>(t.data) + off;
}

// Loads rows [first, first + n) into 16-column panels (microkernels.h; panel stride ldp >= 16 n),
// zero-padded to d_pad columns (a multiple of kPanel). Rows are found through `pages` (contiguous
// or a paged cache: problem/cache_pages.h), one by one, so paging changes addresses, never arithmetic.
template <class T>
void load_panels(const MicroKernels<T>& mk, const TensorRef& t, const CachePages& pages, std::int64_t b,
                 std::int64_t h, std::int64_t first, int n, std::int64_t d, std::int64_t d_pad, std::int64_t ldp,
                 T* row_buf, T* panels) {
  for (int c = 0; c < n; ++c) {
    const std::int64_t off = pages.offset(t, b, h, first + c);
    const T* row = row_in_place<T>(t, off, d, d_pad);
    if (row == nullptr) {
      load_row(mk, t, off, t.stride[3], d, row_buf);
      std::fill(row_buf + d, row_buf + d_pad, T(0));
      row = row_buf;
    }
    for (std::int64_t k = 0; k < d_pad; k += kPanel) {
      T* to = panels + panel_index(c, k, ldp);
      std::memcpy(to, row + k, kPanel * sizeof(T));  // a fixed size: inlined moves, no call
    }
  }
}

// Loads K rows [first, first + n) transposed: kt[d * ldk + c]; zero for d >= dk and for
// c in [n, round_up(n, 16)), so every value the scores kernel reads is defined. row_buf holds
// kStagingRows rows of dk_pad (workspace.h). Rows found through `pages` as in load_panels.
template <class T>
void load_k_transposed(const MicroKernels<T>& mk, const TensorRef& t, const CachePages& pages, std::int64_t b,
                       std::int64_t h, std::int64_t first, int n, std::int64_t dk,
                       std::int64_t dk_pad, std::int64_t ldk, T* row_buf, T* kt) {
  const int n16 = static_cast<int>(round_up(n, 16));
  int c = 0;
  if (mk.transpose_keys != nullptr)  // 16 keys at a time: rows read in place or staged in row_buf
    for (; c < n; c += kStagingRows) {
      const T* rows[kStagingRows] = {};
      const int m = std::min(kStagingRows, n - c);
      for (int i = 0; i < m; ++i) {
        const std::int64_t off = pages.offset(t, b, h, first + c + i);
        rows[i] = row_in_place<T>(t, off, dk, dk);
        if (rows[i] == nullptr) {
          load_row(mk, t, off, t.stride[3], dk, row_buf + i * dk_pad);
          rows[i] = row_buf + i * dk_pad;
        }
      }
      mk.transpose_keys(rows, m, dk, kt + c, ldk);
    }
  for (; c < n; ++c) {
    const std::int64_t off = pages.offset(t, b, h, first + c);
    const T* row = row_in_place<T>(t, off, dk, dk);
    if (row == nullptr) {
      load_row(mk, t, off, t.stride[3], dk, row_buf);
      row = row_buf;
    }
    for (std::int64_t d = 0; d < dk; ++d) kt[d * ldk + c] = row[d];
  }
  for (std::int64_t d = 0; d < dk_pad; ++d) {
    const int from = d < dk ? n : 0;
    std::fill(kt + d * ldk + from, kt + d * ldk + n16, T(0));
  }
}

// Row `off` of a bf16 view as bf16 pairs in 32-bit words (MicroKernels::scores_bf16): word w
// holds the bits of dimensions 2w (low half) and 2w + 1, zero past d, for w < words. The words
// go into float storage by memcpy (the workspace's buffers are float; no value is ever read as
// a float), and are only ever moved by exact copies.
inline void load_bf16_pairs(const TensorRef& t, std::int64_t off, std::int64_t d, std::int64_t words, float* out) {
  const auto* x = static_cast<const std::uint16_t*>(t.data) + off;
  const std::int64_t s = t.stride[3];
  for (std::int64_t w = 0; w < words; ++w) {
    const std::uint32_t lo = 2 * w < d ? x[2 * w * s] : 0, hi = 2 * w + 1 < d ? x[(2 * w + 1) * s] : 0;
    const std::uint32_t word = lo | hi << 16;
    std::memcpy(out + w, &word, sizeof word);
  }
}

// Query rows [first, first + n) of a bf16 view as bf16 pairs, row r at buf + r * ld (ld >= words).
inline void load_rows_bf16_pairs(const TensorRef& t, std::int64_t b, std::int64_t h, std::int64_t first,
                                 std::int64_t n, std::int64_t d, std::int64_t words, std::int64_t ld, float* buf) {
  for (std::int64_t r = 0; r < n; ++r) load_bf16_pairs(t, offset_of(t, b, h, first + r), d, words, buf + r * ld);
}

// K rows [first, first + n) of a bf16 view as the transposed tile of bf16 pairs scores_bf16
// reads: word (w, c) at kt[w * ldk + c], zero for w >= ceil(dk / 2) (up to `words`) and for c in
// [n, round_up(n, 16)). A row with unit stride and even dk is transposed in place (its words
// are the pairs); others are packed into row_buf first (kStagingRows rows of >= words floats).
inline void load_k_bf16_pairs(const MicroKernels<float>& mk, const TensorRef& t, const CachePages& pages,
                              std::int64_t b, std::int64_t h, std::int64_t first, int n, std::int64_t dk,
                              std::int64_t words, std::int64_t ld_buf, std::int64_t ldk, float* row_buf, float* kt) {
  const std::int64_t used = (dk + 1) / 2;
  for (int c = 0; c < n; c += kStagingRows) {
    const float* rows[kStagingRows] = {};
    const int m = std::min(kStagingRows, n - c);
    for (int i = 0; i < m; ++i) {
      const std::int64_t off = pages.offset(t, b, h, first + c + i);
      if (t.stride[3] == 1 && dk % 2 == 0) {
        // The row's bytes read as words (the kernels load them with intrinsics, never as floats).
        rows[i] = reinterpret_cast<const float*>(static_cast<const std::uint16_t*>(t.data) + off);
      } else {
        load_bf16_pairs(t, off, dk, used, row_buf + i * ld_buf);
        rows[i] = row_buf + i * ld_buf;
      }
    }
    mk.transpose_keys(rows, m, used, kt + c, ldk);
  }
  const int n16 = static_cast<int>(round_up(n, 16));
  for (std::int64_t w = 0; w < words; ++w) std::fill(kt + w * ldk + (w < used ? n : 0), kt + w * ldk + n16, 0.0f);
}

// V rows [first, first + n) of a bf16 view as the pair panels pv_bf16 reads: row w of panel j
// (16 words at panels + j ldv + 16 w) = keys 2w and 2w + 1, columns 16 j .. 16 j + 15, zero past
// dv and for key n when n is odd. Rows with unit stride are read in place, others staged as bf16
// in row_buf (two rows of >= dv_pad / 2 floats each, which hold dv_pad bf16).
inline void load_v_bf16_pairs(const MicroKernels<float>& mk, const TensorRef& t, const CachePages& pages,
                              std::int64_t b, std::int64_t h, std::int64_t first, int n, std::int64_t dv,
                              std::int64_t dv_pad, std::int64_t ldv, float* row_buf, float* panels) {
  const auto row = [&](int c, int slot) -> const std::uint16_t* {
    const std::int64_t off = pages.offset(t, b, h, first + c);
    const auto* x = static_cast<const std::uint16_t*>(t.data) + off;
    if (t.stride[3] == 1) return x;
    float* buf = row_buf + slot * dv_pad;
    for (std::int64_t d = 0; d < dv; ++d) std::memcpy(reinterpret_cast<char*>(buf) + 2 * d, x + d * t.stride[3], 2);
    return reinterpret_cast<const std::uint16_t*>(buf);
  };
  auto* words = reinterpret_cast<std::uint32_t*>(panels);
  for (int c = 0; c < n; c += 2)
    mk.pack_values_bf16(row(c, 0), c + 1 < n ? row(c + 1, 1) : nullptr, dv, dv_pad, words + 16 * (c / 2), ldv);
}

// Whether the first n keys of a bf16 pair tile (load_v_bf16_pairs) are all finite: no half with
// an all-ones exponent.
inline bool all_finite_bf16_pairs(const float* panels, int n, std::int64_t dv_pad, std::int64_t ldv) {
  const std::int64_t pairs = (n + 1) / 2;
  for (std::int64_t d = 0; d < dv_pad; d += kPanel)
    for (std::int64_t i = 0; i < pairs * kPanel; ++i) {
      std::uint32_t w;
      std::memcpy(&w, panels + (d / kPanel) * ldv + i, sizeof w);
      if ((w & 0x7f80u) == 0x7f80u || (w & 0x7f800000u) == 0x7f800000u) return false;
    }
  return true;
}

// pv_bf16 (microkernels.h) emulated in scalar code, bit for bit, skipping keys of weight 0 so that
// a hidden key's NaN/inf V cannot reach the output, as pv_skipping_hidden does for pv: per lane
// (SDM) acc = ftz(fma(daz(p_odd), daz(v_odd), daz(acc))), then the even key likewise. A key of
// weight +0 adds +0 v = a zero of v's sign to daz(acc): that is daz(acc) unless daz(acc) is a zero,
// which stays -0 only if it was -0 and v's sign bit is set. Taken from v's bits as the instruction
// would for any finite v, so the emulation equals the kernel wherever both can run.
inline void pv_bf16_skipping_hidden(const float* p, std::int64_t ldp, int rows, const float* alpha, const float* v,
                                    std::int64_t ldv, int n, std::int64_t dv_pad, float* o, std::int64_t ldo) {
  const auto flush = [](float x) { return std::fpclassify(x) == FP_SUBNORMAL ? std::copysign(0.0f, x) : x; };
  const auto half = [](const float* at, int which) {
    std::uint32_t w;
    std::memcpy(&w, at, sizeof w);
    return bf16_bits_to_f32(static_cast<std::uint16_t>(which == 0 ? w : w >> 16));
  };
  const std::int64_t pairs = (n + 1) / 2;
  for (int r = 0; r < rows; ++r) {
    float* orow = o + r * ldo;
    for (std::int64_t d = 0; d < dv_pad; ++d) {
      float acc = orow[d] * alpha[r];
      for (std::int64_t w = 0; w < pairs; ++w)
        for (int which : {1, 0}) {
          const float pw = flush(half(p + r * ldp + w, which));
          const float vw = flush(half(v + (d / kPanel) * ldv + w * kPanel + d % kPanel, which));
          if (pw == 0) {
            acc = flush(acc);
            if (acc == 0) acc = std::signbit(acc) && std::signbit(vw) ? -0.0f : 0.0f;
            continue;
          }
          acc = flush(std::fma(pw, vw, flush(acc)));
        }
      orow[d] = acc;
    }
  }
}

// Whether the first n rows of a panel-major tile are all finite.
template <class T>
bool all_finite(const T* panels, int n, std::int64_t d_pad, std::int64_t ldp) {
  for (std::int64_t d = 0; d < d_pad; d += kPanel) {
    const T* x = panels + (d / kPanel) * ldp;
    for (std::int64_t i = 0; i < n * kPanel; ++i)
      if (!std::isfinite(x[i])) return false;
  }
  return true;
}

// Visibility, softcap and bias on a tile of scores s = fl(fl(q.k) * scale). Keys outside the
// row's interval become -inf (a fill: causal and window tiles need nothing else); inside it,
// the mask hides keys, then t = fl(c * fl(tanh(fl(s / c)))) (softcap) and fl(t + bias). Hidden
// keys become -inf whatever their score (a hidden key's K row may hold anything, NaN included).
// With `cap_deriv` (backward, softcap set) it also receives fl(1 - fl(th^2)), th = tanh(s / c),
// the softcap's derivative, for every visible key (hidden keys: 0).
// The rows belong to query head h of batch b: a mask or bias with its own batch or head extent
// (Problem::mask_dims, bias_dims) is read from that plane (broadcast_offset).
template <class T>
void apply_logit_rules(const ForwardParams& p, std::int64_t b, std::int64_t h, const KeyRange* ranges,
                       std::int64_t i0, int rows, std::int64_t j0, int n, T* s, std::int64_t lds,
                       T* cap_deriv = nullptr) {
  const T ninf = -std::numeric_limits<T>::infinity();
  const T cap = static_cast<T>(p.softcap);
  const TensorRef& mask = p.views.mask;
  const TensorRef& bias = p.views.bias;
  const bool per_element = p.has_mask || p.has_softcap || p.has_bias || p.has_alibi;
  // ALiBi: -m_h |j - p_i|, rounded as fl(t - fl(m_h * |j - p_i|)) (the distance is exact in T
  // below 2^24 keys for f32, 2^53 for f64).
  const T slope = p.has_alibi ? load_scalar<T>(p.views.alibi, h * p.views.alibi.stride[0]) : T(0);
  const std::int64_t shift = p.alignment == Alignment::top_left ? 0 : p.kv_len(b) - p.shape.Tq;
  for (int r = 0; r < rows; ++r) {
    const std::int64_t i = i0 + r;
    T* row = s + r * lds;
    const KeyRange kr = ranges[r];
    const int c_lo = kr.empty() ? n : static_cast<int>(std::clamp<std::int64_t>(kr.lo - j0, 0, n));
    const int c_hi = kr.empty() ? n : static_cast<int>(std::clamp<std::int64_t>(kr.hi - j0, c_lo, n));
    std::fill(row, row + c_lo, ninf);
    std::fill(row + c_hi, row + n, ninf);
    if (cap_deriv != nullptr) {
      std::fill(cap_deriv + r * lds, cap_deriv + r * lds + c_lo, T(0));
      std::fill(cap_deriv + r * lds + c_hi, cap_deriv + r * lds + n, T(0));
    }
    if (!per_element) continue;
    for (int c = c_lo; c < c_hi; ++c) {
      const std::int64_t j = j0 + c;
      if (p.has_mask &&
          static_cast<const std::uint8_t*>(mask.data)[broadcast_offset(mask, b, h, i, j)] == 0) {
        row[c] = ninf;
        if (cap_deriv != nullptr) cap_deriv[r * lds + c] = 0;
        continue;
      }
      T t = row[c];
      if (p.has_softcap) {
        const T th = static_cast<T>(std::tanh(t / cap));
        t = cap * th;
        if (cap_deriv != nullptr) cap_deriv[r * lds + c] = T(1) - th * th;
      }
      if (p.has_bias) {
        const T bv = load_scalar<T>(bias, broadcast_offset(bias, b, h, i, j));
        t = bv == ninf ? ninf : t + bv;
      }
      if (p.has_alibi && t != ninf) {
        const std::int64_t d = j - (i + shift);
        t = t - slope * static_cast<T>(d < 0 ? -d : d);
      }
      row[c] = t;
    }
  }
}

// O += P V for a tile whose V holds non-finite values: terms with weight 0 (hidden keys) are
// skipped so a hidden NaN/inf cannot reach the output (0 * inf = NaN). Every other term is
// rounded exactly as the active pv micro-kernel rounds it (fused or not), in the same order, so
// the output bits do not depend on what hidden keys hold. Only used on such rare tiles.
template <class T>
void pv_skipping_hidden(const T* p, std::int64_t ldp, int rows, const T* alpha, const T* v,
                        std::int64_t ldv, int n, std::int64_t dv_pad, T* o, std::int64_t ldo,
                        bool fused) {
  for (int r = 0; r < rows; ++r) {
    T* orow = o + r * ldo;
    for (std::int64_t d = 0; d < dv_pad; ++d) orow[d] *= alpha[r];
    for (int c = 0; c < n; ++c) {
      const T w = p[r * ldp + c];
      if (w == 0) continue;
      if (fused)
        for (std::int64_t d = 0; d < dv_pad; ++d) orow[d] = std::fma(w, v[panel_index(c, d, ldv)], orow[d]);
      else
        for (std::int64_t d = 0; d < dv_pad; ++d) orow[d] += w * v[panel_index(c, d, ldv)];
    }
  }
}

}  // namespace attnv::core
