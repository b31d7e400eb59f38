// Speed of the optimized core's forward and backward, as GFLOP/s and as a share of the machine's FMA peak
// measured by the same binary. Run:
//   build/core/bench/core_bench --benchmark_out=core_bench.json --benchmark_out_format=json
// Forward: B=1, H=8, Tq=Tk=4096, Dk=Dv in {64, 128}, causal (top-left) or not, f32/f16/bf16,
// dense BHTD, 2 threads. Inputs: standard normal values (gen/rng.h, fixed seed) rounded to the
// storage dtype. Backward: f32, D=128, causal or not, the same shape (FLOPs 2.5 x the forward's
// count, the FlashAttention convention). Counters:
//   GFLOPs         4 B H Tq Tk D per second (the conventional count, causal or not)
//   useful_GFLOPs  4 B H D per visible (query, key) pair per second
//   peak_share / useful_peak_share   the two above over the FMA peak of the widest vector ISA
//                  this machine has (BM_FmaPeakAvx512 where AVX-512F is present, else
//                  BM_FmaPeak, AVX2), 2 threads; peak_vector_bits says which (512 or 256)
//   cpu_*          the same per CPU second of the threads (x 2): the machine is shared, and
//                  this is what the figures would be with both cores to ourselves
//   cpu_utilisation  CPU seconds per wall second (2 = no contention)
#include <benchmark/benchmark.h>
#include <immintrin.h>
#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/core_kernel.h"
#include "core/decode_sweep.h"
#include "core/isa.h"
#include "core/row_kernels.h"
#include "gen/rng.h"
#include "problem/buffers.h"
#include "problem/dtype.h"
#include "problem/error.h"
#include "util/parallel.h"

