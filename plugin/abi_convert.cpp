#include "abi_convert.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>

#include "problem/buffers.h"
#include "problem/features/registry.h"
#include "problem/error.h"
#include "problem/kernel_fault.h"

namespace attnv::plugin {

std::int32_t dtype_to_abi(DType t) {
  switch (t) {
    case DType::f64: return ATTNV_F64;
    case DType::f32: return ATTNV_F32;
    case DType::f16: return ATTNV_F16;
    case DType::bf16: return ATTNV_BF16;
  }
  return -1;
}

std::optional<DType> dtype_from_abi(std::int32_t code) {
  switch (code) {
    case ATTNV_F64: return DType::f64;
    case ATTNV_F32: return DType::f32;
    case ATTNV_F16: return DType::f16;
    case ATTNV_BF16: return DType::bf16;
    default: return std::nullopt;
  }
}

namespace {

// Whether `s`, as filled by its sender (struct_size bytes), holds `field`.
template <class Struct, class Field>
bool covers(const Struct& s, const Field& field) {
  const auto end = reinterpret_cast<const unsigned char*>(&field) + sizeof(Field);
  return end <= reinterpret_cast<const unsigned char*>(&s) + s.struct_size;
}

// Whether `a` holds an index array's field: v1's (kv_len, before struct_size) always, later ones
// when struct_size covers them.
bool holds(const attnv_views& a, const std::int64_t* const& field) {
  const auto end = reinterpret_cast<const unsigned char*>(&field) + sizeof(field);
  return end <= reinterpret_cast<const unsigned char*>(&a.struct_size) || covers(a, field);
}

}  // namespace

attnv_problem problem_to_abi(const Problem& p) {
  attnv_problem a{};
  a.B = p.shape.B;
  a.Hq = p.shape.Hq;
  a.Hkv = p.shape.Hkv;
  a.Tq = p.shape.Tq;
  a.Tk = p.shape.Tk;
  a.Dk = p.shape.Dk;
  a.Dv = p.shape.Dv;
  a.dtype = dtype_to_abi(p.dtype);
  a.causal = p.causal ? 1 : 0;
  a.alignment = p.alignment == Alignment::bottom_right ? ATTNV_ALIGN_BOTTOM_RIGHT : ATTNV_ALIGN_TOP_LEFT;
  a.has_mask = p.has_mask;
  a.has_bias = p.has_bias;
  a.has_kv_len = p.has_kv_len;
  a.window_left = p.window.left;
  a.window_right = p.window.right;
  a.scale = p.effective_scale();
  a.softcap = p.softcap.value_or(0.0);
  a.struct_size = sizeof(attnv_problem);
  for (const ProblemOption& o : kProblemOptions) {
    const std::int64_t value = o.get(p);
    if (o.abi_flag) a.*o.abi_flag = value != 0 ? 1 : 0;
    else a.*o.abi_count = value;
  }
  return a;
}

Problem problem_from_abi(const attnv_problem& a) {
  Problem p;
  p.shape = {a.B, a.Hq, a.Hkv, a.Tq, a.Tk, a.Dk, a.Dv};
  const std::optional<DType> t = dtype_from_abi(a.dtype);
  if (!t) throw InputError("attnv_problem.dtype " + std::to_string(a.dtype) + " is not a storage dtype");
  p.dtype = *t;
  p.causal = a.causal != 0;
  p.alignment = a.alignment == ATTNV_ALIGN_BOTTOM_RIGHT ? Alignment::bottom_right : Alignment::top_left;
  p.has_mask = a.has_mask != 0;
  p.has_bias = a.has_bias != 0;
  p.has_kv_len = a.has_kv_len != 0;
  p.window = {a.window_left, a.window_right};
  if (a.scale != p.effective_scale()) p.scale = a.scale;  // p.scale is still unset here
  if (a.softcap != 0) p.softcap = a.softcap;
  // A field appended in version 2 exists only when the sender's struct covers it (a v1 sender's
  // problem has no struct_size: 0 covers nothing). A sender whose struct ends before an option
  // knows nothing of it, so the option keeps its default: no sinks, [Tq,Tk] masks and biases, a
  // contiguous cache, no packed sequences.
  for (const ProblemOption& o : kProblemOptions) {
    if (o.abi_flag && covers(a, a.*o.abi_flag)) o.set(p, a.*o.abi_flag != 0 ? 1 : 0);
    if (o.abi_count && covers(a, a.*o.abi_count)) o.set(p, a.*o.abi_count);
  }
  return p;
}

int element_bytes(const attnv_tensor& t) {
  if (t.dtype == ATTNV_U8) return 1;
  const std::optional<DType> d = dtype_from_abi(t.dtype);
  return d ? dtype_bytes(*d) : 1;
}

attnv_tensor tensor_to_abi(const TensorRef& t, bool is_mask) {
  attnv_tensor a{};
  a.data = t.data;
  a.dtype = is_mask ? ATTNV_U8 : dtype_to_abi(t.dtype);
  a.rank = t.rank;
  for (int i = 0; i < 4; ++i) {
    a.shape[i] = t.shape[static_cast<std::size_t>(i)];
    a.stride[i] = t.stride[static_cast<std::size_t>(i)];
  }
  return a;
}

TensorRef tensor_from_abi(const attnv_tensor& a, DType storage) {
  TensorRef t;
  t.data = a.data;
  // Mask elements are uint8 whatever TensorRef::dtype says (problem/tensor.h).
  t.dtype = dtype_from_abi(a.dtype).value_or(storage);
  t.rank = a.rank;
  for (int i = 0; i < 4; ++i) {
    t.shape[static_cast<std::size_t>(i)] = a.shape[i];
    t.stride[static_cast<std::size_t>(i)] = a.stride[i];
  }
  return t;
}

attnv_views views_to_abi(const KernelViews& v) {
  attnv_views a{};
  a.q = tensor_to_abi(v.q);
  a.k = tensor_to_abi(v.k);
  a.v = tensor_to_abi(v.v);
  a.mask = tensor_to_abi(v.mask, true);
  a.bias = tensor_to_abi(v.bias);
  a.dout = tensor_to_abi(v.dout);
  a.out = tensor_to_abi(v.out);
  a.lse = tensor_to_abi(v.lse);
  a.dq = tensor_to_abi(v.dq);
  a.dk = tensor_to_abi(v.dk);
  a.dv = tensor_to_abi(v.dv);
  a.dsinks = tensor_to_abi(v.dsinks);
  for (const HeadInput& h : kHeadInputs) a.*h.abi_view = tensor_to_abi(v.*h.view);
  for (const IndexInput& x : kIndexInputs) a.*x.abi_view = v.*x.view;
  a.struct_size = sizeof(attnv_views);
  return a;
}

attnv_decode_views decode_views_to_abi(const DecodeViews& v) {
  attnv_decode_views a{};
  a.q = tensor_to_abi(v.q);
  a.k_new = tensor_to_abi(v.k_new);
  a.v_new = tensor_to_abi(v.v_new);
  a.k_cache = tensor_to_abi(v.k_cache);
  a.v_cache = tensor_to_abi(v.v_cache);
  a.cache_len = v.cache_len;
  a.out = tensor_to_abi(v.out);
  a.lse = tensor_to_abi(v.lse);
  for (const HeadInput& h : kHeadInputs) a.*h.abi_decode_view = tensor_to_abi(v.*h.decode_view);
  a.block_table = v.block_table;
  a.struct_size = sizeof(attnv_decode_views);
  return a;
}

DecodeViews decode_views_from_abi(const attnv_decode_views& a, DType storage) {
  DecodeViews v;
  v.q = tensor_from_abi(a.q, storage);
  v.k_new = tensor_from_abi(a.k_new, storage);
  v.v_new = tensor_from_abi(a.v_new, storage);
  v.k_cache = tensor_from_abi(a.k_cache, storage);
  v.v_cache = tensor_from_abi(a.v_cache, storage);
  v.cache_len = a.cache_len;
  v.out = tensor_from_abi(a.out, storage);
  v.lse = tensor_from_abi(a.lse, storage);
  for (const HeadInput& h : kHeadInputs)
    if (const attnv_tensor& t = a.*h.abi_decode_view; covers(a, t)) v.*h.decode_view = tensor_from_abi(t, storage);
  if (covers(a, a.block_table)) v.block_table = a.block_table;
  return v;
}

KernelViews views_from_abi(const attnv_views& a, DType storage) {
  KernelViews v;
  v.q = tensor_from_abi(a.q, storage);
  v.k = tensor_from_abi(a.k, storage);
  v.v = tensor_from_abi(a.v, storage);
  v.mask = tensor_from_abi(a.mask, storage);
  v.bias = tensor_from_abi(a.bias, storage);
  v.dout = tensor_from_abi(a.dout, storage);
  v.out = tensor_from_abi(a.out, storage);
  v.lse = tensor_from_abi(a.lse, storage);
  v.dq = tensor_from_abi(a.dq, storage);
  v.dk = tensor_from_abi(a.dk, storage);
  v.dv = tensor_from_abi(a.dv, storage);
  if (covers(a, a.dsinks)) v.dsinks = tensor_from_abi(a.dsinks, storage);
  for (const HeadInput& h : kHeadInputs)
    if (const attnv_tensor& t = a.*h.abi_view; covers(a, t)) v.*h.view = tensor_from_abi(t, storage);
  for (const IndexInput& x : kIndexInputs)
    if (const auto& f = a.*x.abi_view; holds(a, f)) v.*x.view = f;
  return v;
}

namespace {

constexpr std::uint32_t all_caps() {
  std::uint32_t bits = 0;
  for (const ClaimInfo& c : kClaims) bits |= c.abi_bit;
  return bits;
}
constexpr std::uint32_t kAllCaps = all_caps();
constexpr std::uint32_t kAllDTypeBits = ATTNV_DTYPE_BIT(ATTNV_F64) | ATTNV_DTYPE_BIT(ATTNV_F32) |
                                        ATTNV_DTYPE_BIT(ATTNV_F16) | ATTNV_DTYPE_BIT(ATTNV_BF16);

std::string hex(std::uint32_t x) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%x", x);
  return buf;
}

}  // namespace

