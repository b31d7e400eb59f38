#include "core/split_kv.h"

#include <algorithm>
#include <limits>

#include "core/workspace.h"

namespace attnv::core {

SplitPlan plan_split(std::int64_t row_items, std::int64_t max_keys, std::int64_t forced) {
  if (forced < 0 || max_keys <= 0) return {};
  std::int64_t chunk = 0;
  if (forced > 0) {
    chunk = round_up(forced, kKeyBlock);
  } else {
    const std::int64_t want = (kSplitTargetItems + row_items - 1) / row_items;
    const std::int64_t splits = std::min(want, max_keys / kSplitMinKeys);
    if (splits <= 1) return {};
    chunk = round_up((max_keys + splits - 1) / splits, kKeyBlock);
  }
  const std::int64_t splits = (max_keys + chunk - 1) / chunk;
  if (splits <= 1) return {};
  return {chunk, splits};
}

template <class T>
void merge_partials(const MicroKernels<T>& mk, const Partial<T>* parts, int splits, int rows, std::int64_t dv_pad,
                    std::int64_t ldo, const SoftmaxRows<T>& st, T* o, T* scratch) {
  const T ninf = -std::numeric_limits<T>::infinity();
  for (int r = 0; r < rows; ++r) {
    T* orow = o + r * ldo;
    std::fill(orow, orow + dv_pad, T(0));
    T m = ninf;
    for (int s = 0; s < splits; ++s)
      if (parts[s].l[r] != 0) m = std::max(m, parts[s].m[r]);
    st.m[r] = m;
    st.l[r] = 0;
    if (m == ninf) continue;  // no chunk saw a visible key: finish gives O = 0, L = -inf
    for (int s = 0; s < splits; ++s) scratch[s] = parts[s].l[r] != 0 ? parts[s].m[r] - m : ninf;
    mk.exp_inplace(scratch, splits);
    T l = 0;
    for (int s = 0; s < splits; ++s) {
      if (parts[s].l[r] == 0) continue;
      const T a = scratch[s];
      l += a * parts[s].l[r];
      const T* acc = parts[s].acc + r * ldo;
      for (std::int64_t d = 0; d < dv_pad; ++d) orow[d] += a * acc[d];
    }
    st.l[r] = l;
  }
}

template void merge_partials<float>(const MicroKernels<float>&, const Partial<float>*, int, int, std::int64_t,
                                    std::int64_t, const SoftmaxRows<float>&, float*, float*);
template void merge_partials<double>(const MicroKernels<double>&, const Partial<double>*, int, int, std::int64_t,
                                     std::int64_t, const SoftmaxRows<double>&, double*, double*);

}  // namespace attnv::core
