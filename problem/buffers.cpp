#include "problem/buffers.h"

#include <algorithm>
#include <cstring>

#include "problem/features/registry.h"
#include "problem/element_name.h"
#include "problem/error.h"
#include "problem/validate.h"

namespace attnv {

std::string_view layout_name(Layout l) {
  switch (l) {
    case Layout::bhtd: return "bhtd";
    case Layout::bthd: return "bthd";
    case Layout::gapped: return "gapped";
  }
  return "?";
}

std::optional<Layout> parse_layout(std::string_view name) {
  for (Layout l : kAllLayouts)
    if (layout_name(l) == name) return l;
  return std::nullopt;
}

DType lse_dtype(DType storage) { return storage == DType::f64 ? DType::f64 : DType::f32; }

namespace {

std::int64_t offset(const TensorRef& t, const std::array<std::int64_t, 4>& idx) {
  std::int64_t off = 0;
  for (int d = 0; d < t.rank; ++d) off += idx[static_cast<std::size_t>(d)] * t.stride[static_cast<std::size_t>(d)];
  return off;
}

// Strides of a layout. Rank-4 [B,H,T,D] tensors get the layout; masks, LSE stay dense (gapped
// gets gaps there too).
std::array<std::int64_t, 4> layout_strides(const std::array<std::int64_t, 4>& s, int rank, Layout l) {
  if (l == Layout::bthd && rank == 4) {
    // memory order B, T, H, D
    return {s[2] * s[1] * s[3], s[3], s[1] * s[3], 1};
  }
  if (l == Layout::gapped) {
    std::array<std::int64_t, 4> st{};
    std::int64_t acc = 1;
    for (int d = rank - 1; d >= 0; --d) {
      st[static_cast<std::size_t>(d)] = acc;
      acc = acc * s[static_cast<std::size_t>(d)] + 3;  // three unused elements after each slice
    }
    return st;
  }
  return dense_strides(s, rank);
}

std::int64_t span_elements(const std::array<std::int64_t, 4>& shape, const std::array<std::int64_t, 4>& st, int rank) {
  std::int64_t last = 0;
  for (int d = 0; d < rank; ++d) last += (shape[static_cast<std::size_t>(d)] - 1) * st[static_cast<std::size_t>(d)];
  return last + 1;
}

// Every index in row-major order, with its flat position. The index is carried like an
// odometer (not divided out of the flat position: the buffers walk every element of every case).
template <class F>
void for_each_index(const std::array<std::int64_t, 4>& shape, int rank, F f) {
  std::array<std::int64_t, 4> i{};
  std::int64_t n = 1;
  for (int d = 0; d < rank; ++d) n *= shape[static_cast<std::size_t>(d)];
  for (std::int64_t flat = 0; flat < n; ++flat) {
    f(flat, i);
    for (int d = rank - 1; d >= 0; --d) {
      if (++i[static_cast<std::size_t>(d)] < shape[static_cast<std::size_t>(d)]) break;
      i[static_cast<std::size_t>(d)] = 0;
    }
  }
}

}  // namespace

void write_dense(const TensorRef& t, const std::vector<double>& dense) {
  for_each_index(t.shape, t.rank, [&](std::int64_t flat, const auto& i) {
    store(t, i, dense[static_cast<std::size_t>(flat)]);
  });
}

std::vector<double> read_dense(const TensorRef& t) {
  std::int64_t n = 1;
  for (int d = 0; d < t.rank; ++d) n *= t.shape[static_cast<std::size_t>(d)];
  std::vector<double> out(static_cast<std::size_t>(n));
  for_each_index(t.shape, t.rank, [&](std::int64_t flat, const auto& i) { out[static_cast<std::size_t>(flat)] = load(t, i); });
  return out;
}

double load(const TensorRef& t, const std::array<std::int64_t, 4>& idx) {
  const auto* base = static_cast<const unsigned char*>(t.data);
  const std::int64_t off = offset(t, idx);
  switch (t.dtype) {
    case DType::f64: { double x; std::memcpy(&x, base + off * 8, 8); return x; }
    case DType::f32: { float x; std::memcpy(&x, base + off * 4, 4); return x; }
    case DType::f16: { std::uint16_t b; std::memcpy(&b, base + off * 2, 2); return f16_value(b); }
    case DType::bf16: { std::uint16_t b; std::memcpy(&b, base + off * 2, 2); return bf16_value(b); }
  }
  return 0;
}

void store(const TensorRef& t, const std::array<std::int64_t, 4>& idx, double x) {
  auto* base = static_cast<unsigned char*>(t.data);
  const std::int64_t off = offset(t, idx);
  switch (t.dtype) {
    case DType::f64: std::memcpy(base + off * 8, &x, 8); return;
    case DType::f32: { const auto f = static_cast<float>(x); std::memcpy(base + off * 4, &f, 4); return; }
    case DType::f16: { const std::uint16_t b = f16_bits(x); std::memcpy(base + off * 2, &b, 2); return; }
    case DType::bf16: { const std::uint16_t b = bf16_bits(x); std::memcpy(base + off * 2, &b, 2); return; }
  }
}

CaseBuffers::Buffer CaseBuffers::make(DType t, std::array<std::int64_t, 4> shape, int rank, Layout layout) {
  Buffer b;
  b.ref.dtype = t;
  b.ref.rank = rank;
  b.ref.shape = shape;
  b.ref.stride = layout_strides(shape, rank, layout);
  b.bytes.assign(static_cast<std::size_t>(span_elements(shape, b.ref.stride, rank) * dtype_bytes(t)), 0);
  b.ref.data = b.bytes.data();
  return b;
}

CaseBuffers::CaseBuffers(const Case& c, Layout layout, bool backward) : case_(c) {
  require_valid(c);
  const Problem& p = c.problem;
  const Shape& s = p.shape;
  const DType t = p.dtype;
  q_ = make(t, {s.B, s.Hq, s.Tq, s.Dk}, 4, layout);
  k_ = make(t, {s.B, s.Hkv, s.Tk, s.Dk}, 4, layout);
  v_ = make(t, {s.B, s.Hkv, s.Tk, s.Dv}, 4, layout);
  write_dense(q_.ref, c.q);
  write_dense(k_.ref, c.k);
  write_dense(v_.ref, c.v);
  views_.q = q_.ref;
  views_.k = k_.ref;
  views_.v = v_.ref;
  inputs_ = {&q_, &k_, &v_};
  // Mask and bias: [Tq,Tk] (rank 2), or [B|1,Hq|1,Tq,Tk] (rank 4) when they have leading extents;
  // the dense Case order is the same row-major order either way.
  const auto broadcast_shape = [&](Leading d) -> std::pair<std::array<std::int64_t, 4>, int> {
    if (!d.any()) return {{s.Tq, s.Tk, 0, 0}, 2};
    return {broadcast_extents(s, d), 4};
  };
  if (p.has_mask) {
    // uint8 elements: make() with a 1-byte dtype is not expressible, so lay it out densely by hand.
    const auto [shape, rank] = broadcast_shape(p.mask_dims);
    mask_.ref.rank = rank;
    mask_.ref.shape = shape;
    mask_.ref.stride = layout_strides(mask_.ref.shape, rank, layout);
    mask_.bytes.assign(static_cast<std::size_t>(span_elements(mask_.ref.shape, mask_.ref.stride, rank)), 0);
    mask_.ref.data = mask_.bytes.data();
    for_each_index(shape, rank, [&](std::int64_t flat, const std::array<std::int64_t, 4>& idx) {
      mask_.bytes[static_cast<std::size_t>(offset(mask_.ref, idx))] = c.mask[static_cast<std::size_t>(flat)];
    });
    views_.mask = mask_.ref;
    inputs_.push_back(&mask_);
  }
  heads_.resize(std::size(kHeadInputs));  // once, before inputs_ points into it
  for (std::size_t i = 0; i < std::size(kHeadInputs); ++i) {
    const HeadInput& in = kHeadInputs[i];
    if (!(p.*in.present)) continue;
    heads_[i] = make(t, {s.Hq, 0, 0, 0}, 1, layout);
    write_dense(heads_[i].ref, c.*in.values);
    views_.*in.view = heads_[i].ref;
    inputs_.push_back(&heads_[i]);
  }
  if (p.has_bias) {
    const auto [shape, rank] = broadcast_shape(p.bias_dims);
    bias_ = make(t, shape, rank, layout);
    write_dense(bias_.ref, c.bias);
    views_.bias = bias_.ref;
    inputs_.push_back(&bias_);
  }
  indices_.resize(std::size(kIndexInputs));
  for (std::size_t i = 0; i < std::size(kIndexInputs); ++i) {
    const IndexInput& in = kIndexInputs[i];
    if (!in.present(p)) continue;
    indices_[i] = c.*in.values;
    views_.*in.view = indices_[i].data();
  }
  out_ = make(t, {s.B, s.Hq, s.Tq, s.Dv}, 4, layout);
  lse_ = make(lse_dtype(t), {s.B, s.Hq, s.Tq, 0}, 3, Layout::bhtd);
  views_.out = out_.ref;
  views_.lse = lse_.ref;
  if (backward) {
    if (!c.has_dout()) throw InputError("case '" + c.id + "': backward asked for, but the case has no dout");
    dout_ = make(t, {s.B, s.Hq, s.Tq, s.Dv}, 4, layout);
    write_dense(dout_.ref, c.dout);
    views_.dout = dout_.ref;
    inputs_.push_back(&dout_);
    dq_ = make(t, {s.B, s.Hq, s.Tq, s.Dk}, 4, layout);
    dk_ = make(t, {s.B, s.Hkv, s.Tk, s.Dk}, 4, layout);
    dv_ = make(t, {s.B, s.Hkv, s.Tk, s.Dv}, 4, layout);
    views_.dq = dq_.ref;
    views_.dk = dk_.ref;
    views_.dv = dv_.ref;
    if (p.has_sinks) {
      dsinks_ = make(t, {s.Hq, 0, 0, 0}, 1, layout);
      views_.dsinks = dsinks_.ref;
    }
  }
  for (const Buffer* b : inputs_) input_copies_.push_back(b->bytes);
}

namespace {

// The poison's bits per dtype: quiet NaNs with a payload (0xA77E..., "attnv"-ish) that a kernel's
// own NaN (the default NaN, or an input's propagated) does not have.
constexpr std::uint64_t kPoison64 = 0x7FF8A77EA77EA77EULL;
constexpr std::uint32_t kPoison32 = 0x7FC0A77EU;
constexpr std::uint16_t kPoison16 = 0x7EA7;    // f16: exponent 31, quiet bit 9, payload
constexpr std::uint16_t kPoisonBf16 = 0x7FE7;  // bf16: exponent 255, quiet bit 6, payload

void put_poison(unsigned char* at, DType t) {
  switch (t) {
    case DType::f64: std::memcpy(at, &kPoison64, 8); return;
    case DType::f32: std::memcpy(at, &kPoison32, 4); return;
    case DType::f16: std::memcpy(at, &kPoison16, 2); return;
    case DType::bf16: std::memcpy(at, &kPoisonBf16, 2); return;
  }
}

bool is_poison(const unsigned char* at, DType t) {
  switch (t) {
    case DType::f64: return std::memcmp(at, &kPoison64, 8) == 0;
    case DType::f32: return std::memcmp(at, &kPoison32, 4) == 0;
    case DType::f16: return std::memcmp(at, &kPoison16, 2) == 0;
    case DType::bf16: return std::memcmp(at, &kPoisonBf16, 2) == 0;
  }
  return false;
}

}  // namespace

void CaseBuffers::poison_outputs() {
  for (Buffer* b : {&out_, &lse_, &dq_, &dk_, &dv_, &dsinks_}) {
    const TensorRef& t = b == &lse_ ? views_.lse : b->ref;  // judge::run drops an unclaimed LSE view
    if (!t.present() || b->bytes.empty()) continue;
    const int size = dtype_bytes(t.dtype);
    for_each_index(t.shape, t.rank, [&](std::int64_t, const auto& i) { put_poison(b->bytes.data() + offset(t, i) * size, t.dtype); });
  }
}

std::string CaseBuffers::Unwritten::message() const {
  return "the kernel left " + std::to_string(count) + " output element" + (count == 1 ? "" : "s") +
         " unwritten (the first: " + first + ")";
}

CaseBuffers::Unwritten CaseBuffers::unwritten_outputs() const {
  Unwritten u;
  const std::pair<const char*, const Buffer*> outputs[] = {{"out", &out_}, {"lse", &lse_}, {"dq", &dq_},
                                                           {"dk", &dk_},   {"dv", &dv_},   {"dsinks", &dsinks_}};
  for (const auto& output : outputs) {  // not a structured binding: lambdas capture it (clang 14)
    const char* name = output.first;
    const Buffer* b = output.second;
    const TensorRef& t = b == &lse_ ? views_.lse : b->ref;
    if (!t.present() || b->bytes.empty()) continue;
    const int size = dtype_bytes(t.dtype);
    for_each_index(t.shape, t.rank, [&](std::int64_t flat, const auto& i) {
      if (!is_poison(b->bytes.data() + offset(t, i) * size, t.dtype)) return;
      if (u.count++ == 0) u.first = element_name(case_, name, static_cast<std::size_t>(flat));
    });
  }
  return u;
}

Outputs CaseBuffers::outputs() const {
  Outputs o;
  o.out = read_dense(out_.ref);
  o.lse = read_dense(lse_.ref);
  if (views_.dq.present()) {
    o.dq = read_dense(dq_.ref);
    o.dk = read_dense(dk_.ref);
    o.dv = read_dense(dv_.ref);
    if (views_.dsinks.present()) o.dsinks = read_dense(dsinks_.ref);
  }
  return o;
}

bool CaseBuffers::inputs_unchanged() const {
  for (std::size_t i = 0; i < inputs_.size(); ++i)
    if (inputs_[i]->bytes != input_copies_[i]) return false;
  for (std::size_t i = 0; i < indices_.size(); ++i)
    if (!indices_[i].empty() && indices_[i] != case_.*kIndexInputs[i].values) return false;
  return true;
}

Case case_from_views(const Problem& p, const KernelViews& v) {
  Case c = make_zero_case(p, v.dout.present());
  c.q = read_dense(v.q);
  c.k = read_dense(v.k);
  c.v = read_dense(v.v);
  if (p.has_mask)
    for_each_index(v.mask.shape, v.mask.rank, [&](std::int64_t flat, const std::array<std::int64_t, 4>& idx) {
      c.mask[static_cast<std::size_t>(flat)] = static_cast<const unsigned char*>(v.mask.data)[offset(v.mask, idx)] ? 1 : 0;
    });
  if (p.has_bias) c.bias = read_dense(v.bias);
  for (const HeadInput& in : kHeadInputs)
    if (p.*in.present) c.*in.values = read_dense(v.*in.view);
  for (const IndexInput& in : kIndexInputs)
    if (in.present(p)) (c.*in.values).assign(v.*in.view, v.*in.view + in.extent(p));
  if (v.dout.present()) c.dout = read_dense(v.dout);
  return c;
}

void write_outputs(const Outputs& o, const Problem&, const KernelViews& v) {
  auto put = [](const TensorRef& t, const std::vector<double>& dense) {
    if (t.present() && !dense.empty()) write_dense(t, dense);
  };
  put(v.out, o.out);
  put(v.lse, o.lse);
  put(v.dq, o.dq);
  put(v.dk, o.dk);
  put(v.dv, o.dv);
  put(v.dsinks, o.dsinks);
}

namespace {

void require_claimed(Kernel& k, const Problem& p, bool backward) {
  const Capabilities caps = k.capabilities();
  std::string why = caps.unsupported(p);
  if (why.empty() && backward && !caps.backward) why = "backward";
  if (!why.empty()) throw InputError("kernel " + k.name() + " does not claim " + why + " (" + describe(p) + ")");
}

void require_views(const Problem& p, const KernelViews& v) {
  if (auto e = check_views(p, v); !e.empty()) throw InputError("invalid kernel views: " + e[0]);
}

}  // namespace

Outputs run_forward(Kernel& k, const Case& c, Layout layout) {
  require_claimed(k, c.problem, false);
  CaseBuffers buf(c, layout, false);
  require_views(c.problem, buf.views());
  k.forward(c.problem, buf.views());
  return buf.outputs();
}

Outputs run_backward(Kernel& k, const Case& c, Layout layout) {
  require_claimed(k, c.problem, true);
  CaseBuffers buf(c, layout, true);
  require_views(c.problem, buf.views());
  k.forward(c.problem, buf.views());
  k.backward(c.problem, buf.views());
  return buf.outputs();
}

void Kernel::backward(const Problem&, const KernelViews&) {
  throw InputError("kernel " + name() + " has no backward");
}

Support Kernel::supports(const Problem&, KernelOp) { return Support::yes(); }

void Kernel::decode(const Problem&, const DecodeViews&) {
  throw InputError("kernel " + name() + ": decode is not supported");
}

std::string Capabilities::unsupported(const Problem& p) const {
  bool dtype_ok = false;
  for (DType t : dtypes) dtype_ok = dtype_ok || t == p.dtype;
  if (!dtype_ok) return "dtype " + std::string(dtype_name(p.dtype));
  for (const ClaimInfo& c : kClaims)
    if (c.used_by && !(this->*c.member))
      if (const std::string_view used = c.used_by(p); !used.empty()) return std::string(used);
  for (const ClaimInfo& c : kClaims)
    if (c.used_by && withdrawn_in(p.dtype, c.key))
      if (const std::string_view used = c.used_by(p); !used.empty())
        return std::string(used) + " in " + std::string(dtype_name(p.dtype));
  return {};
}

bool Capabilities::withdrawn_in(DType d, std::string_view key) const {
  const auto w = withdrawn.find(d);
  return w != withdrawn.end() && w->second.count(std::string(key)) > 0;
}

std::string check_withdrawn(const Capabilities& caps) {
  for (const auto& [dtype, keys] : caps.withdrawn) {
    const std::string where = "withdrawn in " + std::string(dtype_name(dtype)) + ": ";
    if (std::find(caps.dtypes.begin(), caps.dtypes.end(), dtype) == caps.dtypes.end())
      return where + "the dtype is not claimed";
    for (const std::string& key : keys) {
      const ClaimInfo* c = nullptr;
      for (const ClaimInfo& row : kClaims)
        if (row.key == key) c = &row;
      if (!c) return where + "'" + key + "' is not a claim";
      if (!c->used_by)
        return where + "'" + key + "' is not a problem feature (only claims a problem uses can be withdrawn per dtype)";
      if (!(caps.*c->member)) return where + "'" + key + "' is not claimed in the first place";
    }
  }
  return {};
}

}  // namespace attnv
