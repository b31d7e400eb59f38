#include "properties/layer/layer_check.h"

#include <cmath>
#include <limits>
#include <sstream>

#include "properties/layer/dropout_check.h"
#include "reference/bound/bound.h"
#include "reference/fast/fast.h"

namespace attnv::layer {
namespace {

double gamma(std::int64_t n, double u) {
  const double nu = static_cast<double>(n) * u;
  return nu < 1 ? nu / (1 - nu) : std::numeric_limits<double>::infinity();
}

// TwoSum (Knuth): s + e == a + b exactly.
void two_sum(double a, double b, double& s, double& e) {
  s = a + b;
  const double bb = s - a;
  e = (a - (s - bb)) + (b - bb);
}

double add_element(StageResult& r, double out, double exact, double b, DType out_dtype) {
  ++r.elements;
  const double thr = bound::threshold(out, exact, b, out_dtype);
  const bool ok = bound::accept(out, exact, b, out_dtype);
  const double ratio = !std::isfinite(out) ? std::numeric_limits<double>::infinity()
                       : thr > 0          ? std::abs(out - exact) / thr
                       : out == exact     ? 0.0
                                          : std::numeric_limits<double>::infinity();
  if (!ok) ++r.failures;
  if (!(ratio <= r.worst_ratio)) {
    r.worst_ratio = ratio;
    r.worst_index = r.elements - 1;
  }
  return thr;
}

// [B, T, H*D] (layer layout) -> dense [B, H, T, D] (Case layout), SPEC's head split.
std::vector<double> split_heads(const std::vector<float>& x, std::int64_t B, std::int64_t T, std::int64_t H,
                                std::int64_t D) {
  std::vector<double> out(x.size());
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t t = 0; t < T; ++t)
      for (std::int64_t h = 0; h < H; ++h)
        for (std::int64_t d = 0; d < D; ++d)
          out[static_cast<std::size_t>(((b * H + h) * T + t) * D + d)] =
              x[static_cast<std::size_t>((b * T + t) * H * D + h * D + d)];
  return out;
}

void add_attention(LayerCheck& check, const std::string& prefix, const bound::Comparison& cmp) {
  for (const bound::TensorReport& t : cmp.tensors) {
    StageResult r;
    r.name = prefix + t.name;
    r.elements = t.elements;
    r.failures = t.failures;
    r.worst_ratio = t.worst_ratio;
    r.worst_index = t.worst_index;
    check.stages.push_back(r);
  }
}

MatFactor mat(const float* data, std::int64_t rows, std::int64_t cols) { return {data, rows, cols, false}; }
MatFactor mat_t(const float* data, std::int64_t rows, std::int64_t cols) { return {data, rows, cols, true}; }

// A matmul stage on a trace or gradient vector: a vector of the wrong size fails every element
// (never read past its end).
StageResult matmul_stage(const std::string& name, const std::vector<MatTerm>& terms, const float* bias,
                         const std::vector<float>& got, std::int64_t rows, std::int64_t cols,
                         DType out_dtype = DType::f32) {
  if (got.size() != static_cast<std::size_t>(rows * cols))
    return StageResult{name, rows * cols, rows * cols, std::numeric_limits<double>::infinity(), -1};
  return check_matmul(name, terms, bias, got.data(), rows, cols, nullptr, nullptr, out_dtype);
}

// The trace or gradient vectors a stage reads as inputs must have their sizes too.
bool sized(const std::vector<float>& v, std::int64_t n) { return v.size() == static_cast<std::size_t>(n); }

}  // namespace

bool LayerCheck::ok() const {
  for (const auto& s : stages)
    if (!s.ok()) return false;
  return !stages.empty();
}

double LayerCheck::worst_ratio() const {
  double w = 0;
  for (const auto& s : stages) w = std::max(w, s.worst_ratio);
  return w;
}

std::string LayerCheck::summary() const {
  std::ostringstream o;
  for (const auto& s : stages)
    o << s.name << ": " << s.elements << " elements, " << s.failures << " failures, worst ratio "
      << s.worst_ratio << " (index " << s.worst_index << ")\n";
  return o.str();
}

const StageResult* LayerCheck::stage(const std::string& name) const {
  for (const auto& s : stages)
    if (s.name == name) return &s;
  return nullptr;
}

