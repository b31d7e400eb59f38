#include "core/varlen.h"

#include <algorithm>
#include <cstddef>
#include <vector>

#include "problem/buffers.h"

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

// The keys sequence s uses: kv_len[s] with per-sequence key lengths (FlashAttention's
// seqused_k), else all of its own. Its call aligns bottom-right to these, as the spec asks.
std::int64_t used_keys(const Problem& p, const KernelViews& views, std::int64_t s) {
  return p.has_kv_len ? views.kv_len[s] : views.cu_seqlens_k[s + 1] - views.cu_seqlens_k[s];
}

// Sequence s as a call of its own (varlen.h); kv_len must outlive the views.
struct SequenceView {
  std::int64_t len_q, len_k;
  Problem problem;
  KernelViews views;
};

SequenceView sequence(const Problem& p, const KernelViews& views, std::int64_t s, const std::int64_t& kv_len) {
  const std::int64_t* cu_q = views.cu_seqlens_q;
  const std::int64_t* cu_k = views.cu_seqlens_k;
  SequenceView q{cu_q[s + 1] - cu_q[s], cu_k[s + 1] - cu_k[s], p, views};
  q.problem.varlen_sequences = 0;
  q.problem.shape.Tq = q.len_q;
  q.problem.shape.Tk = std::max<std::int64_t>(q.len_k, 1);
  q.problem.has_kv_len = true;
  KernelViews& v = q.views;
  v.cu_seqlens_q = v.cu_seqlens_k = nullptr;
  v.kv_len = &kv_len;
  const std::int64_t q0 = cu_q[s], k0 = q.len_k > 0 ? cu_k[s] : 0, tk = q.problem.shape.Tk;
  for (TensorRef* t : {&v.q, &v.out, &v.lse, &v.dout, &v.dq}) *t = rows_from(*t, q0, q.len_q);
  for (TensorRef* t : {&v.k, &v.v, &v.dk, &v.dv}) *t = rows_from(*t, k0, tk);
  return q;
}

// Rows [first, first + n) of every head of a [1, H, T, D] view set to +0.
void zero_rows(const TensorRef& t, std::int64_t first, std::int64_t n) {
  for (std::int64_t h = 0; h < t.shape[1]; ++h)
    for (std::int64_t i = first; i < first + n; ++i)
      for (std::int64_t d = 0; d < t.shape[3]; ++d) store(t, {0, h, i, d}, 0.0);
}

template <class T>
void backward_sequences(const Problem& p, const KernelViews& views, const SequenceCall& run, DType acc_dtype) {
  const std::int64_t Hq = p.shape.Hq;
  std::vector<T> share(static_cast<std::size_t>(Hq)), dsinks(static_cast<std::size_t>(Hq), T(0));
  TensorRef share_view;
  share_view.data = share.data();
  share_view.dtype = acc_dtype;
  share_view.rank = 1;
  share_view.shape = {Hq, 0, 0, 0};
  share_view.stride = {1, 0, 0, 0};
  for (std::int64_t s = 0; s < p.varlen_sequences; ++s) {
    const std::int64_t kv_len = used_keys(p, views, s);
    SequenceView q = sequence(p, views, s, kv_len);
    if (q.len_q == 0) {
      zero_rows(views.dk, views.cu_seqlens_k[s], q.len_k);
      zero_rows(views.dv, views.cu_seqlens_k[s], q.len_k);
      continue;
    }
    if (q.len_k == 0) {
      zero_rows(views.dq, views.cu_seqlens_q[s], q.len_q);
      continue;
    }
    if (p.has_sinks) q.views.dsinks = share_view;
    run(q.problem, q.views);
    if (p.has_sinks)
      for (std::size_t h = 0; h < share.size(); ++h) dsinks[h] += share[h];
  }
  if (p.has_sinks)
    for (std::int64_t h = 0; h < Hq; ++h) store(views.dsinks, {h, 0, 0, 0}, static_cast<double>(dsinks[static_cast<std::size_t>(h)]));
}

}  // namespace

void forward_by_sequence(const Problem& p, const KernelViews& views, const SequenceCall& run) {
  for (std::int64_t s = 0; s < p.varlen_sequences; ++s) {
    const std::int64_t kv_len = used_keys(p, views, s);
    const SequenceView q = sequence(p, views, s, kv_len);
    if (q.len_q > 0) run(q.problem, q.views);  // no rows: nothing to write
  }
}

void backward_by_sequence(const Problem& p, const KernelViews& views, const SequenceCall& run) {
  if (p.dtype == DType::f64)
    backward_sequences<double>(p, views, run, DType::f64);
  else
    backward_sequences<float>(p, views, run, DType::f32);
}

}  // namespace attnv::core
