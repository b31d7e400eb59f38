#include "core/layer.h"

#include <list>
#include <string>
#include <utility>

#include <Eigen/Core>

#include "core/backward.h"
#include "core/core_kernel.h"
#include "problem/error.h"
#include "problem/validate.h"

namespace attnv::core {
namespace {

using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using CMap = Eigen::Map<const Mat>;
using MMap = Eigen::Map<Mat>;
using RowVec = Eigen::Matrix<float, 1, Eigen::Dynamic>;

void require(bool ok, const std::string& what) {
  if (!ok) throw InputError("layer: " + what);
}

void check_call(const LayerConfig& c, const LayerWeights& w, const LayerInputs& in) {
  require(c.d_model > 0 && c.Dk > 0 && c.Dv > 0 && c.Hq > 0 && c.Hkv > 0,
          "d_model, Hq, Hkv, Dk, Dv must be positive");
  require(c.Hq % c.Hkv == 0, "Hq (" + std::to_string(c.Hq) + ") is not a multiple of Hkv (" +
                                 std::to_string(c.Hkv) + ")");
  require(in.B > 0 && in.T > 0 && in.keys() > 0, "B, T and Tkv must be positive");
  require(c.dtype == DType::f32 || c.dtype == DType::f16 || c.dtype == DType::bf16,
          "the attention dtype must be f32, f16 or bf16, got " + std::string(dtype_name(c.dtype)));
  require(in.x != nullptr, "no X");
  require(w.wq && w.wk && w.wv && w.wo, "a projection weight (Wq, Wk, Wv or Wo) is missing");
  if (c.has_bias) require(w.bq && w.bk && w.bv && w.bo, "has_bias but a bias (bq, bk, bv or bo) is missing");
}

// [B, T, H*D] buffer seen as [B, H, T, D] (the BTHD layout of SPEC's head split).
TensorRef heads_view(const float* data, std::int64_t B, std::int64_t T, std::int64_t H, std::int64_t D) {
  TensorRef t;
  t.data = const_cast<float*>(data);  // the core writes only through out/dq/dk/dv views
  t.dtype = DType::f32;
  t.rank = 4;
  t.shape = {B, H, T, D};
  t.stride = {T * H * D, D, H * D, 1};
  return t;
}

// The attention's tensors in its storage dtype. f32: the layer's own float vectors. f16/bf16:
// bit patterns next to the float vectors, which hold the same values exactly (an input is
// rounded once, in place, so the trace holds what the core read; an output is copied back).
class AttnStore {
 public:
  explicit AttnStore(DType t) : t_(t) {}
  void round(std::vector<float>& v) const {
    if (t_ != DType::f32)
      for (float& x : v) x = static_cast<float>(round_to(t_, x));
  }
  TensorRef in(std::vector<float>& v, std::int64_t B, std::int64_t T, std::int64_t H, std::int64_t D) {
    round(v);
    return in(static_cast<const std::vector<float>&>(v), B, T, H, D);
  }
  // Already representable (a trace): converted, never changed.
  TensorRef in(const std::vector<float>& v, std::int64_t B, std::int64_t T, std::int64_t H, std::int64_t D) {
    TensorRef r = heads_view(v.data(), B, T, H, D);
    if (t_ == DType::f32) return r;
    r.data = bits_of(v.data(), v.size());
    r.dtype = t_;
    return r;
  }
  TensorRef out(std::vector<float>& v, std::int64_t B, std::int64_t T, std::int64_t H, std::int64_t D) {
    TensorRef r = heads_view(v.data(), B, T, H, D);
    if (t_ == DType::f32) return r;
    r.data = bits_of(v.data(), v.size());
    r.dtype = t_;
    outs_.push_back({&v, static_cast<std::uint16_t*>(r.data)});
    return r;
  }
  // A dense [rows, cols] f32 matrix (the attention bias) in the dtype, rounded.
  TensorRef matrix(const float* data, std::int64_t rows, std::int64_t cols) {
    TensorRef r;
    r.rank = 2;
    r.shape = {rows, cols, 0, 0};
    r.stride = dense_strides(r.shape, 2);
    r.dtype = t_;
    if (t_ == DType::f32) {
      r.data = const_cast<float*>(data);
    } else {
      std::vector<float> rounded(data, data + rows * cols);
      for (float& x : rounded) x = static_cast<float>(round_to(t_, x));
      r.data = bits_of(rounded.data(), rounded.size());
    }
    return r;
  }
  void collect() const {
    for (const auto& [v, bits] : outs_)
      for (std::size_t i = 0; i < v->size(); ++i)
        (*v)[i] = static_cast<float>(t_ == DType::f16 ? f16_value(bits[i]) : bf16_value(bits[i]));
  }

