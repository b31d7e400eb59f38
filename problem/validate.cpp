#include "problem/validate.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <sstream>

#include "problem/error.h"
#include "problem/features/registry.h"
#include "problem/validate_paged.h"

namespace attnv {
namespace {

bool mul_ok(std::int64_t a, std::int64_t b, std::int64_t& out) {
  return !__builtin_mul_overflow(a, b, &out);
}

// Product of sizes times bytes per element, or -1 on overflow.
std::int64_t checked_bytes(std::initializer_list<std::int64_t> dims, int elem_bytes) {
  std::int64_t n = elem_bytes;
  for (std::int64_t d : dims)
    if (!mul_ok(n, d, n)) return -1;
  return n;
}

// Empty when cu holds the bounds of S packed sequences over `total` rows: cu[0] = 0,
// nondecreasing, cu[S] = total (the packed Tq or Tk); else the first thing wrong, named.
std::string cu_seqlens_error(const char* name, const std::int64_t* cu, std::int64_t S, std::int64_t total,
                             const char* total_name) {
  const std::string n(name);
  if (cu[0] != 0) return n + "[0] = " + std::to_string(cu[0]) + ", expected 0";
  for (std::int64_t s = 1; s <= S; ++s)
    if (cu[s] < cu[s - 1])
      return n + " decreases: " + n + "[" + std::to_string(s) + "] = " + std::to_string(cu[s]) + " < " + n + "[" +
             std::to_string(s - 1) + "] = " + std::to_string(cu[s - 1]);
  if (cu[S] != total)
    return n + "[" + std::to_string(S) + "] = " + std::to_string(cu[S]) + ", expected " + total_name + " = " +
           std::to_string(total) + " (the packed total)";
  return "";
}

}  // namespace

std::vector<std::string> index_errors(const IndexInput& row, const Problem& p, const std::int64_t* x, bool every,
                                      const std::int64_t* sequences) {
  const std::int64_t n = row.extent(p), total = p.shape.*row.total;
  const std::string name(row.name), total_name(row.total_name);
  if (row.rule == IndexInput::Rule::bounds) {
    std::string e = cu_seqlens_error(name.c_str(), x, n - 1, total, total_name.c_str());
    if (e.empty()) return {};
    return {e};
  }
  std::vector<std::string> errs;
  // Per packed sequence: element s against that sequence's own extent, named with it.
  if (sequences) {
    for (std::int64_t s = 0; s < n && (every || errs.empty()); ++s)
      if (const std::int64_t len = sequences[s + 1] - sequences[s]; x[s] < 0 || x[s] > len)
        errs.push_back(name + "[" + std::to_string(s) + "] = " + std::to_string(x[s]) + " is outside [0, " +
                       std::to_string(len) + "], sequence " + std::to_string(s) + "'s " + std::string(row.per_sequence_unit));
    return errs;
  }
  for (std::int64_t b = 0; b < n && (every || errs.empty()); ++b)
    if (x[b] < 0 || x[b] > total)
      errs.push_back(name + "[" + std::to_string(b) + "] = " + std::to_string(x[b]) + " is outside [0, " + total_name +
                     "=" + std::to_string(total) + "]");
  return errs;
}

namespace {

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& m : v) s += (s.empty() ? "" : "; ") + m;
  return s;
}

}  // namespace