std::uint32_t caps_to_abi(const Capabilities& c) {
  std::uint32_t bits = 0;
  for (const ClaimInfo& b : kClaims)
    if (c.*b.member) bits |= b.abi_bit;
  return bits;
}

std::uint32_t dtypes_to_abi(const std::vector<DType>& ds) {
  std::uint32_t bits = 0;
  for (DType d : ds) bits |= ATTNV_DTYPE_BIT(static_cast<std::uint32_t>(dtype_to_abi(d)));
  return bits;
}

void withdrawn_to_abi(const Capabilities& c, std::uint32_t (&out)[4]) {
  for (std::uint32_t& w : out) w = 0;
  for (const auto& [d, keys] : c.withdrawn)
    for (const ClaimInfo& b : kClaims)
      if (keys.count(std::string(b.key))) {
        if (b.abi_bit == 0)
          throw HarnessError("claim '" + std::string(b.key) + "' is withdrawn in " + std::string(dtype_name(d)) +
                             " but has no ABI bit yet");
        out[dtype_to_abi(d)] |= b.abi_bit;
      }
}

void withdrawn_from_abi(const std::uint32_t (&w)[4], Capabilities& c) {
  for (DType d : kAllDTypes) {
    std::uint32_t bits = w[dtype_to_abi(d)];
    for (const ClaimInfo& b : kClaims)
      if (b.abi_bit != 0 && (bits & b.abi_bit)) {
        c.withdrawn[d].insert(std::string(b.key));
        bits &= ~b.abi_bit;
      }
    if (bits != 0)
      throw InputError("withdrawn[" + std::string(dtype_name(d)) + "] has bits " + hex(bits) + " that are not capabilities");
  }
}