 private:
  std::uint16_t* bits_of(const float* v, std::size_t n) {
    bufs_.emplace_back(n);
    std::vector<std::uint16_t>& b = bufs_.back();
    for (std::size_t i = 0; i < n; ++i) b[i] = t_ == DType::f16 ? f16_bits(v[i]) : bf16_bits(v[i]);
    return b.data();
  }
  DType t_;
  std::list<std::vector<std::uint16_t>> bufs_;  // stable addresses
  std::vector<std::pair<std::vector<float>*, std::uint16_t*>> outs_;
};

Problem attention_problem(const LayerConfig& c, const LayerInputs& in) {
  Problem p = in.attention;
  p.shape = Shape{in.B, c.Hq, c.Hkv, in.T, in.keys(), c.Dk, c.Dv};
  p.dtype = c.dtype;
  return p;
}

// q, k, v, out, lse, mask, bias, kv_len of the call (out: written by the forward only).
KernelViews attention_views(const LayerTrace& t, const LayerInputs& in, AttnStore& store, std::vector<float>* out) {
  const Shape& s = t.problem.shape;
  KernelViews v;
  v.q = store.in(t.q, s.B, s.Tq, s.Hq, s.Dk);
  v.k = store.in(t.k, s.B, s.Tk, s.Hkv, s.Dk);
  v.v = store.in(t.v, s.B, s.Tk, s.Hkv, s.Dv);
  v.out = out != nullptr ? store.out(*out, s.B, s.Tq, s.Hq, s.Dv) : store.in(t.concat, s.B, s.Tq, s.Hq, s.Dv);
  v.lse.data = const_cast<float*>(t.lse.data());
  v.lse.dtype = DType::f32;
  v.lse.rank = 3;
  v.lse.shape = {s.B, s.Hq, s.Tq, 0};
  v.lse.stride = dense_strides(v.lse.shape, 3);
  const std::array<std::int64_t, 4> mshape{s.Tq, s.Tk, 0, 0};
  if (t.problem.has_mask) {
    require(in.mask != nullptr, "the attention problem has a mask but no mask was given");
    v.mask.data = const_cast<std::uint8_t*>(in.mask);
    v.mask.dtype = DType::f32;  // ignored for masks (uint8 whatever it says)
    v.mask.rank = 2;
    v.mask.shape = mshape;
    v.mask.stride = dense_strides(mshape, 2);
  }
  if (t.problem.has_bias) {
    require(in.attn_bias != nullptr, "the attention problem has a bias but no attn_bias was given");
    v.bias = store.matrix(in.attn_bias, s.Tq, s.Tk);
  }
  if (t.problem.has_kv_len) {
    require(in.kv_len != nullptr, "the attention problem has kv_len but none was given");
    v.kv_len = in.kv_len;
  }
  return v;
}

void require_views(const Problem& p, const KernelViews& v) {
  const std::vector<std::string> errors = check_views(p, v);
  if (errors.empty()) return;
  std::string msg = "layer: invalid attention call:";
  for (const auto& e : errors) msg += "\n  " + e;
  throw InputError(msg);
}

// out = in W (+ b): rows x cols. Eigen's product accumulates each element in f32 (any order);
// the bias is one more rounded addition (properties/layer/layer_check.cpp bounds both).
// row_local: each row as its own vector-matrix product, so a row's result depends on that row
// alone (not on its position or the other rows; GEMM's blocking does not promise that).
void project(const float* in, std::int64_t rows, std::int64_t d_in, const float* w, std::int64_t d_out,
             const float* bias, std::vector<float>& out, bool row_local) {
  out.assign(static_cast<std::size_t>(rows * d_out), 0.0f);
  MMap o(out.data(), rows, d_out);
  const CMap x(in, rows, d_in), wm(w, d_in, d_out);
  if (row_local) {
    for (std::int64_t r = 0; r < rows; ++r) o.row(r).noalias() = x.row(r) * wm;
  } else {
    o.noalias() = x * wm;
  }
  if (bias != nullptr) o.rowwise() += Eigen::Map<const RowVec>(bias, d_out);
}

}  // namespace

LayerTrace layer_forward(const LayerConfig& c, const LayerWeights& w, const LayerInputs& in,
                         const LayerOptions& opt) {
  check_call(c, w, in);
  LayerTrace t;
  t.problem = attention_problem(c, in);
  {
    const std::vector<std::string> errors = check_problem(t.problem);
    if (!errors.empty()) throw InputError("layer: invalid attention problem: " + errors.front());
  }
  const std::int64_t B = in.B, T = in.T, Tk = in.keys();
  const float* xkv = in.self() ? in.x : in.xkv;
  const bool bias = c.has_bias;
  project(in.x, B * T, c.d_model, w.wq, c.Hq * c.Dk, bias ? w.bq : nullptr, t.q, opt.row_local);
  project(xkv, B * Tk, c.d_model, w.wk, c.Hkv * c.Dk, bias ? w.bk : nullptr, t.k, opt.row_local);
  project(xkv, B * Tk, c.d_model, w.wv, c.Hkv * c.Dv, bias ? w.bv : nullptr, t.v, opt.row_local);

  t.concat.assign(static_cast<std::size_t>(B * T * c.Hq * c.Dv), 0.0f);
  t.lse.assign(static_cast<std::size_t>(B * c.Hq * T), 0.0f);
  AttnStore store(c.dtype);
  // Q, K, V rounded to the attention dtype in place (f32: unchanged): the trace holds what the
  // core read.
  for (auto* v : {&t.q, &t.k, &t.v}) store.round(*v);
  KernelViews views = attention_views(t, in, store, &t.concat);
  if (opt.plant == LayerPlant::head_stride) views.q.stride = dense_strides(views.q.shape, 4);
  require_views(t.problem, views);
  forward(make_forward_params(t.problem, views), opt.attention);
  store.collect();

  const float* bo = bias && opt.plant != LayerPlant::missing_bias ? w.bo : nullptr;
  if (opt.plant == LayerPlant::transposed_wo) {
    require(c.Hq * c.Dv == c.d_model, "transposed_wo plant needs Hq*Dv == d_model");
    const Mat wo_t = CMap(w.wo, c.Hq * c.Dv, c.d_model).transpose();
    project(t.concat.data(), B * T, c.Hq * c.Dv, wo_t.data(), c.d_model, bo, t.y, opt.row_local);
  } else {
    project(t.concat.data(), B * T, c.Hq * c.Dv, w.wo, c.d_model, bo, t.y, opt.row_local);
  }
  return t;
}

LayerGrads layer_backward(const LayerConfig& c, const LayerWeights& w, const LayerInputs& in,
                          const LayerTrace& fwd, const float* dy, const LayerOptions& opt) {
  check_call(c, w, in);
  require(dy != nullptr, "no dY");
  require(fwd.problem == attention_problem(c, in) &&
              fwd.q.size() == static_cast<std::size_t>(in.B * in.T * c.Hq * c.Dk),
          "the forward trace does not belong to this call");
  const std::int64_t B = in.B, T = in.T, Tk = in.keys();
  const std::int64_t dm = c.d_model, nq = c.Hq * c.Dk, nk = c.Hkv * c.Dk, nv = c.Hkv * c.Dv,
                     no = c.Hq * c.Dv;
  const float* xkv = in.self() ? in.x : in.xkv;
  LayerGrads g;
  const CMap dY(dy, B * T, dm);

  // Output projection: dWo = concat^T dY, dbo = column sums of dY, dconcat = dY Wo^T.
  g.dwo.assign(static_cast<std::size_t>(no * dm), 0.0f);
  MMap(g.dwo.data(), no, dm).noalias() = CMap(fwd.concat.data(), B * T, no).transpose() * dY;
  g.dconcat.assign(static_cast<std::size_t>(B * T * no), 0.0f);
  MMap(g.dconcat.data(), B * T, no).noalias() = dY * CMap(w.wo, no, dm).transpose();

  // Attention: the core's FA2 backward on the same strided views, dO = dconcat.
  g.dq.assign(fwd.q.size(), 0.0f);
  g.dk.assign(fwd.k.size(), 0.0f);
  g.dv.assign(fwd.v.size(), 0.0f);
  AttnStore store(c.dtype);
  KernelViews views = attention_views(fwd, in, store, nullptr);
  const Shape& s = fwd.problem.shape;
  views.dout = store.in(g.dconcat, B, T, s.Hq, s.Dv);  // dO rounded to the attention dtype
  views.dq = store.out(g.dq, B, T, s.Hq, s.Dk);
  views.dk = store.out(g.dk, B, Tk, s.Hkv, s.Dk);
  views.dv = store.out(g.dv, B, Tk, s.Hkv, s.Dv);
  require_views(fwd.problem, views);
  backward(make_forward_params(fwd.problem, views), opt.attention);
  store.collect();

  // Input projections: dW = X^T dZ, db = column sums of dZ, dX = sum dZ W^T.
  const CMap X(in.x, B * T, dm), Xkv(xkv, B * Tk, dm);
  const CMap dQ(g.dq.data(), B * T, nq), dK(g.dk.data(), B * Tk, nk), dV(g.dv.data(), B * Tk, nv);
  auto weight_grad = [](const CMap& x, const CMap& dz, std::vector<float>& out) {
    out.assign(static_cast<std::size_t>(x.cols() * dz.cols()), 0.0f);
    MMap(out.data(), x.cols(), dz.cols()).noalias() = x.transpose() * dz;
  };
  weight_grad(X, dQ, g.dwq);
  weight_grad(Xkv, dK, g.dwk);
  weight_grad(Xkv, dV, g.dwv);
  if (c.has_bias) {
    auto col_sums = [](const auto& m, std::vector<float>& out) {
      out.resize(static_cast<std::size_t>(m.cols()));
      Eigen::Map<RowVec>(out.data(), m.cols()) = m.colwise().sum();
    };
    col_sums(dQ, g.dbq);
    col_sums(dK, g.dbk);
    col_sums(dV, g.dbv);
    col_sums(dY, g.dbo);
  }
  g.dx.assign(static_cast<std::size_t>(B * T * dm), 0.0f);
  MMap dX(g.dx.data(), B * T, dm);
  dX.noalias() = dQ * CMap(w.wq, dm, nq).transpose();
  std::vector<float>& dkv_target = in.self() ? g.dx : g.dxkv;
  if (!in.self()) dkv_target.assign(static_cast<std::size_t>(B * Tk * dm), 0.0f);
  MMap dXkv(dkv_target.data(), B * Tk, dm);
  dXkv.noalias() += dK * CMap(w.wk, dm, nk).transpose();
  dXkv.noalias() += dV * CMap(w.wv, dm, nv).transpose();
  return g;
}

PrecisionModel layer_attention_precision(DType t) { return CoreKernel().precision(t); }

std::int64_t layer_parameter_count(const LayerConfig& c) {
  const std::int64_t widths = c.Hq * c.Dk + c.Hkv * c.Dk + c.Hkv * c.Dv;
  std::int64_t count = c.d_model * widths + c.Hq * c.Dv * c.d_model;
  if (c.has_bias) count += widths + c.d_model;
  return count;
}

std::int64_t kv_cache_bytes_per_layer(std::int64_t B, std::int64_t T, std::int64_t Hkv, std::int64_t Dh,
                                      DType dtype) {
  return 2 * B * T * Hkv * Dh * static_cast<std::int64_t>(dtype_bytes(dtype));
}

}  // namespace attnv::core