std::vector<std::string> check_problem(const Problem& p) {
  std::vector<std::string> errs;
  const Shape& s = p.shape;
  const std::pair<const char*, std::int64_t> sizes[] = {
      {"B", s.B}, {"Hq", s.Hq}, {"Hkv", s.Hkv}, {"Tq", s.Tq}, {"Tk", s.Tk}, {"Dk", s.Dk}, {"Dv", s.Dv}};
  bool sizes_ok = true;
  for (auto [name, n] : sizes)
    if (n < 1) {
      errs.push_back(std::string(name) + " must be >= 1, got " + std::to_string(n));
      sizes_ok = false;
    }
  if (!sizes_ok) return errs;
  if (s.Hq % s.Hkv != 0)
    errs.push_back("Hq (" + std::to_string(s.Hq) + ") must be a multiple of Hkv (" +
                   std::to_string(s.Hkv) + ")");
  const int eb = std::max(dtype_bytes(p.dtype), 8);  // outputs may be written as f64
  // The larger of mask and bias: its planes per batch and per head when either has them.
  const bool per_batch = (p.has_mask && p.mask_dims.batch) || (p.has_bias && p.bias_dims.batch);
  const bool per_head = (p.has_mask && p.mask_dims.heads) || (p.has_bias && p.bias_dims.heads);
  const std::pair<const char*, std::int64_t> tensors[] = {
      {"q [B,Hq,Tq,Dk]", checked_bytes({s.B, s.Hq, s.Tq, s.Dk}, eb)},
      {"k [B,Hkv,Tk,Dk]", checked_bytes({s.B, s.Hkv, s.Tk, s.Dk}, eb)},
      {"v [B,Hkv,Tk,Dv]", checked_bytes({s.B, s.Hkv, s.Tk, s.Dv}, eb)},
      {"out [B,Hq,Tq,Dv]", checked_bytes({s.B, s.Hq, s.Tq, s.Dv}, eb)},
      per_batch || per_head
          ? std::pair<const char*, std::int64_t>{"mask/bias [B|1,Hq|1,Tq,Tk]",
                                                 checked_bytes({per_batch ? s.B : 1, per_head ? s.Hq : 1, s.Tq, s.Tk}, eb)}
          : std::pair<const char*, std::int64_t>{"mask/bias [Tq,Tk]", checked_bytes({s.Tq, s.Tk}, eb)}};
  for (auto [name, bytes] : tensors)
    if (bytes < 0) errs.push_back(std::string("the element count of ") + name + " overflows 64 bits");
  if (p.scale && !(std::isfinite(*p.scale) && *p.scale > 0)) {
    std::ostringstream o;
    o << "scale must be finite and > 0, got " << *p.scale;
    errs.push_back(o.str());
  }
  if (p.softcap && !(std::isfinite(*p.softcap) && *p.softcap > 0)) {
    std::ostringstream o;
    o << "softcap must be finite and > 0 when set, got " << *p.softcap;
    errs.push_back(o.str());
  }
  if (p.window.left < -1 || p.window.right < -1)
    errs.push_back("window sides must be >= 0, or -1 for unbounded; got (" +
                   std::to_string(p.window.left) + ", " + std::to_string(p.window.right) + ")");
  // Extents of a tensor the problem does not have would be read by nobody: a caller that set
  // them meant a mask or bias it forgot to give.
  if (!p.has_mask && p.mask_dims.any())
    errs.push_back("mask_dims gives the mask per-batch or per-head extents, but the problem has no mask");
  if (!p.has_bias && p.bias_dims.any())
    errs.push_back("bias_dims gives the bias per-batch or per-head extents, but the problem has no bias");
  // A forward, backward or case has no cache to page; check_decode_problem lifts this.
  if (p.page_size != 0)
    errs.push_back("page_size = " + std::to_string(p.page_size) +
                   ": a paged KV cache belongs to a decode call only (a forward has no cache)");
  // Packed sequences: one batch entry holds them all, and a mask or bias over packed [Tq, Tk]
  // indices is not taken (yet): each would need a rule for the entries between sequences. A
  // kv_len is then per sequence ([S], FlashAttention's seqused_k; claim varlen_kv_len).
  if (p.chunk < 0) errs.push_back("chunk must be >= 0 (0: no chunks), got " + std::to_string(p.chunk));
  const std::int64_t S = p.varlen_sequences;
  if (S < 0) errs.push_back("varlen_sequences must be >= 0 (0: not varlen), got " + std::to_string(S));
  if (S > 0) {
    if (s.B != 1) errs.push_back("varlen packs every sequence into one batch entry: B must be 1, got " + std::to_string(s.B));
    if (p.has_mask) errs.push_back("varlen takes no mask (a mask over packed [Tq, Tk] indices is not supported)");
    if (p.has_bias) errs.push_back("varlen takes no bias (a bias over packed [Tq, Tk] indices is not supported)");
    if (checked_bytes({S, 2}, 8) < 0) errs.push_back("the element count of cu_seqlens [S+1] overflows 64 bits");
  }
  return errs;
}