namespace {

using namespace attnv;

constexpr int kThreads = 2;

double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// A rate two ways: per wall second, and per CPU second times kThreads (what the threads would
// reach with the cores to themselves; the machine is shared, so the two can differ a lot).
struct Rate {
  double wall = 0;
  double cpu = 0;
};

// ---- FMA peak: independent FMA chains on every thread, AVX2 and AVX-512 ---------------------

// 12 independent accumulators hide the FMA latency (4 cycles x 2 ports needs >= 8).
__attribute__((target("avx2,fma"))) float fma_chains(std::int64_t iters) {
  __m256 acc[12];
  for (int i = 0; i < 12; ++i) acc[i] = _mm256_set1_ps(static_cast<float>(i) * 1e-3f);
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (std::int64_t it = 0; it < iters; ++it)
    for (int i = 0; i < 12; ++i) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
  __m256 s = acc[0];
  for (int i = 1; i < 12; ++i) s = _mm256_add_ps(s, acc[i]);
  float out[8];
  _mm256_storeu_ps(out, s);
  return out[0];
}
constexpr double kFlopsPerIter = 12 * 8 * 2;

// The same on 512-bit vectors (called only where the CPU has AVX-512F). 16 accumulators: 32 zmm
// registers hold them, and two 512-bit FMA ports of latency 4 need >= 8 in flight.
__attribute__((target("avx512f"))) float fma_chains_avx512(std::int64_t iters) {
  __m512 acc[16];
  for (int i = 0; i < 16; ++i) acc[i] = _mm512_set1_ps(static_cast<float>(i) * 1e-3f);
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (std::int64_t it = 0; it < iters; ++it)
    for (int i = 0; i < 16; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  __m512 sum = acc[0];
  for (int i = 1; i < 16; ++i) sum = _mm512_add_ps(sum, acc[i]);
  float out[16];  // not _mm512_reduce_add_ps: GCC 12's header warns inside it (-Wuninitialized)
  _mm512_storeu_ps(out, sum);
  return out[0];
}
constexpr double kFlopsPerIter512 = 16 * 16 * 2;

// The same with AVX512_BF16's vdpbf16ps (called only where the CPU has it): two bf16 products
// per f32 lane per instruction, 64 FLOP per instruction. The avx512_bf16 path's Q.K^T and P.V
// run on it (core/microkernels_avx512_bf16.cpp); its rate against the FMA's says what that path
// can reach on this CPU (Zen 4: the same instruction rate, twice the FLOPs).
__attribute__((target("avx512f,avx512bf16"))) float dpbf16_chains(std::int64_t iters) {
  __m512 acc[16];
  for (int i = 0; i < 16; ++i) acc[i] = _mm512_set1_ps(static_cast<float>(i) * 1e-3f);
  __m512i a = _mm512_set1_epi32(0x3f803f80);  // (1, 1) in bf16
  const __m512i b = _mm512_set1_epi32(0x33d633d6);  // (1e-7, 1e-7), about
  for (std::int64_t it = 0; it < iters; ++it) {
    for (int i = 0; i < 16; ++i) acc[i] = _mm512_dpbf16_ps(acc[i], reinterpret_cast<__m512bh&>(a), reinterpret_cast<const __m512bh&>(b));
    __asm__ volatile("" : "+v"(a));  // a loop-carried operand: the compiler cannot fold the chain
  }
  __m512 sum = acc[0];
  for (int i = 1; i < 16; ++i) sum = _mm512_add_ps(sum, acc[i]);
  float out[16];
  _mm512_storeu_ps(out, sum);
  return out[0];
}
constexpr double kFlopsPerIterDp = 16 * 16 * 4;

// The core's CPU detection (it also checks that the OS saves the zmm state).
bool has_avx512() { return core::cpu_features().avx512f; }

using core::Isa;  // the peak uses avx2 and avx512 (the FMA chains' vector width)

// GFLOP/s of kThreads threads running the ISA's FMA chains at once.
Rate measure_peak(std::int64_t iters, Isa isa = Isa::avx2) {
  std::atomic<float> sink{0};
  const double c0 = process_cpu_seconds();
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < kThreads; ++t)
    pool.emplace_back([&] { sink = sink + (isa == Isa::avx512 ? fma_chains_avx512(iters) : fma_chains(iters)); });
  for (auto& th : pool) th.join();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double cpu = process_cpu_seconds() - c0;
  benchmark::DoNotOptimize(sink.load());
  const double gflop = (isa == Isa::avx512 ? kFlopsPerIter512 : kFlopsPerIter) * static_cast<double>(iters) * kThreads * 1e-9;
  return {gflop / s, gflop / cpu * kThreads};
}

// The widest ISA the machine has: the shares are against its peak (issue 13: a 512-bit core
// judged against a 256-bit peak would look twice as good as it is).
Isa peak_isa() { return has_avx512() ? Isa::avx512 : Isa::avx2; }
int vector_bits(Isa isa) { return isa == Isa::avx512 ? 512 : 256; }

// The best of a few runs, measured once per process (the share counters divide by it).
Rate peak_gflops() {
  static const Rate peak = [] {
    Rate best;
    for (int i = 0; i < 5; ++i) {
      const Rate r = measure_peak(100'000'000, peak_isa());
      best = {std::max(best.wall, r.wall), std::max(best.cpu, r.cpu)};
    }
    return best;
  }();
  return peak;
}

// The FMA peak of one ISA: the best of the timed passes (wall and per CPU second).
void fma_peak(benchmark::State& state, Isa isa) {
  const std::int64_t iters = 50'000'000;
  Rate best;
  for (auto _ : state) {
    const Rate r = measure_peak(iters, isa);
    best = {std::max(best.wall, r.wall), std::max(best.cpu, r.cpu)};
  }
  const double flops = isa == Isa::avx512 ? kFlopsPerIter512 : kFlopsPerIter;
  state.counters["GFLOPs"] = benchmark::Counter(flops * iters * kThreads * 1e-9,
                                                benchmark::Counter::kIsIterationInvariantRate);
  state.counters["best_GFLOPs"] = best.wall;
  state.counters["best_GFLOPs_cpu"] = best.cpu;
  state.counters["threads"] = kThreads;
  state.SetLabel(isa == Isa::avx512 ? "AVX-512 (512-bit FMA)" : "AVX2 (256-bit FMA)");
}

void BM_FmaPeak(benchmark::State& state) { fma_peak(state, Isa::avx2); }
BENCHMARK(BM_FmaPeak)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(5);

// vdpbf16ps chains on kThreads threads, the best of the timed passes, as BM_FmaPeak*.
void BM_Bf16DotPeak(benchmark::State& state) {
  if (!core::cpu_features().avx512bf16) {
    state.SkipWithError("this CPU has no AVX512_BF16");
    return;
  }
  const std::int64_t iters = 50'000'000;
  Rate best;
  for (auto _ : state) {
    std::atomic<float> sink{0};
    const double c0 = process_cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (int t = 0; t < kThreads; ++t) pool.emplace_back([&] { sink = sink + dpbf16_chains(iters); });
    for (auto& th : pool) th.join();
    const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double cpu = process_cpu_seconds() - c0;
    benchmark::DoNotOptimize(sink.load());
    const double gflop = kFlopsPerIterDp * static_cast<double>(iters) * kThreads * 1e-9;
    best = {std::max(best.wall, gflop / sec), std::max(best.cpu, gflop / cpu * kThreads)};
  }
  state.counters["best_GFLOPs"] = best.wall;
  state.counters["best_GFLOPs_cpu"] = best.cpu;
  state.counters["over_fma_peak"] = best.cpu / peak_gflops().cpu;
  state.counters["threads"] = kThreads;
  state.SetLabel("AVX512_BF16 (vdpbf16ps)");
}
BENCHMARK(BM_Bf16DotPeak)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(5);

void BM_FmaPeakAvx512(benchmark::State& state) {
  if (!has_avx512()) {
    state.SkipWithError("this CPU has no AVX-512F");
    return;
  }
  fma_peak(state, Isa::avx512);
}
BENCHMARK(BM_FmaPeakAvx512)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(5);

// ---- core forward ---------------------------------------------------------------------------


// Dense [B, H, T, D] buffers of one call, in the storage dtype.
struct Buffers {
  std::vector<unsigned char> q, k, v, out, lse, dout, dq, dk, dv;
  KernelViews views;
};

// A dense tensor in `bytes`, 64-byte aligned as frameworks' allocators give (PyTorch's CPU
// allocator aligns to 64; malloc's 16 made every 512-bit load of an f32 row straddle two cache
// lines): normals rounded to t, or zeros without rng.
TensorRef fill(std::vector<unsigned char>& bytes, DType t, std::array<std::int64_t, 4> shape,
               int rank, gen::Rng* rng) {
  std::int64_t n = 1;
  for (int i = 0; i < rank; ++i) n *= shape[i];
  bytes.assign(static_cast<std::size_t>(n * dtype_bytes(t) + 64), 0);
  void* at = bytes.data();
  std::size_t room = bytes.size();
  std::align(64, 1, at, room);
  TensorRef r{at, t, rank, shape, dense_strides(shape, rank)};
  if (rng)
    for (std::int64_t i = 0; i < n; ++i) {
      std::array<std::int64_t, 4> idx{};
      std::int64_t rem = i;
      for (int d = rank - 1; d >= 0; --d) idx[d] = rem % shape[d], rem /= shape[d];
      store(r, idx, round_to(t, rng->normal()));
    }
  return r;
}

Problem bench_problem(DType t, std::int64_t T, std::int64_t D, bool causal) {
  Problem p;
  p.shape = {1, 8, 8, T, T, D, D};
  p.dtype = t;
  p.causal = causal;
  return p;
}

void make_buffers(const Problem& p, Buffers& b) {
  gen::Rng rng(20261121);
  const Shape& s = p.shape;
  b.views.q = fill(b.q, p.dtype, {s.B, s.Hq, s.Tq, s.Dk}, 4, &rng);
  b.views.k = fill(b.k, p.dtype, {s.B, s.Hkv, s.Tk, s.Dk}, 4, &rng);
  b.views.v = fill(b.v, p.dtype, {s.B, s.Hkv, s.Tk, s.Dv}, 4, &rng);
  b.views.out = fill(b.out, p.dtype, {s.B, s.Hq, s.Tq, s.Dv}, 4, nullptr);
  b.views.lse = fill(b.lse, lse_dtype(p.dtype), {s.B, s.Hq, s.Tq, 0}, 3, nullptr);
}

// The counters of a pass from its FLOP counts (all pairs / visible pairs) and the timed calls.
void set_counters(benchmark::State& state, double gflop_all, double gflop_useful, double seconds,
                  double cpu_seconds, const Rate& peak) {
  const double per_call = seconds / static_cast<double>(state.iterations());
  state.counters["GFLOPs"] = benchmark::Counter(gflop_all, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["useful_GFLOPs"] = benchmark::Counter(
      gflop_useful, benchmark::Counter::kIsIterationInvariantRate);
  const double cpu_per_call = cpu_seconds / static_cast<double>(state.iterations()) / kThreads;
  state.counters["peak_share"] = gflop_all / per_call / peak.wall;
  state.counters["useful_peak_share"] = gflop_useful / per_call / peak.wall;
  state.counters["peak_GFLOPs"] = peak.wall;
  state.counters["peak_vector_bits"] = vector_bits(peak_isa());
  // CPU seconds of all threads per wall second: kThreads when the cores were ours alone; less
  // when the (shared) machine was busy, which lowers every wall-clock figure above.
  state.counters["cpu_utilisation"] = cpu_seconds / seconds;
  // The same figures per CPU second (times kThreads): robust to other users of the machine.
  state.counters["cpu_GFLOPs"] = gflop_all / cpu_per_call;
  state.counters["cpu_useful_GFLOPs"] = gflop_useful / cpu_per_call;
  state.counters["cpu_peak_GFLOPs"] = peak.cpu;
  state.counters["cpu_peak_share"] = gflop_all / cpu_per_call / peak.cpu;
  state.counters["cpu_useful_peak_share"] = gflop_useful / cpu_per_call / peak.cpu;
}

// 4 B H D per (query, key) pair (GFLOP): the two products of the forward.
double gflop_per_pair(const Problem& p) {
  return 4.0 * static_cast<double>(p.shape.B * p.shape.Hq * p.shape.Dk) * 1e-9;
}
double pairs(const Problem& p, bool visible_only) {
  const double tq = static_cast<double>(p.shape.Tq), tk = static_cast<double>(p.shape.Tk);
  return visible_only && p.causal ? tq * (tq + 1) / 2 : tq * tk;
}

// ---- forward peak memory -----------------------------------------------------------------
// The target: at T = 16384 (B=1, H=8, D=128, f32) the forward's peak resident memory stays below
// inputs + outputs + 64 MiB. Measured from the kernel's side: the inputs and outputs are resident
// before the call (filled or zeroed), the peak-RSS mark is reset to the current RSS
// (/proc/self/clear_refs, "5"), and VmHWM after the call minus VmRSS before it is what the call
// added at its peak: workspace, thread stacks, anything the allocator kept. Heap, aligned_alloc
// and mmap alike are counted, which a malloc hook would not promise. The allocator's free memory
// is returned to the system first (malloc_trim): forwards benchmarked before leave their freed
// workspaces resident, and a call that reuses them adds nothing to VmRSS (0.0 MiB in a full run
// of session 22 against 5.3 alone), which hid the workspace from the figure. The trim does not
// reach the pool threads' arenas (1.1 MiB after one forward), so this benchmark is also
// registered before every forward: whatever the filter, it runs on a fresh heap.

// A "VmRSS:"-style field of /proc/self/status, in bytes (-1 when absent).
std::int64_t proc_status_bytes(const std::string& key) {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind(key + ":", 0) == 0) return std::stoll(line.substr(key.size() + 1)) * 1024;
  return -1;
}

bool reset_peak_rss() {
  std::ofstream f("/proc/self/clear_refs");
  f << "5";
  f.flush();
  return static_cast<bool>(f);
}

void BM_CoreForwardMemory(benchmark::State& state) {
  const Problem p = bench_problem(DType::f32, state.range(0), 128, false);
  Buffers b;
  make_buffers(p, b);
  const double io_bytes = static_cast<double>(b.q.size() + b.k.size() + b.v.size() + b.out.size() + b.lse.size());
  core::CoreKernel kernel({.threads = kThreads});
  double added = 0;
  for (auto _ : state) {
    malloc_trim(0);
    const std::int64_t before = proc_status_bytes("VmRSS");
    if (before < 0 || !reset_peak_rss() || proc_status_bytes("VmHWM") > before + (1 << 20)) {
      state.SkipWithError("cannot reset the peak-RSS mark (/proc/self/clear_refs)");
      return;
    }
    kernel.forward(p, b.views);
    benchmark::ClobberMemory();
    added = std::max(added, static_cast<double>(proc_status_bytes("VmHWM") - before));
  }
  constexpr double kMiB = 1024.0 * 1024.0, kBudget = 64 * kMiB;
  state.counters["inputs_outputs_MiB"] = io_bytes / kMiB;
  state.counters["added_peak_MiB"] = added / kMiB;
  state.counters["budget_MiB"] = kBudget / kMiB;
  state.counters["budget_share"] = added / kBudget;  // target: < 1
  state.SetLabel("f32 full D=128 T=" + std::to_string(p.shape.Tq));
}
BENCHMARK(BM_CoreForwardMemory)->Arg(16384)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();

// Reports a path this CPU lacks as the case's error (never runs it on another path): true then.
bool lacks_path(benchmark::State& state, Isa isa) {
  const std::string m = core::missing_features(isa, core::cpu_features());
  if (!m.empty()) state.SkipWithError(("this CPU lacks " + m).c_str());
  return !m.empty();
}

// Args: dtype, T, D, causal, ISA path (static_cast<int>(core::Isa): 0 best, 1 portable, 2 avx2,
// 3 avx512, 4 avx512_bf16; a path this CPU lacks is reported as an error, not run on another path).
void BM_CoreForward(benchmark::State& state) {
  const DType dtype = static_cast<DType>(state.range(0));
  const std::int64_t T = state.range(1), D = state.range(2);
  const bool causal = state.range(3) != 0;
  const auto isa = static_cast<Isa>(state.range(4));
  if (lacks_path(state, isa)) return;
  const Problem p = bench_problem(dtype, T, D, causal);
  Buffers b;
  make_buffers(p, b);
  core::CoreKernel kernel({.threads = kThreads, .isa = isa});
  const Rate peak = peak_gflops();

  double seconds = 0, cpu_seconds = 0;
  for (auto _ : state) {
    const double c0 = process_cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    kernel.forward(p, b.views);
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    cpu_seconds += process_cpu_seconds() - c0;
    benchmark::ClobberMemory();
  }
  set_counters(state, gflop_per_pair(p) * pairs(p, false), gflop_per_pair(p) * pairs(p, true),
               seconds, cpu_seconds, peak);
  state.SetLabel(std::string(dtype_name(dtype)) + (causal ? " causal" : " full") + " D=" +
                 std::to_string(D) + " T=" + std::to_string(T) + " " + core::isa_name(kernel.isa()));
}

// Backward: the forward once (its O and LSE are the backward's inputs), then timed backward
// calls. FLOPs: the conventional 2.5 x the forward's count (five products: S, dP, dV, dK, dQ),
// which is what the one-pass driver computes; two passes recompute S and dP (seven products).
// The fifth argument: 0 lets the core choose (one pass at this shape), 2 forces two passes.
void BM_CoreBackward(benchmark::State& state) {
  const DType dtype = static_cast<DType>(state.range(0));
  const std::int64_t T = state.range(1), D = state.range(2);
  const bool causal = state.range(3) != 0;
  const int passes = static_cast<int>(state.range(4));
  const Problem p = bench_problem(dtype, T, D, causal);
  Buffers b;
  make_buffers(p, b);
  const Shape& s = p.shape;
  gen::Rng rng(20261122);
  b.views.dout = fill(b.dout, p.dtype, {s.B, s.Hq, s.Tq, s.Dv}, 4, &rng);
  b.views.dq = fill(b.dq, p.dtype, {s.B, s.Hq, s.Tq, s.Dk}, 4, nullptr);
  b.views.dk = fill(b.dk, p.dtype, {s.B, s.Hkv, s.Tk, s.Dk}, 4, nullptr);
  b.views.dv = fill(b.dv, p.dtype, {s.B, s.Hkv, s.Tk, s.Dv}, 4, nullptr);
  core::CoreKernel kernel({.threads = kThreads, .backward_passes = passes});
  kernel.forward(p, b.views);
  const Rate peak = peak_gflops();

  double seconds = 0, cpu_seconds = 0;
  for (auto _ : state) {
    const double c0 = process_cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    kernel.backward(p, b.views);
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    cpu_seconds += process_cpu_seconds() - c0;
    benchmark::ClobberMemory();
  }
  set_counters(state, 2.5 * gflop_per_pair(p) * pairs(p, false),
               2.5 * gflop_per_pair(p) * pairs(p, true), seconds, cpu_seconds, peak);
  state.SetLabel(std::string(dtype_name(dtype)) + (causal ? " causal" : " full") + " D=" +
                 std::to_string(D) + " T=" + std::to_string(T) + " backward" +
                 (passes == 2 ? " (two passes)" : ""));
}

// Every dtype, D and mask on the default path (the widest), then f32 non-causal on each path,
// then bf16 on the avx512_bf16 path.
void forward_args(benchmark::internal::Benchmark* b) {
  for (DType t : {DType::f32, DType::f16, DType::bf16})
    for (std::int64_t D : {128, 64})
      for (int causal : {0, 1}) b->Args({static_cast<std::int64_t>(t), 4096, D, causal, 0});
  for (Isa isa : {Isa::portable, Isa::avx2, Isa::avx512})
    for (std::int64_t D : {128, 64})
      b->Args({static_cast<std::int64_t>(DType::f32), 4096, D, 0, static_cast<std::int64_t>(isa)});
  // The opt-in avx512_bf16 path differs for bf16 storage only (core/isa.h).
  for (std::int64_t D : {128, 64})
    for (int causal : {0, 1})
      b->Args({static_cast<std::int64_t>(DType::bf16), 4096, D, causal, static_cast<std::int64_t>(Isa::avx512_bf16)});
}
BENCHMARK(BM_CoreForward)->Apply(forward_args)->Unit(benchmark::kMillisecond)->UseRealTime()
    ->MinTime(1.0);

// f32, D = 128, non-causal and causal; then non-causal with two passes forced (the driver of
// shapes with few (batch, KV head) pairs).
BENCHMARK(BM_CoreBackward)
    ->Args({static_cast<std::int64_t>(DType::f32), 4096, 128, 0, 0})
    ->Args({static_cast<std::int64_t>(DType::f32), 4096, 128, 1, 0})
    ->Args({static_cast<std::int64_t>(DType::f32), 4096, 128, 0, 2})
    ->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(1.0);

// ---- memory bandwidth: stream-like kernels over arrays far larger than the L3 ----------------
// Decode is bandwidth-bound, so it is reported as a share of what the same threads can stream
// from memory. Arrays of 128 MiB (4x the 32 MiB L3 of the build machine), split in contiguous
// halves over kThreads threads, best of several passes:
//   read: sum of one array (what decode does: read K and V once) with 4 independent AVX2 sums;
//   triad: a = b + s c (STREAM's count: 3 arrays, write-allocate not counted).
constexpr std::int64_t kStreamFloats = std::int64_t{32} << 20;  // 128 MiB of f32

__attribute__((target("avx2"))) float sum_floats(const float* x, std::int64_t n) {
  __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  std::int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    a0 = _mm256_add_ps(a0, _mm256_loadu_ps(x + i));
    a1 = _mm256_add_ps(a1, _mm256_loadu_ps(x + i + 8));
    a2 = _mm256_add_ps(a2, _mm256_loadu_ps(x + i + 16));
    a3 = _mm256_add_ps(a3, _mm256_loadu_ps(x + i + 24));
  }
  float out[8];
  _mm256_storeu_ps(out, _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
  float s = 0;
  for (float v : out) s += v;
  for (; i < n; ++i) s += x[i];
  return s;
}

void triad(float* a, const float* b, const float* c, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) a[i] = b[i] + 3.0f * c[i];
}

