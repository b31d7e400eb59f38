// Fuzz target: problem and view validation (problem/validate.h) on descriptors decoded from
// arbitrary bytes: shapes with extreme and negative sizes, strides that are dense, permuted,
// gapped, zero, negative or near 2^63, views of the wrong rank, shape or dtype, buffers that
// overlap. check_problem / check_views / check_shapes must never crash or overflow, and what
// they accept must be safe to use: every accepted set of views is backed by buffers of exactly
// the extent the views address and handed to the naive kernel and the core, under ASan (an
// accepted view a kernel reads past is a hole in check_views), and every Case check_shapes
// accepts is handed to the fast reference.
#include <fuzzer/FuzzedDataProvider.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#if ATTNV_FUZZ_CORE
#include "core/core_kernel.h"
#endif
#include "fuzz/parser_targets.h"
#include "problem/buffers.h"
#include "problem/case.h"
#include "problem/validate.h"
#include "kernels/naive_kernel.h"
#include "reference/fast/fast.h"

namespace {

using namespace attnv;

constexpr std::size_t kMaxBufferBytes = 1 << 16;  // larger views get a fake, never-read address
constexpr double kMaxRunWork = 1 << 16;     // B*Hq*Tq*Tk*(Dk+Dv) of a call worth running

// Mostly small sizes, sometimes the values that break size arithmetic.
std::int64_t size_value(FuzzedDataProvider& in) {
  static constexpr std::int64_t kEdges[] = {0, -1, std::numeric_limits<std::int64_t>::min(),
                                            std::numeric_limits<std::int64_t>::max(), 1LL << 31,
                                            1LL << 32, 1LL << 62, (1LL << 21) + 1, 3037000500LL};
  if (in.ConsumeIntegralInRange<int>(0, 15) != 0) return in.ConsumeIntegralInRange<std::int64_t>(1, 9);
  return in.PickValueInArray(kEdges);
}

DType dtype_value(FuzzedDataProvider& in) {
  return static_cast<DType>(in.ConsumeIntegralInRange<int>(0, 3));
}

std::optional<double> positive_or_bad(FuzzedDataProvider& in) {
  static constexpr double kEdges[] = {0.0, -1.0, std::numeric_limits<double>::infinity(),
                                      std::numeric_limits<double>::quiet_NaN(), 1e-300, 1e300};
  switch (in.ConsumeIntegralInRange<int>(0, 3)) {
    case 0: return std::nullopt;
    case 1: return in.PickValueInArray(kEdges);
    default: return std::ldexp(1.0 + in.ConsumeIntegralInRange<int>(0, 7) / 8.0, in.ConsumeIntegralInRange<int>(-4, 5));
  }
}

Problem decode_problem(FuzzedDataProvider& in) {
  Problem p;
  Shape& s = p.shape;
  s.B = size_value(in);
  s.Hkv = size_value(in);
  // Hq a multiple of Hkv most of the time, so inputs get past the divisibility rule.
  if (!in.ConsumeBool() || __builtin_mul_overflow(s.Hkv, in.ConsumeIntegralInRange<std::int64_t>(1, 3), &s.Hq))
    s.Hq = size_value(in);
  s.Tq = size_value(in);
  s.Tk = size_value(in);
  s.Dk = size_value(in);
  s.Dv = size_value(in);
  p.dtype = dtype_value(in);
  p.scale = positive_or_bad(in);
  p.softcap = positive_or_bad(in);
  p.causal = in.ConsumeBool();
  p.alignment = in.ConsumeBool() ? Alignment::top_left : Alignment::bottom_right;
  p.window.left = in.ConsumeIntegralInRange<std::int64_t>(-2, 6);
  p.window.right = in.ConsumeIntegralInRange<std::int64_t>(-2, 6);
  p.has_mask = in.ConsumeBool();
  p.has_bias = in.ConsumeBool();
  p.has_kv_len = in.ConsumeBool();
  return p;
}

// The storage behind the views of one call: one exactly sized heap buffer per view, so ASan
// sees any access past what the view addresses.
struct Arena {
  std::vector<std::unique_ptr<std::vector<unsigned char>>> buffers;
  std::uintptr_t next_fake = 0x100000;  // fake addresses for views too large or invalid to back
  bool all_backed = true;
};

// Elements addressed by a view (largest offset + 1), or -1 if it cannot be backed.
std::int64_t addressed_elements(const TensorRef& t) {
  if (t.rank < 1 || t.rank > 4) return -1;
  std::int64_t last = 0;
  for (int d = 0; d < t.rank; ++d) {
    const auto du = static_cast<std::size_t>(d);
    if (t.shape[du] < 1) return 0;
    if (t.stride[du] < 0 || t.shape[du] > (1 << 16) || t.stride[du] > (1 << 16)) return -1;
    last += (t.shape[du] - 1) * t.stride[du];
  }
  return last + 1;
}

int element_bytes(DType t) {
  return t == DType::f64 ? 8 : t == DType::f32 ? 4 : 2;
}

void back_view(TensorRef& t, Arena& arena, bool is_mask) {
  const std::int64_t n = addressed_elements(t);
  const std::int64_t item = is_mask ? 1 : element_bytes(t.dtype);
  if (n < 0 || static_cast<std::uint64_t>(n) * static_cast<std::uint64_t>(item) > kMaxBufferBytes) {
    t.data = reinterpret_cast<void*>(arena.next_fake);
    arena.next_fake += 0x100000;
    arena.all_backed = false;
    return;
  }
  arena.buffers.push_back(std::make_unique<std::vector<unsigned char>>(
      static_cast<std::size_t>(std::max<std::int64_t>(n * item, 1)), 0));
  t.data = arena.buffers.back()->data();
}

// A view of the wanted shape laid out in one of several ways, sometimes wrong on purpose.
TensorRef decode_view(FuzzedDataProvider& in, DType dtype, std::array<std::int64_t, 4> want, int rank,
                      Arena& arena, bool is_mask = false) {
  TensorRef t;
  t.dtype = in.ConsumeIntegralInRange<int>(0, 7) == 0 ? dtype_value(in) : dtype;
  t.rank = in.ConsumeIntegralInRange<int>(0, 15) == 0 ? in.ConsumeIntegralInRange<int>(-1, 5) : rank;
  t.shape = want;
  if (in.ConsumeIntegralInRange<int>(0, 7) == 0) {
    const auto d = static_cast<std::size_t>(in.ConsumeIntegralInRange<int>(0, 3));
    std::int64_t nudged = 0;
    const bool nudge = in.ConsumeBool() && !__builtin_add_overflow(t.shape[d], in.ConsumeIntegralInRange<std::int64_t>(-1, 1), &nudged);
    t.shape[d] = nudge ? nudged : size_value(in);
  }
  const int r = std::clamp(t.rank, 1, 4);
  std::array<std::int64_t, 4> dims = t.shape;
  // Layout arithmetic stays in range: 4 dims of at most 2^15 (+ gaps) stay below 2^62.
  for (auto& v : dims) v = std::clamp<std::int64_t>(v, 1, 1 << 15);
  switch (in.ConsumeIntegralInRange<int>(0, 5)) {
    case 0:  // dense
      t.stride = dense_strides(dims, r);
      break;
    case 1: {  // dense in another dimension order (BTHD and friends)
      std::array<int, 4> order{0, 1, 2, 3};
      for (int i = r - 1; i > 0; --i) std::swap(order[static_cast<std::size_t>(i)], order[static_cast<std::size_t>(in.ConsumeIntegralInRange<int>(0, i))]);
      std::int64_t step = 1;
      for (int i = r - 1; i >= 0; --i) {
        const auto d = static_cast<std::size_t>(order[static_cast<std::size_t>(i)]);
        t.stride[d] = step;
        step *= dims[d];
      }
      break;
    }
    case 2: {  // gapped: unused elements after every dimension
      std::int64_t step = 1;
      for (int d = r - 1; d >= 0; --d) {
        const auto du = static_cast<std::size_t>(d);
        step += in.ConsumeIntegralInRange<std::int64_t>(0, 3);
        t.stride[du] = step;
        step *= dims[du];
      }
      break;
    }
    case 3:  // one broadcast (zero-stride) dimension
      t.stride = dense_strides(dims, r);
      t.stride[static_cast<std::size_t>(in.ConsumeIntegralInRange<int>(0, r - 1))] = 0;
      break;
    case 4:  // small arbitrary strides, negative included
      for (int d = 0; d < r; ++d) t.stride[static_cast<std::size_t>(d)] = in.ConsumeIntegralInRange<std::int64_t>(-2, 40);
      break;
    default:  // strides that overflow the extent arithmetic
      for (int d = 0; d < r; ++d) t.stride[static_cast<std::size_t>(d)] = size_value(in);
      break;
  }
  back_view(t, arena, is_mask);
  return t;
}

// Presence follows the problem, but not always.
bool present(FuzzedDataProvider& in, bool wanted) {
  return in.ConsumeIntegralInRange<int>(0, 15) == 0 ? !wanted : wanted;
}

// The element count of a small tensor; 0 for one too large to allocate here (check_shapes then
// sees a wrong size, which is also worth feeding it).
std::size_t count_of(std::int64_t a, std::int64_t b = 1, std::int64_t c = 1, std::int64_t d = 1) {
  const double n = static_cast<double>(a) * static_cast<double>(b) * static_cast<double>(c) * static_cast<double>(d);
  return n >= 0 && n <= (1 << 16) ? static_cast<std::size_t>(n) : 0;
}

// The work of a call, in double (the int64 product may overflow for shapes check_problem allows).
double work(const Shape& s) {
  return static_cast<double>(s.B) * static_cast<double>(s.Hq) * static_cast<double>(s.Tq) *
         static_cast<double>(s.Tk) * (static_cast<double>(s.Dk) + static_cast<double>(s.Dv));
}

// Small values exact in every dtype, so the inputs the kernels read are valid.
double small_value(FuzzedDataProvider& in) {
  return static_cast<double>(in.ConsumeIntegral<std::int8_t>()) / 16.0;
}

void fill_inputs(FuzzedDataProvider& in, const Problem& p, KernelViews& v, std::vector<std::int64_t>& kv_len) {
  auto fill = [&](const TensorRef& t) {
    if (!t.present()) return;
    std::array<std::int64_t, 4> idx{};
    for (idx[0] = 0; idx[0] < t.shape[0]; ++idx[0])
      for (idx[1] = 0; idx[1] < (t.rank > 1 ? t.shape[1] : 1); ++idx[1])
        for (idx[2] = 0; idx[2] < (t.rank > 2 ? t.shape[2] : 1); ++idx[2])
          for (idx[3] = 0; idx[3] < (t.rank > 3 ? t.shape[3] : 1); ++idx[3]) store(t, idx, small_value(in));
  };
  fill(v.q);
  fill(v.k);
  fill(v.v);
  fill(v.bias);
  if (v.mask.present()) {
    auto* m = static_cast<std::uint8_t*>(v.mask.data);
    for (std::int64_t i = 0; i < v.mask.shape[0]; ++i)
      for (std::int64_t j = 0; j < v.mask.shape[1]; ++j) m[i * v.mask.stride[0] + j * v.mask.stride[1]] = in.ConsumeBool();
  }
  // Filled after check_views accepted the views (zeros then), so only valid lengths: the
  // contract 0 <= kv_len[b] <= Tk is what check_views enforces (problem/tests cover it).
  if (v.kv_len)
    for (auto& n : kv_len) n = in.ConsumeIntegralInRange<std::int64_t>(0, p.shape.Tk);
}

std::vector<std::vector<unsigned char>> snapshot(const Arena& arena, std::size_t n_inputs) {
  std::vector<std::vector<unsigned char>> s;
  for (std::size_t i = 0; i < n_inputs && i < arena.buffers.size(); ++i) s.push_back(*arena.buffers[i]);
  return s;
}

// Runs a kernel on views check_views accepted. ASan reports any access outside the buffers; a
// write into an input buffer is reported here.
void run_kernel(Kernel& kernel, const Problem& p, const KernelViews& v, const Arena& arena, std::size_t n_inputs) {
  if (!kernel.capabilities().unsupported(p).empty()) return;
  const auto before = snapshot(arena, n_inputs);
  try {
    kernel.forward(p, v);
  } catch (const InputError&) {
    return;  // a kernel may refuse views it does not support (the core's own validation)
  }
  if (snapshot(arena, n_inputs) != before) {
    std::fprintf(stderr, "fuzz: %s wrote into an input of accepted views: %s\n", kernel.name().c_str(),
                 describe(p).c_str());
    std::abort();
  }
}

void fuzz_views(FuzzedDataProvider& in, const Problem& p) {
  const Shape& s = p.shape;
  Arena arena;
  KernelViews v;
  // Inputs first: their buffers are the first ones in the arena (snapshot relies on it).
  v.q = decode_view(in, p.dtype, {s.B, s.Hq, s.Tq, s.Dk}, 4, arena);
  v.k = decode_view(in, p.dtype, {s.B, s.Hkv, s.Tk, s.Dk}, 4, arena);
  v.v = decode_view(in, p.dtype, {s.B, s.Hkv, s.Tk, s.Dv}, 4, arena);
  if (present(in, p.has_mask)) v.mask = decode_view(in, p.dtype, {s.Tq, s.Tk}, 2, arena, true);
  if (present(in, p.has_bias)) v.bias = decode_view(in, p.dtype, {s.Tq, s.Tk}, 2, arena);
  // kv_len must point to B int64: only offered when B is small enough to allocate (otherwise
  // absent, which check_views reports as a presence mismatch when the problem asks for it).
  std::vector<std::int64_t> kv_len(static_cast<std::size_t>(std::clamp<std::int64_t>(s.B, 0, 1 << 16)));
  if (present(in, p.has_kv_len) && s.B >= 1 && s.B <= (1 << 16)) v.kv_len = kv_len.data();
  const std::size_t n_inputs = arena.buffers.size();
  const DType lse_type = p.dtype == DType::f64 ? DType::f64 : DType::f32;
  if (present(in, true)) v.out = decode_view(in, p.dtype, {s.B, s.Hq, s.Tq, s.Dv}, 4, arena);
  if (in.ConsumeBool()) v.lse = decode_view(in, lse_type, {s.B, s.Hq, s.Tq, 0}, 3, arena);
  // Now and then an output placed on top of an input or of the other output.
  if (v.out.present() && in.ConsumeIntegralInRange<int>(0, 7) == 0) {
    const TensorRef* targets[] = {&v.q, &v.k, &v.v, &v.lse};
    const TensorRef* t = targets[in.ConsumeIntegralInRange<int>(0, 3)];
    if (t->present()) v.out.data = t->data;
  }

  if (!check_views(p, v).empty()) return;
  // Accepted: usable if every view has real memory and the call is small enough to run.
  const bool small = work(s) <= kMaxRunWork;
  if (!arena.all_backed || !small) return;
  fill_inputs(in, p, v, kv_len);
  kernels::NaiveKernel naive;
  run_kernel(naive, p, v, arena, n_inputs);
#if ATTNV_FUZZ_CORE
  core::CoreKernel core_kernel(core::ForwardOptions{.threads = 1});
  run_kernel(core_kernel, p, v, arena, n_inputs);
#endif
}

// A Case whose tensors have the problem's sizes, or sizes a little off; check_shapes must catch
// every wrong size, and a Case it accepts must be safe for the reference to index.
void fuzz_case(FuzzedDataProvider& in, const Problem& p) {
  const Shape& s = p.shape;
  Case c;
  c.problem = p;
  auto sized = [&](std::size_t n) {
    const int off = in.ConsumeIntegralInRange<int>(0, 7) == 0 ? in.ConsumeIntegralInRange<int>(-1, 1) : 0;
    return std::vector<double>(off < 0 && n == 0 ? 0 : n + static_cast<std::size_t>(off), 0.0);
  };
  c.q = sized(count_of(s.B, s.Hq, s.Tq, s.Dk));
  c.k = sized(count_of(s.B, s.Hkv, s.Tk, s.Dk));
  c.v = sized(count_of(s.B, s.Hkv, s.Tk, s.Dv));
  if (present(in, p.has_bias)) c.bias = sized(count_of(s.Tq, s.Tk));
  if (present(in, p.has_mask)) {
    c.mask.resize(sized(count_of(s.Tq, s.Tk)).size());
    for (auto& m : c.mask) m = in.ConsumeIntegralInRange<std::uint8_t>(0, in.ConsumeIntegralInRange<int>(0, 15) == 0 ? 2 : 1);
  }
  if (present(in, p.has_kv_len)) {
    c.kv_len.resize(sized(count_of(s.B)).size());
    for (auto& n : c.kv_len) n = in.ConsumeIntegralInRange<std::int64_t>(-1, std::clamp<std::int64_t>(s.Tk, 0, 64) + 1);
  }
  for (auto* vec : {&c.q, &c.k, &c.v, &c.bias})
    for (auto& x : *vec) x = small_value(in);
  if (!check_shapes(c).empty()) return;
  if (work(s) > kMaxRunWork) return;
  attnv::fuzz::expect_only_input_errors([&] { reference::fast_forward(c, reference::FastOptions{.threads = 1}); });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  const Problem p = decode_problem(in);
  (void)check_problem(p);
  attnv::fuzz::expect_only_input_errors([&] {
    if (in.ConsumeBool())
      fuzz_views(in, p);
    else
      fuzz_case(in, p);
  });
  return 0;
}