namespace {

// check_shapes, also telling whether every tensor has its size (then values can be indexed).
std::vector<std::string> shapes(const Case& c, bool need_dout, bool& sizes_ok) {
  sizes_ok = false;
  std::vector<std::string> errs = check_problem(c.problem);
  if (!errs.empty()) return errs;
  const Problem& p = c.problem;
  const Shape& s = p.shape;
  auto size_is = [&](const char* name, std::size_t got, std::int64_t want) {
    if (got != static_cast<std::size_t>(want))
      errs.push_back(std::string(name) + " has " + std::to_string(got) + " elements, expected " +
                     std::to_string(want));
  };
  size_is("q", c.q.size(), q_elements(s));
  size_is("k", c.k.size(), k_elements(s));
  size_is("v", c.v.size(), v_elements(s));
  size_is("mask", c.mask.size(), p.has_mask ? mask_elements(p) : 0);
  size_is("bias", c.bias.size(), p.has_bias ? bias_elements(p) : 0);
  for (const IndexInput& in : kIndexInputs) size_is(in.name.data(), (c.*in.values).size(), in.count(p));
  for (const HeadInput& in : kHeadInputs) size_is(in.name.data(), (c.*in.values).size(), p.*in.present ? s.Hq : 0);
  if (need_dout && c.dout.empty()) errs.push_back("dout is needed (backward) but the case has none");
  else if (!c.dout.empty()) size_is("dout", c.dout.size(), out_elements(s));
  if (!errs.empty()) return errs;
  sizes_ok = true;
  const auto values_of = [&](const IndexInput& in) { return (c.*in.values).data(); };
  for (const IndexInput& in : kIndexInputs)
    if (in.present(p))
      for (std::string& e : index_errors(in, p, values_of(in), true, sequence_bounds(in, p, values_of)))
        errs.push_back(std::move(e));
  for (std::size_t i = 0; i < c.mask.size(); ++i)
    if (c.mask[i] > 1) {
      errs.push_back("mask element " + std::to_string(i) + " is " + std::to_string(c.mask[i]) +
                     ", expected 0 or 1");
      break;
    }
  return errs;
}

}  // namespace

std::vector<std::string> check_shapes(const Case& c, bool need_dout) {
  bool sizes_ok;
  return shapes(c, need_dout, sizes_ok);
}

std::vector<std::string> check_case(const Case& c) {
  bool sizes_ok;
  std::vector<std::string> errs = shapes(c, false, sizes_ok);
  if (!sizes_ok) return errs;
  const Problem& p = c.problem;
  // Values must be what the storage dtype holds; report the first offender of each tensor.
  std::vector<std::pair<const char*, const std::vector<double>*>> values = {
      {"q", &c.q}, {"k", &c.k}, {"v", &c.v}, {"bias", &c.bias}, {"dout", &c.dout}};
  // The per-head inputs' own rules (problem/features/feature.h says why), then representability like the rest.
  for (const HeadInput& in : kHeadInputs) {
    const std::vector<double>& x = c.*in.values;
    for (std::size_t h = 0; h < x.size(); ++h)
      if (!in.valid(x[h])) {
        std::ostringstream o;
        o << in.name << " element " << h << " is " << x[h] << ", expected " << in.rule();
        errs.push_back(o.str());
        break;
      }
    values.emplace_back(in.name.data(), &x);
  }
  for (auto [name, vec] : values)
    for (std::size_t i = 0; i < vec->size(); ++i)
      if (!representable(p.dtype, (*vec)[i])) {
        std::ostringstream o;
        o.precision(17);
        o << name << " element " << i << " = " << (*vec)[i] << " is not representable in "
          << dtype_name(p.dtype);
        errs.push_back(o.str());
        break;
      }
  return errs;
}

namespace {

struct Extent {
  const char* name;
  std::uintptr_t begin = 0, end = 0;  // byte range [begin, end)
};

// Every written view must be disjoint from every input and from the other written views.
void check_overlaps(const std::vector<Extent>& outputs, const std::vector<Extent>& inputs,
                    std::vector<std::string>& errs) {
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const Extent& o = outputs[i];
    for (const Extent& in : inputs)
      if (in.end != 0 && o.begin < in.end && in.begin < o.end)
        errs.push_back(std::string(o.name) + " overlaps input " + in.name);
    for (std::size_t j = i + 1; j < outputs.size(); ++j)
      if (o.begin < outputs[j].end && outputs[j].begin < o.end)
        errs.push_back(std::string(o.name) + " overlaps output " + outputs[j].name);
  }
}