StageResult check_matmul(const std::string& name, const std::vector<MatTerm>& terms, const float* bias,
                         const float* got, std::int64_t rows, std::int64_t cols, std::vector<double>* exact_out,
                         std::vector<double>* threshold_out, DType out_dtype) {
  StageResult r;
  if (exact_out) exact_out->clear();
  if (threshold_out) threshold_out->clear();
  r.name = name;
  const double u32 = std::ldexp(1.0, -24), u64 = std::ldexp(1.0, -53);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) {
      double hi = 0, lo = 0, abs_sum = 0;
      std::int64_t n = 0;
      auto add = [&](double x) {  // x exact: a product of two f32, or a bias
        double e = 0;
        two_sum(hi, x, hi, e);
        lo += e;
        abs_sum += std::abs(x);
        ++n;
      };
      for (const MatTerm& t : terms)
        for (std::int64_t l = 0; l < t.a.cols; ++l)
          add(static_cast<double>(t.a.at(i, l)) * static_cast<double>(t.b.at(l, j)));
      if (bias != nullptr) add(bias[j]);
      const double exact = hi + lo;
      const double g64 = gamma(n, u64);
      const double b = (gamma(n, u32) * abs_sum + g64 * g64 * abs_sum) * (1 + 2 * g64);
      const double thr = add_element(r, got[i * cols + j], exact, b, out_dtype);
      if (exact_out) exact_out->push_back(exact);
      if (threshold_out) threshold_out->push_back(thr);
    }
  return r;
}

Case attention_case(const LayerInputs& in, const LayerTrace& t, const std::vector<float>* dconcat) {
  const Shape& s = t.problem.shape;
  Case c = make_zero_case(t.problem, dconcat != nullptr);
  c.id = "layer/attention";
  c.q = split_heads(t.q, s.B, s.Tq, s.Hq, s.Dk);
  c.k = split_heads(t.k, s.B, s.Tk, s.Hkv, s.Dk);
  c.v = split_heads(t.v, s.B, s.Tk, s.Hkv, s.Dv);
  if (dconcat != nullptr) c.dout = split_heads(*dconcat, s.B, s.Tq, s.Hq, s.Dv);
  const std::size_t m = static_cast<std::size_t>(s.Tq * s.Tk);
  if (t.problem.has_mask) c.mask.assign(in.mask, in.mask + m);
  if (t.problem.has_bias) {  // the layer hands the core the bias rounded to the attention dtype
    c.bias.assign(in.attn_bias, in.attn_bias + m);
    for (double& x : c.bias) x = round_to(t.problem.dtype, x);
  }
  if (t.problem.has_kv_len) c.kv_len.assign(in.kv_len, in.kv_len + s.B);
  return c;
}

LayerCheck check_layer_forward(const LayerConfig& cfg, const LayerWeights& w,
                               const LayerInputs& in, const LayerTrace& t,
                               const PrecisionModel& attention, const DropoutOptions* dropout) {
  LayerCheck check;
  const std::int64_t B = in.B, T = in.T, Tk = in.keys(), dm = cfg.d_model;
  const float* xkv = in.self() ? in.x : in.xkv;
  const std::int64_t nq = cfg.Hq * cfg.Dk, nk = cfg.Hkv * cfg.Dk, nv = cfg.Hkv * cfg.Dv, no = cfg.Hq * cfg.Dv;
  const bool bias = cfg.has_bias;
  if (!sized(t.q, B * T * nq) || !sized(t.k, B * Tk * nk) || !sized(t.v, B * Tk * nv) || !sized(t.concat, B * T * no) ||
      !sized(t.lse, B * cfg.Hq * T) || !(t.problem.shape == Shape{B, cfg.Hq, cfg.Hkv, T, Tk, cfg.Dk, cfg.Dv}) || t.problem.dtype != cfg.dtype) {
    check.stages.push_back(StageResult{"trace", 1, 1, std::numeric_limits<double>::infinity(), -1});
    return check;
  }
  check.stages.push_back(matmul_stage("Q", {{mat(in.x, B * T, dm), mat(w.wq, dm, nq)}}, bias ? w.bq : nullptr,
                                      t.q, B * T, nq, cfg.dtype));
  check.stages.push_back(matmul_stage("K", {{mat(xkv, B * Tk, dm), mat(w.wk, dm, nk)}}, bias ? w.bk : nullptr,
                                      t.k, B * Tk, nk, cfg.dtype));
  check.stages.push_back(matmul_stage("V", {{mat(xkv, B * Tk, dm), mat(w.wv, dm, nv)}}, bias ? w.bv : nullptr,
                                      t.v, B * Tk, nv, cfg.dtype));

  const Case c = attention_case(in, t);
  Outputs got;
  got.out = split_heads(t.concat, B, T, cfg.Hq, cfg.Dv);
  got.lse.assign(t.lse.begin(), t.lse.end());
  if (dropout != nullptr && dropout->active()) {
    const DropoutCheck d = check_dropout_forward(c, got, dropout->p, dropout->seed, attention);
    check.stages.push_back(StageResult{"attention.dropout", d.elements, d.ok() ? 0 : std::max<std::int64_t>(d.failures, 1),
                                       d.worst_ratio, -1});
  } else {
    const Outputs exact = reference::fast_forward(c);
    const bound::Bounds bounds = bound::forward_bound(c, exact, attention);
    add_attention(check, "attention.", bound::compare(got, exact, bounds, cfg.dtype));
  }

  check.stages.push_back(matmul_stage("Y", {{mat(t.concat.data(), B * T, no), mat(w.wo, no, dm)}},
                                      bias ? w.bo : nullptr, t.y, B * T, dm));
  return check;
}

