#pragma once
// Split-KV (FlashDecoding) for decode: a decode step has one query row per head, so its
// (batch, KV head) items are too few to feed the threads while each streams a long cache. The
// visible keys are then cut into chunks run as separate items; each leaves a partial online-
// softmax state (m, l, unnormalised acc) and merge_partials combines them:
//   M = max_s m_s,  alpha_s = fl(exp(fl(m_s - M))),  l = sum_s alpha_s l_s,  acc = sum_s alpha_s acc_s
// (s ascending), then O = acc / l and L = M + log l as in the forward (online_softmax.h).
// Why the error bound still covers it (reference/bound/BOUND.md section 0-3): a key's weight
// gets one more rescale factor alpha_s, whose argument telescopes with the chunk's own rescales
// to t_j - M exactly as in the sequential online softmax; a chunk of C keys has at most C/64
// tiles, so a weight undergoes at most C/64 + 1 <= ceil(Tk/64) = nb rescales (a split happens
// only when the keys exceed one chunk); the sums only regroup the additions. Normalised partials
// (O_s, LSE_s) would add a division and a multiplication per term that the bound does not count.
//
// The split is chosen from the problem alone (never the thread count): same bits for any thread
// count.
#include <cstdint>

#include "core/microkernels.h"
#include "core/online_softmax.h"

namespace attnv::core {

struct SplitPlan {
  std::int64_t chunk = 0;   // keys per chunk, a multiple of kKeyBlock (0: no split)
  std::int64_t splits = 1;  // chunks per row block: chunk s covers keys [s chunk, (s + 1) chunk)
};

// Below kSplitMinKeys keys per chunk the merge costs more than the parallelism gains; splitting
// aims at kSplitTargetItems work items (enough for any core count this runs on, few enough that
// partials stay small). `forced` is ForwardOptions::decode_split_keys (0 auto, < 0 never).
inline constexpr std::int64_t kSplitMinKeys = 512;
inline constexpr std::int64_t kSplitTargetItems = 64;
SplitPlan plan_split(std::int64_t row_items, std::int64_t max_keys, std::int64_t forced);

// One chunk's partial state for a block of rows: m and l per row, acc [rows x ldo].
template <class T>
struct Partial {
  T* m;
  T* l;
  T* acc;
};

// Merges `splits` partials (chunk order) of `rows` rows into st.m, st.l and o [rows x ldo] (dv_pad
// columns), ready for softmax_rows_finish. Partials with l = 0 (no visible key in the chunk)
// contribute nothing. `scratch` holds `splits` values.
template <class T>
void merge_partials(const MicroKernels<T>& mk, const Partial<T>* parts, int splits, int rows, std::int64_t dv_pad,
                    std::int64_t ldo, const SoftmaxRows<T>& st, T* o, T* scratch);

}  // namespace attnv::core