// Checks one view and returns its byte extent; end == 0 when absent or invalid.
Extent view_extent(const char* name, const TensorRef& t, std::array<std::int64_t, 4> want, int rank,
                   std::vector<std::string>& errs) {
  Extent e{name};
  if (!t.present()) return e;
  if (t.rank != rank) {
    errs.push_back(std::string(name) + ": rank " + std::to_string(t.rank) + ", expected " + std::to_string(rank));
    return e;
  }
  std::int64_t last = 0;  // largest element offset
  for (int d = 0; d < rank; ++d) {
    const auto du = static_cast<std::size_t>(d);
    if (t.shape[du] != want[du]) {
      errs.push_back(std::string(name) + ": dimension " + std::to_string(d) + " is " +
                     std::to_string(t.shape[du]) + ", expected " + std::to_string(want[du]));
      return e;
    }
    if (t.stride[du] < 0) {
      errs.push_back(std::string(name) + ": stride " + std::to_string(d) + " is negative (" +
                     std::to_string(t.stride[du]) + ")");
      return e;
    }
    std::int64_t span = 0;
    if (!mul_ok(t.shape[du] - 1, t.stride[du], span) || __builtin_add_overflow(last, span, &last)) {
      errs.push_back(std::string(name) + ": the strides address beyond 64 bits");
      return e;
    }
  }
  // last + 1 itself may overflow (strides reaching exactly 2^63 - 1; found by fuzz/ views target).
  std::int64_t elements = 0, bytes = 0;
  if (__builtin_add_overflow(last, 1, &elements) || !mul_ok(elements, dtype_bytes(t.dtype), bytes)) {
    errs.push_back(std::string(name) + ": the byte extent overflows 64 bits");
    return e;
  }
  e.begin = reinterpret_cast<std::uintptr_t>(t.data);
  e.end = e.begin + static_cast<std::uintptr_t>(bytes);
  return e;
}

// A mask or bias view: rank 2 [Tq,Tk] when the problem gives it no leading extents, else rank 4
// [B|1,Hq|1,Tq,Tk] as its dims say. A rank-4 view of extents 1,1 is refused too: one problem has
// one layout, so a kernel never has to accept both for the same thing.
Extent broadcast_view_extent(const char* name, const TensorRef& t, const Shape& s, Leading d,
                             std::vector<std::string>& errs) {
  if (!d.any()) {
    if (t.present() && t.rank == 4) {
      errs.push_back(std::string(name) + ": rank 4, expected 2 ([Tq,Tk]: the problem gives it no per-batch or per-head extent)");
      return Extent{name};
    }
    return view_extent(name, t, {s.Tq, s.Tk, 0, 0}, 2, errs);
  }
  if (t.present() && t.rank != 4) {
    errs.push_back(std::string(name) + ": rank " + std::to_string(t.rank) + ", expected 4 ([" + (d.batch ? "B" : "1") +
                   "," + (d.heads ? "Hq" : "1") + ",Tq,Tk]: the problem gives it per-batch or per-head extents)");
    return Extent{name};
  }
  return view_extent(name, t, broadcast_extents(s, d), 4, errs);
}

// An output must not write one address twice: sorted by stride, each stride must step over the
// whole extent of the dimensions below it (sufficient, and exact for the layouts in use).
bool self_overlapping(const TensorRef& t) {
  std::vector<std::pair<std::int64_t, std::int64_t>> dims;  // (stride, extent)
  for (int d = 0; d < t.rank; ++d)
    if (t.shape[static_cast<std::size_t>(d)] > 1)
      dims.emplace_back(t.stride[static_cast<std::size_t>(d)], t.shape[static_cast<std::size_t>(d)]);
  std::sort(dims.begin(), dims.end());
  std::int64_t covered = 1;  // elements spanned by the smaller dimensions
  for (auto [stride, extent] : dims) {
    if (stride < covered) return true;
    covered = stride * extent;
  }
  return false;
}

}  // namespace