LayerCheck check_layer_backward(const LayerConfig& cfg, const LayerWeights& w,
                                const LayerInputs& in, const LayerTrace& t, const float* dy,
                                const LayerGrads& g, const PrecisionModel& attention) {
  LayerCheck check;
  const std::int64_t B = in.B, T = in.T, Tk = in.keys(), dm = cfg.d_model;
  const std::int64_t BT = B * T, BTk = B * Tk;
  const float* xkv = in.self() ? in.x : in.xkv;
  const std::int64_t nq = cfg.Hq * cfg.Dk, nk = cfg.Hkv * cfg.Dk, nv = cfg.Hkv * cfg.Dv, no = cfg.Hq * cfg.Dv;

  if (!sized(t.concat, BT * no) || !sized(t.q, BT * nq) || !sized(t.k, BTk * nk) || !sized(t.v, BTk * nv) ||
      !sized(t.lse, B * cfg.Hq * T) || !sized(g.dconcat, BT * no) || !sized(g.dq, BT * nq) || !sized(g.dk, BTk * nk) ||
      !sized(g.dv, BTk * nv) || !(t.problem.shape == Shape{B, cfg.Hq, cfg.Hkv, T, Tk, cfg.Dk, cfg.Dv}) || t.problem.dtype != cfg.dtype) {
    check.stages.push_back(StageResult{"trace", 1, 1, std::numeric_limits<double>::infinity(), -1});
    return check;
  }
  // Output projection.
  check.stages.push_back(matmul_stage("dconcat", {{mat(dy, BT, dm), mat_t(w.wo, dm, no)}}, nullptr,
                                      g.dconcat, BT, no, cfg.dtype));
  check.stages.push_back(matmul_stage("dWo", {{mat_t(t.concat.data(), no, BT), mat(dy, BT, dm)}}, nullptr,
                                      g.dwo, no, dm));
  // Attention, on the trace's Q/K/V/O/LSE and the backward's own dO.
  const Case c = attention_case(in, t, &g.dconcat);
  const Outputs exact = reference::fast_backward(c);
  const bound::Bounds bounds = bound::backward_bound(c, exact, attention);
  Outputs got;
  got.out = split_heads(t.concat, B, T, cfg.Hq, cfg.Dv);
  got.lse.assign(t.lse.begin(), t.lse.end());
  got.dq = split_heads(g.dq, B, T, cfg.Hq, cfg.Dk);
  got.dk = split_heads(g.dk, B, Tk, cfg.Hkv, cfg.Dk);
  got.dv = split_heads(g.dv, B, Tk, cfg.Hkv, cfg.Dv);
  add_attention(check, "attention.", bound::compare(got, exact, bounds, cfg.dtype));
  // Input projections.
  check.stages.push_back(matmul_stage("dWq", {{mat_t(in.x, dm, BT), mat(g.dq.data(), BT, nq)}}, nullptr,
                                      g.dwq, dm, nq));
  check.stages.push_back(matmul_stage("dWk", {{mat_t(xkv, dm, BTk), mat(g.dk.data(), BTk, nk)}}, nullptr,
                                      g.dwk, dm, nk));
  check.stages.push_back(matmul_stage("dWv", {{mat_t(xkv, dm, BTk), mat(g.dv.data(), BTk, nv)}}, nullptr,
                                      g.dwv, dm, nv));
  if (cfg.has_bias) {
    const std::vector<float> ones(static_cast<std::size_t>(std::max(BT, BTk)), 1.0f);
    auto bias_sum = [&](const char* name, const std::vector<float>& dz, std::int64_t rows, std::int64_t width,
                        const std::vector<float>& gotv) {
      check.stages.push_back(
          matmul_stage(name, {{mat(ones.data(), 1, rows), mat(dz.data(), rows, width)}}, nullptr, gotv, 1, width));
    };
    const std::vector<float> dyv(dy, dy + BT * dm);
    bias_sum("dbq", g.dq, BT, nq, g.dbq);
    bias_sum("dbk", g.dk, BTk, nk, g.dbk);
    bias_sum("dbv", g.dv, BTk, nv, g.dbv);
    bias_sum("dbo", dyv, BT, dm, g.dbo);
  }
  std::vector<MatTerm> dkv = {{mat(g.dk.data(), BTk, nk), mat_t(w.wk, nk, dm)},
                              {mat(g.dv.data(), BTk, nv), mat_t(w.wv, nv, dm)}};
  std::vector<MatTerm> dx = {{mat(g.dq.data(), BT, nq), mat_t(w.wq, nq, dm)}};
  if (in.self()) {
    dx.insert(dx.end(), dkv.begin(), dkv.end());
  } else {
    check.stages.push_back(matmul_stage("dXkv", dkv, nullptr, g.dxkv, BTk, dm));
  }
  check.stages.push_back(matmul_stage("dX", dx, nullptr, g.dx, BT, dm));
  return check;
}

}  // namespace attnv::layer