struct StreamArrays {
  std::vector<float> a, b, c;
  StreamArrays() : a(kStreamFloats, 1.0f), b(kStreamFloats, 2.0f), c(kStreamFloats, 0.5f) {}
};
StreamArrays& stream_arrays() {
  static StreamArrays s;
  return s;
}

// Runs body(begin, end) on kThreads contiguous parts of [0, kStreamFloats); wall seconds.
template <class F>
double on_threads(F body) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < kThreads; ++t)
    pool.emplace_back([&, t] { body(kStreamFloats * t / kThreads, kStreamFloats * (t + 1) / kThreads); });
  for (auto& th : pool) th.join();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// GB/s per wall second and per CPU second of the threads (x kThreads), as Rate.
Rate read_pass() {
  StreamArrays& s = stream_arrays();
  std::atomic<float> sink{0};
  const double c0 = process_cpu_seconds();
  const double sec = on_threads([&](std::int64_t b, std::int64_t e) { sink = sink + sum_floats(s.a.data() + b, e - b); });
  const double cpu = process_cpu_seconds() - c0;
  benchmark::DoNotOptimize(sink.load());
  const double gb = static_cast<double>(kStreamFloats) * 4 * 1e-9;
  return {gb / sec, gb / cpu * kThreads};
}

// Evicts the L3 before a timed decode call: the stream array read on the threads of attnv's pool
// (util/parallel.h), the ones the decode runs on. Not read_pass(): its two threads are started
// and joined per pass, and on the 2-vCPU VM the pool's worker, woken right after them, then
// shared a core with the caller for most of a 2 ms decode call (measured 2026-11-27: an f16
// decode of 2.35 ms at 1.17 CPUs after such a sweep, 1.45 ms at 1.89 CPUs after a sweep on the
// pool's threads, which is what a decode loop sees: its threads persist between steps).
float evict_l3() {
  StreamArrays& s = stream_arrays();
  std::atomic<float> sink{0};
  parallel_for(
      kStreamFloats, [&](std::int64_t b, std::int64_t e) { sink = sink + sum_floats(s.a.data() + b, e - b); },
      kThreads, kStreamFloats / kThreads);
  return sink.load();
}

