// Cost of the references. Run:
//   build/fastbench/bench/reference_bench --benchmark_out=reference_bench.json --benchmark_out_format=json
// Inputs are f32 values drawn from a standard normal with a fixed seed (gen/rng.h).
#include <benchmark/benchmark.h>

#include "gen/rng.h"
#include "problem/case.h"
#include "reference/fast/dd_kernels.h"
#include "reference/fast/dd_math.h"
#include "reference/fast/fast.h"
#include "reference/oracle/oracle.h"

namespace {

using namespace attnv;

Case normal_case(std::int64_t H, std::int64_t T, std::int64_t D, bool with_dout) {
  Problem p;
  p.shape = {1, H, H, T, T, D, D};
  p.dtype = DType::f32;
  Case c = make_zero_case(p, with_dout);
  gen::Rng rng(20261121);
  for (auto* t : {&c.q, &c.k, &c.v, &c.dout})
    for (double& x : *t) x = static_cast<double>(static_cast<float>(rng.normal()));
  return c;
}

void set_counters(benchmark::State& state, const Case& c, const reference::FastStats& stats) {
  const Shape& s = c.problem.shape;
  state.counters["rows"] = benchmark::Counter(static_cast<double>(s.B * s.Hq * s.Tq),
                                              benchmark::Counter::kIsIterationInvariantRate);
  state.counters["unresolved"] = static_cast<double>(stats.unresolved);
  state.counters["elements"] = static_cast<double>(stats.elements);
}

// The project's target: B=1, H=8, Tq=Tk=1024, Dk=Dv=128 on 2 threads in at most 5 s.
void BM_FastForward(benchmark::State& state) {
  const Case c = normal_case(8, 1024, 128, false);
  reference::FastStats stats;
  for (auto _ : state) {
    stats = {};
    benchmark::DoNotOptimize(reference::fast_forward(c, {static_cast<int>(state.range(0))}, &stats));
  }
  set_counters(state, c, stats);
  state.SetLabel(reference::dd::active_isa() == reference::dd::Isa::avx2 ? "avx2" : "portable");
}
BENCHMARK(BM_FastForward)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(2);

// Backward at B=1, H=4, T=512, D=64 on 2 threads (parallel over KV heads).
void BM_FastBackward(benchmark::State& state) {
  const Case c = normal_case(4, 512, 64, true);
  reference::FastStats stats;
  for (auto _ : state) {
    stats = {};
    benchmark::DoNotOptimize(reference::fast_backward(c, {static_cast<int>(state.range(0))}, &stats));
  }
  set_counters(state, c, stats);
}
BENCHMARK(BM_FastBackward)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(2);

// One oracle row (MPFR, 100 digits) at Tk=1024, Dk=Dv=128, one thread.
void BM_OracleRow(benchmark::State& state) {
  const Case c = normal_case(1, 1024, 128, false);
  std::int64_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(reference::oracle_row(c, 0, 0, i));
    i = (i + 1) % 1024;
  }
  state.counters["rows"] = benchmark::Counter(1.0, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_OracleRow)->Unit(benchmark::kMillisecond)->Iterations(3);

// The double-double exp alone (arguments spread over [-30, 0], the softmax's range).
void BM_DdExp(benchmark::State& state) {
  double x = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(reference::dd::exp({x, x * 0x1p-60}));
    x = x > -30 ? x - 0.001 : 0;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DdExp);

}  // namespace