std::vector<std::string> check_views(const Problem& p, const KernelViews& v) {
  std::vector<std::string> errs = check_problem(p);
  if (!errs.empty()) return errs;
  const Shape& s = p.shape;
  if (!v.q.present() || !v.k.present() || !v.v.present()) errs.push_back("q, k and v are required");
  if (!v.out.present() && !v.dq.present()) errs.push_back("no output buffer given");
  if (p.has_mask != v.mask.present()) errs.push_back("mask buffer presence does not match the problem");
  if (p.has_bias != v.bias.present()) errs.push_back("bias buffer presence does not match the problem");
  for (const IndexInput& in : kIndexInputs)
    if (in.present(p) != (v.*in.view != nullptr)) errs.push_back(std::string(in.name) + " presence does not match the problem");
  for (const HeadInput& in : kHeadInputs)
    if (p.*in.present != (v.*in.view).present())
      errs.push_back(std::string(in.name) + " buffer presence does not match the problem");
  // A backward of a problem with sinks writes their gradient too; a forward has no dsinks.
  if (v.dsinks.present() != (p.has_sinks && v.dq.present()))
    errs.push_back("dsinks buffer presence does not match the problem (a backward with sinks needs it, nothing else takes it)");
  std::vector<Extent> inputs = {
      view_extent("q", v.q, {s.B, s.Hq, s.Tq, s.Dk}, 4, errs),
      view_extent("k", v.k, {s.B, s.Hkv, s.Tk, s.Dk}, 4, errs),
      view_extent("v", v.v, {s.B, s.Hkv, s.Tk, s.Dv}, 4, errs),
      broadcast_view_extent("mask", v.mask, s, p.mask_dims, errs),
      broadcast_view_extent("bias", v.bias, s, p.bias_dims, errs),
      view_extent("dout", v.dout, {s.B, s.Hq, s.Tq, s.Dv}, 4, errs)};
  for (const HeadInput& in : kHeadInputs) inputs.push_back(view_extent(in.name.data(), v.*in.view, {s.Hq, 0, 0, 0}, 1, errs));
  // The mask is uint8 whatever its dtype field says: recompute its extent in bytes.
  if (v.mask.present() && inputs[3].end != 0) {
    std::int64_t last = 0;
    for (int d = 0; d < v.mask.rank; ++d) last += (v.mask.shape[static_cast<std::size_t>(d)] - 1) * v.mask.stride[static_cast<std::size_t>(d)];
    inputs[3].end = inputs[3].begin + static_cast<std::uintptr_t>(last + 1);
  }
  // Every float tensor is in the problem's storage dtype, LSE in f32 (f64 for f64 storage).
  std::vector<std::pair<const char*, const TensorRef*>> typed = {
      {"q", &v.q}, {"k", &v.k}, {"v", &v.v}, {"bias", &v.bias}, {"dout", &v.dout},
      {"out", &v.out}, {"dq", &v.dq}, {"dk", &v.dk}, {"dv", &v.dv}, {"dsinks", &v.dsinks}};
  for (const HeadInput& in : kHeadInputs) typed.emplace_back(in.name.data(), &(v.*in.view));
  for (auto [name, t] : typed)
    if (t->present() && t->dtype != p.dtype)
      errs.push_back(std::string(name) + ": dtype " + std::string(dtype_name(t->dtype)) +
                     ", expected the problem's " + std::string(dtype_name(p.dtype)));
  const DType lse_want = p.dtype == DType::f64 ? DType::f64 : DType::f32;
  if (v.lse.present() && v.lse.dtype != lse_want)
    errs.push_back("lse: dtype " + std::string(dtype_name(v.lse.dtype)) + ", expected " +
                   std::string(dtype_name(lse_want)));
  // An index array's values are read only where the problem says it is there (check_problem
  // has kept its extent's byte count from overflowing); one message each is enough.
  const auto view_of = [&](const IndexInput& in) { return in.present(p) ? v.*in.view : nullptr; };
  for (const IndexInput& in : kIndexInputs) {
    const std::int64_t* x = v.*in.view;
    if (!x || !in.present(p)) continue;
    for (std::string& e : index_errors(in, p, x, false, sequence_bounds(in, p, view_of))) errs.push_back(std::move(e));
    const auto b = reinterpret_cast<std::uintptr_t>(x);
    inputs.push_back({in.name.data(), b, b + static_cast<std::uintptr_t>(in.extent(p)) * 8});
  }
  const std::pair<const char*, const TensorRef*> out_views[] = {
      {"out", &v.out}, {"lse", &v.lse}, {"dq", &v.dq}, {"dk", &v.dk}, {"dv", &v.dv}, {"dsinks", &v.dsinks}};
  const std::array<std::int64_t, 4> out_shapes[] = {
      {s.B, s.Hq, s.Tq, s.Dv}, {s.B, s.Hq, s.Tq, 0}, {s.B, s.Hq, s.Tq, s.Dk}, {s.B, s.Hkv, s.Tk, s.Dk}, {s.B, s.Hkv, s.Tk, s.Dv},
      {s.Hq, 0, 0, 0}};
  constexpr int out_ranks[] = {4, 3, 4, 4, 4, 1};
  std::vector<Extent> outputs;
  for (std::size_t i = 0; i < 6; ++i) {
    const TensorRef& t = *out_views[i].second;
    Extent e = view_extent(out_views[i].first, t, out_shapes[i], out_ranks[i], errs);
    if (e.end == 0) continue;
    if (self_overlapping(t))
      errs.push_back(std::string(e.name) + ": its strides make elements share memory");
    outputs.push_back(e);
  }
  check_overlaps(outputs, inputs, errs);
  return errs;
}