double triad_pass() {
  StreamArrays& s = stream_arrays();
  const double sec = on_threads([&](std::int64_t b, std::int64_t e) { triad(s.a.data() + b, s.b.data() + b, s.c.data() + b, e - b); });
  benchmark::ClobberMemory();
  return 3.0 * static_cast<double>(kStreamFloats) * 4 / sec * 1e-9;
}

// The best read bandwidth of a few passes (wall and per CPU second), measured once per process
// after a first pass that faults the pages in (decode divides by it).
Rate read_bandwidth() {
  static const Rate best = [] {
    read_pass();
    Rate b;
    for (int i = 0; i < 8; ++i) {
      const Rate r = read_pass();
      b = {std::max(b.wall, r.wall), std::max(b.cpu, r.cpu)};
    }
    return b;
  }();
  return best;
}

void BM_StreamRead(benchmark::State& state) {
  read_bandwidth();  // pages faulted in before the timed passes
  Rate best;
  for (auto _ : state) {
    const Rate r = read_pass();
    best = {std::max(best.wall, r.wall), std::max(best.cpu, r.cpu)};
  }
  state.counters["GBps"] = benchmark::Counter(static_cast<double>(kStreamFloats) * 4,
                                              benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
  state.counters["best_GBps"] = best.wall;
  state.counters["best_GBps_cpu"] = best.cpu;
  state.counters["threads"] = kThreads;
}
BENCHMARK(BM_StreamRead)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(10);

void BM_StreamTriad(benchmark::State& state) {
  read_bandwidth();  // pages faulted in before the timed passes
  double best = 0;
  for (auto _ : state) best = std::max(best, triad_pass());
  state.counters["GBps"] = benchmark::Counter(3.0 * static_cast<double>(kStreamFloats) * 4,
                                              benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
  state.counters["best_GBps"] = best;
  state.counters["threads"] = kThreads;
}
BENCHMARK(BM_StreamTriad)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(10);

// What this machine gives a sequential sweep that also computes: the stream read's bytes taken
// as rows of 128 f32 (a K or V row of the decode benchmark), each row summed and followed by
// `fmas` independent AVX2 FMAs on L1-resident data. fmas = 64 is the decode's arithmetic per row
// with 4 query rows (4 x 128 multiply-adds, 8 lanes); 112 is about what the core's sweep spends
// per row (35 ns per key on one thread). Without overlap the time is the memory time plus the
// arithmetic time; `bandwidth_share` shows how much of the stream survives (bench/README.md).
__attribute__((target("avx2,fma"))) float sweep_rows(const float* x, std::int64_t n, int fmas) {
  alignas(32) float l1[64];
  for (int i = 0; i < 64; ++i) l1[i] = 0.5f + 0.001f * static_cast<float>(i);
  const __m256 m = _mm256_set1_ps(0.999f);
  __m256 s0 = _mm256_setzero_ps(), s1 = s0, c0 = s0, c1 = s0, c2 = s0, c3 = s0, c4 = s0, c5 = s0, c6 = s0, c7 = s0;
  for (std::int64_t r = 0; r + 128 <= n; r += 128) {
    for (int d = 0; d < 128; d += 16) {
      s0 = _mm256_add_ps(s0, _mm256_loadu_ps(x + r + d));
      s1 = _mm256_add_ps(s1, _mm256_loadu_ps(x + r + d + 8));
    }
    for (int f = 0; f + 8 <= fmas; f += 8) {
      c0 = _mm256_fmadd_ps(_mm256_load_ps(l1), m, c0);
      c1 = _mm256_fmadd_ps(_mm256_load_ps(l1 + 8), m, c1);
      c2 = _mm256_fmadd_ps(_mm256_load_ps(l1 + 16), m, c2);
      c3 = _mm256_fmadd_ps(_mm256_load_ps(l1 + 24), m, c3);
      c4 = _mm256_fmadd_ps(_mm256_load_ps(l1 + 32), m, c4);
      c5 = _mm256_fmadd_ps(_mm256_load_ps(l1 + 40), m, c5);
      c6 = _mm256_fmadd_ps(_mm256_load_ps(l1 + 48), m, c6);
      c7 = _mm256_fmadd_ps(_mm256_load_ps(l1 + 56), m, c7);
    }
  }
  const __m256 c = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(c0, c1), _mm256_add_ps(c2, c3)),
                                 _mm256_add_ps(_mm256_add_ps(c4, c5), _mm256_add_ps(c6, c7)));
  float out[8];
  _mm256_storeu_ps(out, _mm256_add_ps(_mm256_add_ps(s0, s1), c));
  return out[0] + out[7];
}

