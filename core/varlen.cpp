#include "core/varlen.h"

#include <algorithm>
#include <cstddef>

namespace attnv::core {
namespace {

// t moved `rows` positions along its T dimension (dim 2 of [B,H,T,D] and of LSE [B,H,T]), and
// that dimension's extent set to `extent`.
TensorRef rows_from(TensorRef t, std::int64_t rows, std::int64_t extent) {
  if (!t.present()) return t;
  t.data = static_cast<std::byte*>(t.data) + rows * t.stride[2] * dtype_bytes(t.dtype);
  t.shape[2] = extent;
  return t;
}

}  // namespace

void for_each_sequence(const Problem& p, const KernelViews& views,
                       const std::function<void(const Problem&, const KernelViews&)>& run) {
  const std::int64_t* cu_q = views.cu_seqlens_q;
  const std::int64_t* cu_k = views.cu_seqlens_k;
  for (std::int64_t s = 0; s < p.varlen_sequences; ++s) {
    const std::int64_t len_q = cu_q[s + 1] - cu_q[s], len_k = cu_k[s + 1] - cu_k[s];
    if (len_q == 0) continue;  // no rows: nothing to write
    Problem sub = p;
    sub.varlen_sequences = 0;
    sub.shape.Tq = len_q;
    sub.shape.Tk = std::max<std::int64_t>(len_k, 1);
    sub.has_kv_len = true;
    const std::int64_t kv_len = len_k;
    const std::int64_t k0 = len_k > 0 ? cu_k[s] : 0;
    KernelViews v = views;
    v.cu_seqlens_q = v.cu_seqlens_k = nullptr;
    v.kv_len = &kv_len;
    v.q = rows_from(views.q, cu_q[s], len_q);
    v.out = rows_from(views.out, cu_q[s], len_q);
    v.lse = rows_from(views.lse, cu_q[s], len_q);
    v.k = rows_from(views.k, k0, sub.shape.Tk);
    v.v = rows_from(views.v, k0, sub.shape.Tk);
    run(sub, v);
  }
}

}  // namespace attnv::core
