#pragma once
// The online-softmax state of a block of query rows (FlashAttention-2), in the exact structure
// the error bound covers (reference/bound/BOUND.md section 0):
//   per key tile:  m_new = max(m_old, max_j t_j);  alpha = fl(exp(fl(m_old - m_new)));
//                  e_j = fl(exp(fl(t_j - m_new)));  l = alpha l + sum_j e_j;
//                  acc = alpha acc + sum_j e_j v_j   (the pv micro-kernel, P kept in T)
//   at the end:    O = fl(acc / l);  L = fl(m + fl(log l)).
// A row that has seen no visible key yet has m = -inf: its weights and alpha use the reference
// point 0 instead, so exp(-inf - 0) = 0 keeps l = 0 and acc = 0 without ever forming -inf - -inf.
// A row that ends with l = 0 saw no visible key: O = 0, L = -inf (SPEC), never NaN.
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/microkernels.h"

namespace attnv::core {

template <class T>
struct SoftmaxRows {
  T* m;      // running max (-inf: nothing visible yet)
  T* l;      // running sum of weights relative to m
  T* alpha;  // this tile's rescale factor per row (input to the pv micro-kernel)
  T* tile_sum;
};

template <class T>
void softmax_rows_init(const SoftmaxRows<T>& st, int rows) {
  for (int r = 0; r < rows; ++r) {
    st.m[r] = -std::numeric_limits<T>::infinity();
    st.l[r] = 0;
  }
}

// An attention sink z (docs/semantics.md) starts every row as a first tile of one key of value
// 0: m = z and l = exp(z - z) = 1, the accumulator untouched. It is then in the running max, as
// the bound assumes (BOUND.md section 3, "Attention sinks"), and joins l exactly once. A row that
// sees no key keeps l = 1 and finishes with O = 0, L = z.
template <class T>
void softmax_rows_init_sink(const SoftmaxRows<T>& st, int rows, T z) {
  for (int r = 0; r < rows; ++r) {
    st.m[r] = z;
    st.l[r] = 1;
  }
}

// The same with a sink per row (decode stacks the G query heads of a KV head in one block).
template <class T>
void softmax_rows_init_sinks(const SoftmaxRows<T>& st, int rows, const T* z) {
  for (int r = 0; r < rows; ++r) {
    st.m[r] = z[r];
    st.l[r] = 1;
  }
}

// s [rows x lds] holds the tile's logits t (-inf where hidden) for keys [0, n); on return it
// holds the weights e and st.alpha the factors the accumulator must be rescaled by.
template <class T>
void softmax_rows_update(const MicroKernels<T>& mk, const SoftmaxRows<T>& st, T* s,
                         std::int64_t lds, int rows, int n) {
  const T ninf = -std::numeric_limits<T>::infinity();
  for (int r = 0; r < rows; ++r) {
    T* row = s + r * lds;
    const T tile_max = mk.row_max(row, n);
    const T m_new = tile_max > st.m[r] ? tile_max : st.m[r];
    const T m_use = m_new == ninf ? T(0) : m_new;
    st.alpha[r] = st.m[r] - m_use;  // -inf while nothing was visible: alpha = 0
    st.m[r] = m_new;
    st.tile_sum[r] = m_use;  // the reference point, replaced by the row's sum just below
  }
  exp_sum_rows(mk, s, lds, rows, n, st.tile_sum, st.tile_sum);
  mk.exp_inplace(st.alpha, rows);
  for (int r = 0; r < rows; ++r) st.l[r] = st.alpha[r] * st.l[r] + st.tile_sum[r];
}

// O = acc / l in place (d < dv), LSE per row; rows with l == 0 give O = 0 and LSE = -inf.
template <class T>
void softmax_rows_finish(const SoftmaxRows<T>& st, int rows, T* o, std::int64_t ldo,
                         std::int64_t dv, T* lse) {
  for (int r = 0; r < rows; ++r) {
    T* orow = o + r * ldo;
    if (st.l[r] == 0) {
      for (std::int64_t d = 0; d < dv; ++d) orow[d] = 0;
      lse[r] = -std::numeric_limits<T>::infinity();
      continue;
    }
    for (std::int64_t d = 0; d < dv; ++d) orow[d] = orow[d] / st.l[r];
    lse[r] = st.m[r] + std::log(st.l[r]);
  }
}

}  // namespace attnv::core