Capabilities caps_from_abi(std::uint32_t caps, std::uint32_t dtypes) {
  Capabilities c;
  for (DType d : kAllDTypes)
    if (dtypes & ATTNV_DTYPE_BIT(static_cast<std::uint32_t>(dtype_to_abi(d)))) c.dtypes.push_back(d);
  for (const ClaimInfo& b : kClaims) c.*b.member = (caps & b.abi_bit) != 0;
  return c;
}

attnv_precision precision_to_abi(const PrecisionModel& m) {
  attnv_precision a{};
  a.accum = dtype_to_abi(m.accum);
  a.p_dtype = dtype_to_abi(m.p_dtype);
  a.out = dtype_to_abi(m.out);
  a.block = m.block;
  a.exp_ulps = m.exp_ulps;
  a.struct_size = sizeof(attnv_precision);
  auto stage = [](const std::optional<DType>& t) { return t ? dtype_to_abi(*t) : ATTNV_STAGE_AS_ACCUM; };
  a.dot = stage(m.dot);
  a.score = stage(m.score);
  a.softmax = stage(m.softmax);
  a.pv = stage(m.pv);
  a.flush_subnormals = m.flush_subnormals ? 1 : 0;
  return a;
}

attnv_precision precision_request() {
  attnv_precision a{};
  a.struct_size = sizeof(attnv_precision);
  a.dot = a.score = a.softmax = a.pv = ATTNV_STAGE_AS_ACCUM;
  return a;
}