void BM_StreamWithArithmetic(benchmark::State& state) {
  const int fmas = static_cast<int>(state.range(0));
  const Rate bandwidth = read_bandwidth();
  StreamArrays& arrays = stream_arrays();
  std::atomic<float> sink{0};
  double seconds = 0, best = 1e300;
  for (auto _ : state) {
    const double s = on_threads([&](std::int64_t b, std::int64_t e) {
      sink = sink + sweep_rows(arrays.a.data() + b, e - b, fmas);
    });
    state.SetIterationTime(s);
    seconds += s;
    best = std::min(best, s);
  }
  benchmark::DoNotOptimize(sink.load());
  const double gb = static_cast<double>(kStreamFloats) * 4 * 1e-9;
  state.counters["GBps"] = gb * static_cast<double>(state.iterations()) / seconds;
  state.counters["best_GBps"] = gb / best;
  state.counters["bandwidth_share"] = gb * static_cast<double>(state.iterations()) / seconds / bandwidth.wall;
  state.counters["best_bandwidth_share"] = gb / best / bandwidth.wall;
  state.counters["fmas_per_row"] = fmas;
}
BENCHMARK(BM_StreamWithArithmetic)->Arg(0)->Arg(64)->Arg(112)->Unit(benchmark::kMillisecond)->UseManualTime()->Iterations(10);