std::vector<std::string> check_decode_problem(const Problem& p) {
  Problem contiguous = p;
  contiguous.page_size = 0;
  std::vector<std::string> errs = check_problem(contiguous);
  if (p.page_size < 0) errs.push_back("page_size = " + std::to_string(p.page_size) + " is negative (0: a contiguous cache)");
  if (p.page_size > 0 && p.shape.Tk >= 1 && p.shape.Tk % p.page_size != 0)
    errs.push_back("a paged cache holds whole pages: capacity Tk = " + std::to_string(p.shape.Tk) +
                   " is not a multiple of page_size = " + std::to_string(p.page_size));
  if (!p.causal || p.alignment != Alignment::bottom_right)
    errs.push_back("a decode call is causal with bottom_right alignment (query i sits at cache_len[b] + i)");
  if (p.has_mask) errs.push_back("a decode call takes no mask");
  if (p.has_bias) errs.push_back("a decode call takes no bias");
  if (p.has_kv_len) errs.push_back("a decode call takes no kv_len (cache_len gives the key count)");
  if (p.varlen_sequences > 0) errs.push_back("a decode call takes no packed sequences (varlen)");
  return errs;
}

std::vector<std::string> check_decode_views(const Problem& p, const DecodeViews& v) {
  std::vector<std::string> errs = check_decode_problem(p);
  if (!errs.empty()) return errs;
  const Shape& s = p.shape;
  const std::pair<const char*, const TensorRef*> required[] = {
      {"q", &v.q}, {"k_new", &v.k_new}, {"v_new", &v.v_new}, {"k_cache", &v.k_cache}, {"v_cache", &v.v_cache},
      {"out", &v.out}};
  for (auto [name, t] : required)
    if (!t->present()) errs.push_back(std::string("decode: ") + name + " is required");
  if (v.cache_len == nullptr) errs.push_back("decode: cache_len is required");
  const bool paged = p.page_size > 0;
  if (paged && v.block_table == nullptr) errs.push_back("decode: block_table is required with page_size > 0 (a paged cache)");
  if (!paged && v.block_table != nullptr) errs.push_back("decode: block_table given, but page_size = 0 (a contiguous cache)");
  if (paged && v.k_cache.present() && v.v_cache.present()) {
    if (v.k_cache.rank != 4 || v.v_cache.rank != 4 || v.k_cache.shape[0] < 1 || v.v_cache.shape[0] != v.k_cache.shape[0])
      errs.push_back("decode: the page pools k_cache and v_cache must be rank 4 with the same number of pages >= 1 "
                     "([num_pages, Hkv, page_size, D])");
  }
  for (const HeadInput& in : kHeadInputs)
    if (p.*in.present != (v.*in.decode_view).present())
      errs.push_back("decode: " + std::string(in.name) + " buffer presence does not match the problem");
  if (!errs.empty()) return errs;
  std::vector<Extent> inputs = {view_extent("q", v.q, {s.B, s.Hq, s.Tq, s.Dk}, 4, errs),
                                view_extent("k_new", v.k_new, {s.B, s.Hkv, s.Tq, s.Dk}, 4, errs),
                                view_extent("v_new", v.v_new, {s.B, s.Hkv, s.Tq, s.Dv}, 4, errs)};
  for (const HeadInput& in : kHeadInputs)
    inputs.push_back(view_extent(in.name.data(), v.*in.decode_view, {s.Hq, 0, 0, 0}, 1, errs));
  const auto cl = reinterpret_cast<std::uintptr_t>(v.cache_len);
  inputs.push_back({"cache_len", cl, cl + static_cast<std::uintptr_t>(s.B) * 8});
  if (paged) {
    // B * Tk fits (check_problem), and Tk / page_size <= Tk entries per row.
    const std::int64_t table_bytes = checked_bytes({s.B, s.Tk / p.page_size}, 8);
    if (table_bytes < 0) return {"block_table: its byte size overflows 64 bits"};
    const auto bt = reinterpret_cast<std::uintptr_t>(v.block_table);
    inputs.push_back({"block_table", bt, bt + static_cast<std::uintptr_t>(table_bytes)});
  }
  // The caches are read and written: like outputs, no element may alias another. A page pool is
  // [num_pages, Hkv, page_size, D] instead of [B, Hkv, Tk, D].
  const std::int64_t cache0 = paged ? v.k_cache.shape[0] : s.B, cache2 = paged ? p.page_size : s.Tk;
  const std::pair<const char*, const TensorRef*> written[] = {
      {"k_cache", &v.k_cache}, {"v_cache", &v.v_cache}, {"out", &v.out}, {"lse", &v.lse}};
  const std::array<std::int64_t, 4> written_shapes[] = {
      {cache0, s.Hkv, cache2, s.Dk}, {cache0, s.Hkv, cache2, s.Dv}, {s.B, s.Hq, s.Tq, s.Dv}, {s.B, s.Hq, s.Tq, 0}};
  std::vector<Extent> outputs;
  for (std::size_t i = 0; i < 4; ++i) {
    const TensorRef& t = *written[i].second;
    Extent e = view_extent(written[i].first, t, written_shapes[i], i == 3 ? 3 : 4, errs);
    if (e.end == 0) continue;
    if (self_overlapping(t)) errs.push_back(std::string(e.name) + ": its strides make elements share memory");
    outputs.push_back(e);
  }
  std::vector<std::pair<const char*, const TensorRef*>> typed = {
      {"q", &v.q}, {"k_new", &v.k_new}, {"v_new", &v.v_new}, {"k_cache", &v.k_cache}, {"v_cache", &v.v_cache}, {"out", &v.out}};
  for (const HeadInput& in : kHeadInputs) typed.emplace_back(in.name.data(), &(v.*in.decode_view));
  for (auto [name, t] : typed)
    if (t->present() && t->dtype != p.dtype)
      errs.push_back(std::string(name) + ": dtype " + std::string(dtype_name(t->dtype)) + ", expected the problem's " +
                     std::string(dtype_name(p.dtype)));
  const DType lse_want = p.dtype == DType::f64 ? DType::f64 : DType::f32;
  if (v.lse.present() && v.lse.dtype != lse_want)
    errs.push_back("lse: dtype " + std::string(dtype_name(v.lse.dtype)) + ", expected " +
                   std::string(dtype_name(lse_want)));
  for (std::int64_t b = 0; b < s.B; ++b) {
    const std::int64_t c = v.cache_len[b];
    if (c < 0) {
      errs.push_back("cache_len[" + std::to_string(b) + "] = " + std::to_string(c) + " is negative");
      break;
    }
    if (c > s.Tk - s.Tq) {
      errs.push_back("cache_len[" + std::to_string(b) + "] = " + std::to_string(c) + " plus n = " + std::to_string(s.Tq) +
                     " new tokens exceeds the cache capacity Tk = " + std::to_string(s.Tk));
      break;
    }
  }
  check_overlaps(outputs, inputs, errs);
  // The table's entries only once cache_len is known valid (they say which entries are read).
  if (paged && errs.empty()) errs = check_block_table(p, v.cache_len, v.block_table, v.k_cache.shape[0]);
  return errs;
}

void require_valid(const Problem& p) {
  if (auto e = check_problem(p); !e.empty()) throw InputError("invalid problem: " + join(e));
}

void require_valid(const Case& c) {
  if (auto e = check_case(c); !e.empty())
    throw InputError("invalid case" + (c.id.empty() ? std::string() : " '" + c.id + "'") + ": " + join(e));
}

}  // namespace attnv