PrecisionModel precision_from_abi(const attnv_precision& a, DType storage, const std::string& who) {
  const std::string where = who + ": precision model for " + std::string(dtype_name(storage));
  auto dt = [&](std::int32_t code, const char* field) {
    const std::optional<DType> d = dtype_from_abi(code);
    if (!d) throw InputError(where + " has " + field + " = " + std::to_string(code) + ", not a dtype (ATTNV_F64/F32/F16/BF16)");
    return *d;
  };
  PrecisionModel m;
  m.storage = storage;
  m.accum = dt(a.accum, "accum");
  m.p_dtype = dt(a.p_dtype, "p_dtype");
  m.out = dt(a.out, "out");
  if (a.block < 0) throw InputError(where + " has block = " + std::to_string(a.block) + " (must be >= 0)");
  if (!std::isfinite(a.exp_ulps) || a.exp_ulps < 0)
    throw InputError(where + " has exp_ulps = " + std::to_string(a.exp_ulps) + " (must be finite and >= 0)");
  m.block = a.block;
  m.exp_ulps = a.exp_ulps;
  // The stages (later fields): absent from a struct a plugin declared smaller, never written by
  // a plugin built before them (attnv set them to ATTNV_STAGE_AS_ACCUM).
  auto stage = [&](std::int32_t code, const char* field) -> std::optional<DType> {
    if (code == ATTNV_STAGE_AS_ACCUM) return std::nullopt;
    return dt(code, field);
  };
  if (a.struct_size >= offsetof(attnv_precision, pv) + sizeof(a.pv)) {
    m.dot = stage(a.dot, "dot");
    m.score = stage(a.score, "score");
    m.softmax = stage(a.softmax, "softmax");
    m.pv = stage(a.pv, "pv");
  }
  // Later still: a struct that ends before it (an older plugin's or sender's) flushes nothing.
  if (a.struct_size >= offsetof(attnv_precision, flush_subnormals) + sizeof(a.flush_subnormals)) {
    if (a.flush_subnormals != 0 && a.flush_subnormals != 1)
      throw InputError(where + " has flush_subnormals = " + std::to_string(a.flush_subnormals) + " (must be 0 or 1)");
    m.flush_subnormals = a.flush_subnormals == 1;
  }
  return m;
}

attnv_views decode_in_slots(const attnv_decode_views& d, const attnv_problem& p) {
  attnv_views v{};
  v.q = d.q;
  v.k = d.k_new;
  v.v = d.v_new;
  v.kv_len = d.cache_len;
  v.dk = d.k_cache;
  v.dv = d.v_cache;
  v.out = d.out;
  v.lse = d.lse;
  for (const HeadInput& h : kHeadInputs)
    if (covers(d, d.*h.abi_decode_view)) v.*h.abi_view = d.*h.abi_decode_view;
  // The block table rides in dout, which no decode call has: a tensor slot gives it a place in
  // the shared region, a read-only mapping and its name in a fault report, without a new slot
  // in the protocol. Its int64 entries travel as 8-byte elements (ATTNV_F64), like cache_len.
  if (p.page_size > 0 && covers(d, d.block_table) && d.block_table) {
    const std::int64_t blocks = p.Tk / p.page_size;
    v.dout.data = const_cast<std::int64_t*>(d.block_table);
    v.dout.dtype = ATTNV_F64;
    v.dout.rank = 2;
    v.dout.shape[0] = p.B;
    v.dout.shape[1] = blocks;
    v.dout.stride[0] = blocks;
    v.dout.stride[1] = 1;
  }
  v.struct_size = sizeof(attnv_views);
  return v;
}

attnv_decode_views decode_from_slots(const attnv_views& v) {
  attnv_decode_views d{};
  d.q = v.q;
  d.k_new = v.k;
  d.v_new = v.v;
  d.k_cache = v.dk;
  d.v_cache = v.dv;
  d.cache_len = v.kv_len;
  d.out = v.out;
  d.lse = v.lse;
  for (const HeadInput& h : kHeadInputs)
    if (covers(v, v.*h.abi_view)) d.*h.abi_decode_view = v.*h.abi_view;
  d.block_table = static_cast<const std::int64_t*>(v.dout.data);  // null for a contiguous cache
  d.struct_size = sizeof(attnv_decode_views);
  return d;
}