// ---- core decode ------------------------------------------------------------------------------
// One token (Tq = 1) against a cache of 8192 positions, B = 1, Hq = 32, Hkv = 8, D = 128, f32 or
// f16 cache, 2 threads (split-KV chooses the chunks). Each call appends at position 8191 and
// reads all 8192 keys and values once: bytes = 2 Hkv 8192 D sizeof(dtype) (64 MiB f32, 32 MiB
// f16: the f16 cache would fit the 32 MiB L3, so a 128 MiB sweep evicts it before every timed
// call; manual time excludes the sweep). Counters: GBps (K and V bytes per second),
// bandwidth_share (over BM_StreamRead's best in this process), and the same per CPU second.
// Args: dtype, ISA path (as BM_CoreForward's fifth: 0 best, 1 portable, 2 avx2, 3 avx512), and
// `resident`: 1 runs a cache of 1024 positions (8 MiB f32, 4 MiB f16) that stays in the L3
// between calls (no sweep): the decode with its cache in the L3 instead of memory. That is not the
// arithmetic's ceiling (it still waits for the L3, and fixed costs per call, waking the pool and
// merging split-KV parts, weigh 8x more at 1024 positions): BM_DecodeArithmetic below measures
// the arithmetic alone (2026-11-28, f16: its best passes 1.2-1.8x the resident case's).
void BM_CoreDecode(benchmark::State& state) {
  const DType dtype = static_cast<DType>(state.range(0));
  const auto isa = static_cast<Isa>(state.range(1));
  if (lacks_path(state, isa)) return;
  const bool resident = state.range(2) != 0;
  const std::int64_t cap = resident ? 1024 : 8192, D = 128, Hq = 32, Hkv = 8;
  Problem p;
  p.shape = {1, Hq, Hkv, 1, cap, D, D};
  p.dtype = dtype;
  p.causal = true;
  p.alignment = Alignment::bottom_right;
  gen::Rng rng(20261123);
  std::vector<unsigned char> q, kn, vn, kc, vc, out, lse;
  DecodeViews v;
  v.q = fill(q, dtype, {1, Hq, 1, D}, 4, &rng);
  v.k_new = fill(kn, dtype, {1, Hkv, 1, D}, 4, &rng);
  v.v_new = fill(vn, dtype, {1, Hkv, 1, D}, 4, &rng);
  v.k_cache = fill(kc, dtype, {1, Hkv, cap, D}, 4, &rng);
  v.v_cache = fill(vc, dtype, {1, Hkv, cap, D}, 4, &rng);
  v.out = fill(out, dtype, {1, Hq, 1, D}, 4, nullptr);
  v.lse = fill(lse, lse_dtype(dtype), {1, Hq, 1, 0}, 3, nullptr);
  const std::int64_t cache_len = cap - 1;
  v.cache_len = &cache_len;
  core::CoreKernel kernel({.threads = kThreads, .isa = isa});
  const Rate bandwidth = read_bandwidth();
  const double bytes = 2.0 * static_cast<double>(Hkv * cap * D * dtype_bytes(dtype));
  double seconds = 0, cpu_seconds = 0, best = 1e300, sweep_seconds = 0;
  for (auto _ : state) {
    if (!resident) {  // not in the iteration's time; timed on its own as the paired stream read
      const auto e0 = std::chrono::steady_clock::now();
      benchmark::DoNotOptimize(evict_l3());
      sweep_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - e0).count();
    }
    const double c0 = process_cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    kernel.decode(p, v);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    cpu_seconds += process_cpu_seconds() - c0;
    state.SetIterationTime(s);
    seconds += s;
    best = std::min(best, s);
    benchmark::ClobberMemory();
  }
  const double gb = bytes * static_cast<double>(state.iterations()) * 1e-9;
  state.counters["GBps"] = gb / seconds;
  state.counters["read_GBps"] = bandwidth.wall;
  // The mean call against the best stream pass (the strict figure), and best against best
  // (the same statistic on both sides: what the machine allows when nothing else runs).
  state.counters["bandwidth_share"] = gb / seconds / bandwidth.wall;
  state.counters["best_GBps"] = bytes * 1e-9 / best;
  state.counters["best_bandwidth_share"] = bytes * 1e-9 / best / bandwidth.wall;
  // Per CPU second of the threads (x kThreads), both sides: what the shares would be with the
  // two cores to ourselves (the build machine is shared; wall figures swing by 2x and more).
  state.counters["cpu_GBps"] = gb / cpu_seconds * kThreads;
  state.counters["cpu_read_GBps"] = bandwidth.cpu;
  state.counters["cpu_bandwidth_share"] = gb / cpu_seconds * kThreads / bandwidth.cpu;
  state.counters["cpu_utilisation"] = cpu_seconds / seconds;
  if (!resident) {
    // The sweep before each call is itself a stream read (the same 128 MiB sum, on the same
    // pool threads), taken moments before the call it pairs with. Against it the share does not
    // depend on when in the run BM_StreamRead read the machine: this VM's bandwidth moved from
    // 49 to 33 GB/s within half an hour (bench/README.md, "Zen 4"). Where the L3 holds the
    // stream array (the Xeon's 480 MiB), sweep and decode both read from the L3, so the paired
    // share compares the decode with a plain sum over the same level of memory.
    const double sweep_gb = static_cast<double>(kStreamFloats) * 4 * 1e-9 * static_cast<double>(state.iterations());
    const double sweep_gbps = sweep_gb / sweep_seconds;
    state.counters["sweep_GBps"] = sweep_gbps;
    state.counters["paired_share"] = gb / seconds / sweep_gbps;
  }
  state.SetLabel(std::string(dtype_name(dtype)) + " cache " + std::to_string(cap) + (resident ? " resident" : "") +
                 " Hq=32 Hkv=8 D=128 Tq=1 " + core::isa_name(kernel.isa()));
}
// f32 and f16 caches on the default path, then on each path; then resident on the default path.
BENCHMARK(BM_CoreDecode)
    ->Apply([](benchmark::internal::Benchmark* b) {
      for (Isa isa : {Isa::best, Isa::portable, Isa::avx2, Isa::avx512})
        for (DType t : {DType::f32, DType::f16})
          b->Args({static_cast<std::int64_t>(t), static_cast<std::int64_t>(isa), 0});
      for (DType t : {DType::f32, DType::f16})
        b->Args({static_cast<std::int64_t>(t), static_cast<std::int64_t>(Isa::best), 1});
    })
    ->Unit(benchmark::kMillisecond)->UseManualTime()->MinTime(1.0);

// ---- the decode's arithmetic ceiling ------------------------------------------------------------
// What BM_CoreDecode's arithmetic alone allows: the decode sweep's two row kernels (row_kernels.h:
// the scores of a tile, then its P.V) on one KV head's tile of 64 keys, 4 query rows (Hq / Hkv
// above), D = 128, on each of kThreads threads at once, every thread on its own tile, which stays
// in its L1 and L2 between calls. No memory wait, no softmax or logit rules, no pool or split-KV
// merge: an upper bound on how many GB of K and V per second the decode could digest. A streaming
// decode's share of the stream cannot exceed best_ceiling_GBps over the stream's GB/s, so where that
// ratio is near or below the target the decode is bound by its arithmetic, not by memory
// (bench/README.md, "Zen 4, session 23"). BM_CoreDecode's resident cases sit in the L3, so they
// wait for it too and understate this ceiling.
// The scores' rows lie kRunKeys apart, as in the sweep's workspace: 64 apart (one tile), the
// same kernels ran 30% slower on the Zen 4 VM (likely store-to-load aliasing between the
// scores' scalar stores and the next loads; not proven, no counters there).
constexpr int kCeilingRows = 4, kCeilingKeys = 64, kCeilingReps = 2000;
constexpr std::int64_t kCeilingD = 128;