std::string check_kernel_header(const attnv_kernel& k, const std::string& who) {
  const std::string w = who + ": ";
  if (k.abi_version != 1 && k.abi_version != 2) {
    // Nothing else can be read safely from a struct of another ABI version.
    return w + "ABI version " + std::to_string(k.abi_version) + "; this attnv reads versions 1 and 2 (set abi_version = " +
           "ATTNV_ABI_VERSION from the attnv_plugin.h you build with)";
  }
  if (k.abi_version == 1 && k.struct_size < kKernelV1Size)
    return w + "ABI version 1 with struct_size " + std::to_string(k.struct_size) +
           ", smaller than the version 1 attnv_kernel (" + std::to_string(kKernelV1Size) + " bytes)";
  if (k.abi_version == 2 && k.struct_size < kKernelV2BaseSize)
    return w + "ABI version 2 with struct_size " + std::to_string(k.struct_size) + ", smaller than the version 2 attnv_kernel (" +
           std::to_string(kKernelV2BaseSize) + " bytes): set struct_size = sizeof(attnv_kernel)" +
           (k.struct_size == kKernelV1Size ? " (this is the version 1 size: a version 1 struct declared as version 2?)" : "");
  // Larger than this attnv's version 2 struct: fields of a newer header this attnv cannot read,
  // let alone honor; accepting them silently could certify a configuration that never ran.
  if (k.abi_version == 2 && k.struct_size > sizeof(attnv_kernel))
    return w + "ABI version 2 with struct_size " + std::to_string(k.struct_size) + ", larger than the version 2 attnv_kernel (" +
           std::to_string(sizeof(attnv_kernel)) + " bytes) this attnv reads: built against a newer attnv_plugin.h, or struct_size " +
           "is not sizeof(attnv_kernel)";
  return "";
}

attnv_kernel normalized_kernel(const attnv_kernel& k) {
  attnv_kernel n{};
  // A version 1 struct ends before supports, an early version 2 one before precision_for: what
  // lies past the plugin's struct is not the plugin's to promise.
  std::memcpy(&n, &k, k.abi_version >= 2 ? std::min<std::size_t>(k.struct_size, sizeof(attnv_kernel)) : kKernelV1Size);
  return n;
}

std::vector<std::string> check_kernel(const attnv_kernel& raw, const std::string& who) {
  std::vector<std::string> e;
  const std::string w = who + ": ";
  if (std::string header = check_kernel_header(raw, who); !header.empty()) return {header};
  const attnv_kernel k = normalized_kernel(raw);
  if (!k.name) e.push_back(w + "name is NULL");
  else if (k.name[0] == '\0' || std::strpbrk(k.name, " \t\n\r")) e.push_back(w + "name '" + k.name + "' is empty or has spaces");
  if (!k.version) e.push_back(w + "version is NULL (use \"\" when there is none)");
  if (!k.forward) e.push_back(w + "forward is NULL (required)");
  if ((k.caps & ATTNV_CAP_BACKWARD) && !k.backward) e.push_back(w + "declares ATTNV_CAP_BACKWARD but backward is NULL");
  if (!(k.caps & ATTNV_CAP_BACKWARD) && k.backward) e.push_back(w + "backward is set but ATTNV_CAP_BACKWARD is not declared");
  if ((k.caps & ATTNV_CAP_DECODE) && !k.decode) e.push_back(w + "declares ATTNV_CAP_DECODE but decode is NULL");
  if (!(k.caps & ATTNV_CAP_DECODE) && k.decode) e.push_back(w + "decode is set but ATTNV_CAP_DECODE is not declared");
  // Without decode the claim could never be exercised, yet the certificate would list it.
  if ((k.caps & ATTNV_CAP_PAGED_KV) && !(k.caps & ATTNV_CAP_DECODE))
    e.push_back(w + "declares ATTNV_CAP_PAGED_KV without ATTNV_CAP_DECODE (a paged KV cache is a decode call's)");
  if ((k.caps & ATTNV_CAP_VARLEN_KV_LEN) && (~k.caps & (ATTNV_CAP_VARLEN | ATTNV_CAP_KV_LEN)))
    e.push_back(w + "declares ATTNV_CAP_VARLEN_KV_LEN without ATTNV_CAP_VARLEN and ATTNV_CAP_KV_LEN (per-sequence key "
                    "lengths are kv_len with packed sequences)");
  if (k.caps & ~kAllCaps) e.push_back(w + "unknown capability bits " + hex(k.caps & ~kAllCaps));
  if (k.dtypes == 0) e.push_back(w + "declares no dtype");
  if (k.dtypes & ~kAllDTypeBits)
    e.push_back(w + "dtypes has bits " + hex(k.dtypes & ~kAllDTypeBits) + " that are not storage dtypes (f64, f32, f16, bf16)");
  return e;
}

void require_valid_kernel(const attnv_kernel* k, const std::string& who) {
  if (!k) throw InputError(who + ": " ATTNV_ENTRY_SYMBOL "() returned NULL");
  const std::vector<std::string> e = check_kernel(*k, who);
  if (e.empty()) return;
  std::string msg;
  for (const std::string& s : e) msg += (msg.empty() ? "" : "; ") + s;
  throw InputError(msg);
}

}  // namespace attnv::plugin