void BM_DecodeArithmetic(benchmark::State& state) {
  const DType dtype = static_cast<DType>(state.range(0));
  const auto isa = static_cast<Isa>(state.range(1));
  if (lacks_path(state, isa)) return;
  const core::RowKernels<float>& rk = core::row_kernels_f32(isa);
  const bool half = dtype != DType::f32;
  if (half && (rk.dots_half == nullptr || rk.pv_rows_half == nullptr)) {
    // The portable set (also what Isa::best means under ATTNV_CORE_ISA=portable) converts a half
    // cache into f32 rows before its kernels: there is no in-place half kernel to time.
    state.SkipWithError((std::string(rk.name) + " reads no half cache in place").c_str());
    return;
  }
  // Every buffer 64-byte aligned (fill), as the sweep's workspace and a framework's tensors are:
  // with malloc's 16-byte alignment the f32 ceiling read 15% lower, f16 9% (3 rounds alternated).
  struct Tile {
    std::vector<unsigned char> qb, sb, ob, kb, vb;
    float *q = nullptr, *s = nullptr, *o = nullptr;
    const void *k = nullptr, *v = nullptr;
  };
  std::vector<Tile> tiles(kThreads);
  gen::Rng rng(20261128);
  for (Tile& t : tiles) {
    t.q = static_cast<float*>(fill(t.qb, DType::f32, {kCeilingRows, kCeilingD, 0, 0}, 2, &rng).data);
    t.s = static_cast<float*>(fill(t.sb, DType::f32, {kCeilingRows, core::kRunKeys, 0, 0}, 2, nullptr).data);
    t.o = static_cast<float*>(fill(t.ob, DType::f32, {kCeilingRows, kCeilingD, 0, 0}, 2, nullptr).data);
    t.k = fill(t.kb, dtype, {kCeilingKeys, kCeilingD, 0, 0}, 2, &rng).data;
    t.v = fill(t.vb, dtype, {kCeilingKeys, kCeilingD, 0, 0}, 2, &rng).data;
  }
  const auto sweep = [&](Tile& t) {
    for (int rep = 0; rep < kCeilingReps; ++rep) {
      if (half) {
        const auto* k = static_cast<const std::uint16_t*>(t.k);
        const auto* v = static_cast<const std::uint16_t*>(t.v);
        const bool bf16 = dtype == DType::bf16;
        rk.dots_half(t.q, kCeilingD, kCeilingRows, k, kCeilingD, kCeilingKeys, kCeilingD, bf16, 0.088f, t.s,
                     core::kRunKeys);
        rk.pv_rows_half(t.s, core::kRunKeys, kCeilingRows, v, kCeilingD, kCeilingKeys, kCeilingD, bf16, t.o,
                        kCeilingD);
      } else {
        const auto* k = static_cast<const float*>(t.k);
        const auto* v = static_cast<const float*>(t.v);
        rk.dots(t.q, kCeilingD, kCeilingRows, k, kCeilingD, kCeilingKeys, kCeilingD, 0.088f, t.s, core::kRunKeys);
        rk.pv_rows(t.s, core::kRunKeys, kCeilingRows, v, kCeilingD, kCeilingKeys, kCeilingD, t.o, kCeilingD);
      }
    }
  };
  for (Tile& t : tiles) sweep(t);  // warm: every tile in its thread's caches (first touch)
  // Each thread also times its own sweep: its best pass is what its core allows undisturbed, and
  // the two need not be undisturbed at once (on the shared VM one vCPU is often slowed for
  // seconds while the other runs at full speed).
  double seconds = 0, cpu_seconds = 0;
  std::vector<double> own_best(kThreads, 1e300);
  for (auto _ : state) {
    const double c0 = process_cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (int t = 0; t < kThreads; ++t)
      pool.emplace_back([&, t] {
        const auto s0 = std::chrono::steady_clock::now();
        sweep(tiles[static_cast<std::size_t>(t)]);
        const double own = std::chrono::duration<double>(std::chrono::steady_clock::now() - s0).count();
        own_best[static_cast<std::size_t>(t)] = std::min(own_best[static_cast<std::size_t>(t)], own);
      });
    for (auto& th : pool) th.join();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    cpu_seconds += process_cpu_seconds() - c0;
    seconds += s;
    state.SetIterationTime(s);
  }
  float sink = 0;
  for (const Tile& t : tiles) sink += t.o[0];  // the kernels' results are used
  benchmark::DoNotOptimize(sink);
  const double keys = static_cast<double>(kThreads) * kCeilingReps * kCeilingKeys * static_cast<double>(state.iterations());
  const double gb = keys * 2.0 * static_cast<double>(kCeilingD * dtype_bytes(dtype)) * 1e-9;
  const double gflop = keys * 2.0 * 2.0 * kCeilingRows * static_cast<double>(kCeilingD) * 1e-9;  // q.k and p.v
  // The ceiling is what the arithmetic allows, so its estimate is the sum of the threads' best
  // passes (as the FMA peak is a best pass); the mean over wall time shows how much a shared
  // machine took away.
  const double bytes_per_pass = gb / static_cast<double>(state.iterations()) / kThreads;
  double best_rate = 0, slowest_best = 0;
  for (double b : own_best) best_rate += bytes_per_pass / b, slowest_best = std::max(slowest_best, b);
  state.counters["ceiling_GBps"] = gb / seconds;
  state.counters["best_ceiling_GBps"] = best_rate;
  state.counters["cpu_ceiling_GBps"] = gb / cpu_seconds * kThreads;
  state.counters["cpu_GFLOPs"] = gflop / cpu_seconds * kThreads;
  state.counters["cpu_peak_share"] = gflop / cpu_seconds * kThreads / peak_gflops().cpu;
  state.counters["best_ns_per_key"] = slowest_best / (kCeilingReps * kCeilingKeys) * 1e9;  // the slower thread's
  state.SetLabel(std::string(dtype_name(dtype)) + " K, V: 64 keys x D=128, 4 rows, " + rk.name + " on " +
                 core::isa_name(core::resolve_isa(isa)));
}
// f32 on each path; f16 and bf16 on the paths whose kernels read a half cache as it lies.
BENCHMARK(BM_DecodeArithmetic)
    ->Apply([](benchmark::internal::Benchmark* b) {
      for (Isa isa : {Isa::best, Isa::portable, Isa::avx2, Isa::avx512})
        for (DType t : {DType::f32, DType::f16, DType::bf16})
          if (t == DType::f32 || isa != Isa::portable)
            b->Args({static_cast<std::int64_t>(t), static_cast<std::int64_t>(isa)});
    })
    ->Unit(benchmark::kMillisecond)->UseManualTime()->MinTime(0.5);

}  // namespace

int main(int argc, char** argv) {
  // A bad ATTNV_CORE_ISA (unknown, or a path this CPU lacks) is the user's error: said once,
  // exit 2, before any benchmark, instead of an abort in the first kernel constructed.
  try {
    (void)core::resolve_isa(core::Isa::best);
  } catch (const InputError& e) {
    std::fprintf(stderr, "core_bench: %s\n", e.what());
    return 2;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
