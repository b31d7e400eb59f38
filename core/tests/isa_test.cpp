// The ISA paths of the core (core/isa.h): how a path is chosen and refused, and that each path's
// micro-kernels compute what the portable ones compute within the rounding structure the error
// bound covers (one rounding per operation, products fused or not, exp within exp_ulps). The
// whole core on each path is certified by the conformance suite (core_conformance_test.cpp).
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/core_kernel.h"
#include "core/isa.h"
#include "core/microkernels.h"
#include "core/row_kernels.h"
#include "core/tests/core_test_util.h"
#include "core/workspace.h"
#include "gen/rng.h"
#include "problem/dtype.h"
#include "problem/error.h"

namespace attnv::core {
namespace {

using testing::feature_variant;
using testing::kFeatureVariants;
using testing::random_case;
using testing::runnable_isas;
using testing::with_dout;

// ---- choosing a path --------------------------------------------------------------------------

CpuFeatures all_features() {
  CpuFeatures f;
  f.x86_64 = f.avx2 = f.fma = f.f16c = true;
  f.avx512f = f.avx512bw = f.avx512vl = f.avx512dq = true;
  return f;
}

// The message of the InputError `f` throws ("" when it throws none).
template <class F>
std::string input_error(F f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(CoreIsa, BestIsTheWidestPathTheCpuRuns) {
  CpuFeatures cpu = all_features();
  EXPECT_EQ(resolve_isa(Isa::best, nullptr, cpu), Isa::avx512);
  EXPECT_EQ(resolve_isa(Isa::best, "", cpu), Isa::avx512);  // set but empty: as unset
  cpu.avx512vl = false;
  EXPECT_EQ(resolve_isa(Isa::best, nullptr, cpu), Isa::avx2);
  cpu.f16c = false;  // the AVX2 path needs F16C too
  EXPECT_EQ(resolve_isa(Isa::best, nullptr, cpu), Isa::portable);
  EXPECT_EQ(resolve_isa(Isa::best, nullptr, CpuFeatures{}), Isa::portable);
}

// avx512_bf16 declares another precision model (subnormals flushed), so `best` never picks it,
// even on a CPU that has every feature; asked for, it runs, or names what is missing.
TEST(CoreIsa, Avx512Bf16IsOptIn) {
  CpuFeatures cpu = all_features();
  cpu.avx512bf16 = true;
  EXPECT_EQ(resolve_isa(Isa::best, nullptr, cpu), Isa::avx512);
  EXPECT_EQ(resolve_isa(Isa::best, "avx512_bf16", cpu), Isa::avx512_bf16);
  EXPECT_EQ(parse_isa("avx512_bf16"), Isa::avx512_bf16);
  cpu.avx512bf16 = false;
  const std::string msg = input_error([&] { resolve_isa(Isa::best, "avx512_bf16", cpu); });
  EXPECT_NE(msg.find("lacks avx512bf16 (it runs avx512)"), std::string::npos) << msg;
  EXPECT_EQ(missing_features(Isa::avx512, cpu), "");
}

TEST(CoreIsa, EnvironmentForcesAPath) {
  const CpuFeatures cpu = all_features();
  EXPECT_EQ(resolve_isa(Isa::best, "portable", cpu), Isa::portable);
  EXPECT_EQ(resolve_isa(Isa::best, "avx2", cpu), Isa::avx2);
  EXPECT_EQ(resolve_isa(Isa::best, "avx512", cpu), Isa::avx512);
  // A path chosen in code wins over the environment (tests certify each path in one process).
  EXPECT_EQ(resolve_isa(Isa::avx2, "portable", cpu), Isa::avx2);
}

TEST(CoreIsa, UnknownEnvironmentValueIsAnInputError) {
  const std::string msg = input_error([] { resolve_isa(Isa::best, "avx9", all_features()); });
  EXPECT_NE(msg.find("ATTNV_CORE_ISA=avx9"), std::string::npos) << msg;
  EXPECT_NE(msg.find("portable, avx2, avx512 and avx512_bf16"), std::string::npos) << msg;
}

// Forcing a path the CPU lacks names each missing feature and where the request came from; it
// never falls back to another path.
TEST(CoreIsa, ForcingAPathTheCpuLacksNamesTheMissingFeatures) {
  CpuFeatures cpu = all_features();
  cpu.avx512bw = cpu.avx512dq = false;
  std::string msg = input_error([&] { resolve_isa(Isa::best, "avx512", cpu); });
  EXPECT_NE(msg.find("ATTNV_CORE_ISA=avx512"), std::string::npos) << msg;
  EXPECT_NE(msg.find("lacks avx512bw, avx512dq"), std::string::npos) << msg;
  EXPECT_NE(msg.find("it runs avx2"), std::string::npos) << msg;
  msg = input_error([&] { resolve_isa(Isa::avx512, nullptr, cpu); });
  EXPECT_NE(msg.find("ForwardOptions::isa"), std::string::npos) << msg;
  msg = input_error([] { resolve_isa(Isa::avx2, nullptr, CpuFeatures{}); });
  EXPECT_NE(msg.find("x86-64"), std::string::npos) << msg;
  EXPECT_EQ(resolve_isa(Isa::portable, nullptr, CpuFeatures{}), Isa::portable);  // always runs
}

// The real environment, read by the kernel's constructor: a bad value is an InputError there,
// before any call.
TEST(CoreIsa, CoreKernelReadsTheEnvironment) {
  ASSERT_EQ(setenv("ATTNV_CORE_ISA", "avx9", 1), 0);
  const std::string msg = input_error([] { CoreKernel k; });
  ASSERT_EQ(setenv("ATTNV_CORE_ISA", "portable", 1), 0);
  const Isa forced = CoreKernel().isa();
  ASSERT_EQ(unsetenv("ATTNV_CORE_ISA"), 0);
  EXPECT_NE(msg.find("ATTNV_CORE_ISA=avx9"), std::string::npos) << msg;
  EXPECT_EQ(forced, Isa::portable);
  EXPECT_EQ(CoreKernel().isa(), widest_isa(cpu_features()));
}

// ---- each path's micro-kernels against the portable ones -------------------------------------

constexpr double kU = 0x1p-24;  // unit roundoff of f32
// gamma_n = n u / (1 - n u): the relative error bound of n roundings (Higham, Lemma 3.1).
double gamma(std::int64_t n) { return static_cast<double>(n) * kU / (1 - static_cast<double>(n) * kU); }

std::vector<const MicroKernels<float>*> simd_sets() {
  std::vector<const MicroKernels<float>*> v;
  for (Isa isa : runnable_isas())
    if (isa != Isa::portable) v.push_back(&kernels_f32(isa));
  return v;
}

std::vector<float> normals(gen::Rng& rng, std::int64_t n, double scale = 1) {
  std::vector<float> x(static_cast<std::size_t>(n));
  for (float& v : x) v = static_cast<float>(scale * rng.normal());
  return x;
}

// Shapes around every register block and tail: rows 1..13, keys 1..64, head dims 8..136.
struct TileShape {
  int rows, n;
  std::int64_t dk_pad, dv_pad;
};
std::vector<TileShape> tile_shapes() {
  std::vector<TileShape> v;
  for (int rows : {1, 5, 6, 7, 12, 13})
    for (int n : {1, 15, 16, 17, 48, 63, 64})
      for (std::int64_t d : {8, 16, 64, 72, 128, 136}) v.push_back({rows, n, d, round_up(d, kPanel)});
  return v;
}

// scores: both sides evaluate fl(fl(sum_d q_d k_d) * scale) with d + 1 roundings (products
// rounded or fused), so each is within gamma_{dk_pad + 1} (sum_d |q_d k_d|) |scale| of the exact
// value, and the two within twice that.
TEST(CoreIsaKernels, ScoresMatchPortableWithinRounding) {
  gen::Rng rng(1301);
  const MicroKernels<float>& port = portable_kernels_f32();
  for (const MicroKernels<float>* mk : simd_sets())
    for (const TileShape& t : tile_shapes()) {
      const std::int64_t ldk = round_up(t.n, 16), lds = ldk;
      const std::vector<float> q = normals(rng, t.rows * t.dk_pad);
      std::vector<float> k = normals(rng, t.dk_pad * ldk);
      for (std::int64_t d = 0; d < t.dk_pad; ++d)
        for (std::int64_t c = t.n; c < ldk; ++c) k[d * ldk + c] = 0;  // the layout's zero fill
      const float scale = 0.125f;
      std::vector<float> a(t.rows * lds), b(t.rows * lds);
      mk->scores(q.data(), t.dk_pad, t.rows, k.data(), ldk, t.n, t.dk_pad, scale, a.data(), lds);
      port.scores(q.data(), t.dk_pad, t.rows, k.data(), ldk, t.n, t.dk_pad, scale, b.data(), lds);
      for (int r = 0; r < t.rows; ++r)
        for (int c = 0; c < t.n; ++c) {
          double mag = 0;
          for (std::int64_t d = 0; d < t.dk_pad; ++d) mag += std::abs(double{q[r * t.dk_pad + d]} * k[d * ldk + c]);
          const double tol = 2 * gamma(t.dk_pad + 1) * mag * scale;
          ASSERT_LE(std::abs(double{a[r * lds + c]} - b[r * lds + c]), tol)
              << mk->name << " rows " << t.rows << " n " << t.n << " dk " << t.dk_pad << " at " << r << ", " << c;
        }
    }
}

// pv: o <- alpha o + sum_c p_c v_c, n + 1 roundings per element on each side.
TEST(CoreIsaKernels, PvMatchesPortableWithinRounding) {
  gen::Rng rng(1302);
  const MicroKernels<float>& port = portable_kernels_f32();
  for (const MicroKernels<float>* mk : simd_sets())
    for (const TileShape& t : tile_shapes()) {
      const std::int64_t ldv = kKeyBlock * kPanel, ldp = kKeyBlock;
      AlignedArray<float> v((t.dv_pad / kPanel) * ldv);  // panels are 64-byte aligned
      const std::vector<float> vals = normals(rng, (t.dv_pad / kPanel) * ldv);
      std::memcpy(v.get(), vals.data(), vals.size() * sizeof(float));
      std::vector<float> p = normals(rng, t.rows * ldp);
      for (float& x : p) x = std::abs(x);  // weights are non-negative
      std::vector<float> alpha = normals(rng, t.rows);
      for (float& x : alpha) x = std::min(1.0f, std::abs(x));
      const std::vector<float> o0 = normals(rng, t.rows * t.dv_pad);
      std::vector<float> a = o0, b = o0;
      mk->pv(p.data(), ldp, t.rows, alpha.data(), v.get(), ldv, t.n, t.dv_pad, a.data(), t.dv_pad);
      port.pv(p.data(), ldp, t.rows, alpha.data(), v.get(), ldv, t.n, t.dv_pad, b.data(), t.dv_pad);
      for (int r = 0; r < t.rows; ++r)
        for (std::int64_t d = 0; d < t.dv_pad; ++d) {
          double mag = std::abs(double{alpha[r]} * o0[r * t.dv_pad + d]);
          for (int c = 0; c < t.n; ++c) mag += std::abs(double{p[r * ldp + c]} * v.get()[panel_index(c, d, ldv)]);
          const double tol = 2 * gamma(t.n + 1) * mag;
          ASSERT_LE(std::abs(double{a[r * t.dv_pad + d]} - b[r * t.dv_pad + d]), tol)
              << mk->name << " rows " << t.rows << " n " << t.n << " dv " << t.dv_pad << " at " << r << ", " << d;
        }
    }
}

// row_max is exact on every path; exp_sum's weights are each within exp_ulps of exp(fl(x - m))
// (the portable glibc ones within 1 ulp), and its sum within gamma_{n - 1} sum_c e_c of the
// exact sum of the weights it stored (n - 1 additions of non-negative terms, any order).
TEST(CoreIsaKernels, RowMaxAndExpSumWithinRounding) {
  gen::Rng rng(1303);
  const double exp_ulps = CoreKernel().precision(DType::f32).exp_ulps;
  std::vector<const MicroKernels<float>*> sets = simd_sets();
  sets.push_back(&portable_kernels_f32());
  for (const MicroKernels<float>* mk : sets)
    for (int n : {1, 7, 8, 15, 16, 17, 31, 48, 64}) {
      std::vector<float> x = normals(rng, n, 20);
      if (n > 2) x[1] = -std::numeric_limits<float>::infinity();  // a hidden key
      const float m = mk->row_max(x.data(), n);
      EXPECT_EQ(m, portable_kernels_f32().row_max(x.data(), n)) << mk->name << " n " << n;
      std::vector<float> e = x;
      const float sum = mk->exp_sum(e.data(), n, m);
      double exact_sum = 0;
      for (int c = 0; c < n; ++c) {
        const double exact = std::exp(static_cast<double>(x[c] - m));  // of fl(x - m), as BOUND.md
        EXPECT_LE(std::abs(double{e[c]} - exact), exp_ulps * ulp(DType::f32, exact)) << mk->name << " n " << n;
        exact_sum += e[c];
      }
      EXPECT_LE(std::abs(double{sum} - exact_sum), gamma(n - 1) * exact_sum) << mk->name << " n " << n;
    }
}

// The 16-bit conversions are exact (widening) or correctly rounded (narrowing) on every path:
// the same bits as the portable ones, over every f16 and bf16 pattern and f32 values of every
// exponent, subnormals, ties and overflows included (NaN: quiet NaN, any payload).
TEST(CoreIsaKernels, ConversionsBitwiseEqualPortable) {
  const MicroKernels<float>& port = portable_kernels_f32();
  std::vector<std::uint16_t> h(65536);
  for (std::size_t i = 0; i < h.size(); ++i) h[i] = static_cast<std::uint16_t>(i);
  std::vector<float> f;
  gen::Rng rng(1304);
  for (int i = 0; i < 200000; ++i) {
    std::uint32_t u = static_cast<std::uint32_t>(rng.next());
    if (i % 3 == 0) u &= 0xffff8000u | 0x7fffu * (i % 2);  // ties and near-ties of bf16
    float x;
    std::memcpy(&x, &u, 4);
    f.push_back(x);
  }
  const auto same = [](float a, float b) {
    return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, 4) == 0;
  };
  const auto same16 = [](std::uint16_t a, std::uint16_t b, bool bf16) {
    const std::uint16_t exp = bf16 ? 0x7f80 : 0x7c00, man = bf16 ? 0x7f : 0x3ff;
    const auto nan = [&](std::uint16_t x) { return (x & exp) == exp && (x & man) != 0; };
    return (nan(a) && nan(b)) || a == b;
  };
  for (const MicroKernels<float>* mk : simd_sets())
    for (std::int64_t n : {std::int64_t{65536}, std::int64_t{13}}) {  // a tail too
      std::vector<float> a(h.size()), b(h.size());
      mk->from_f16(h.data(), n, a.data());
      port.from_f16(h.data(), n, b.data());
      for (std::int64_t i = 0; i < n; ++i) ASSERT_TRUE(same(a[i], b[i])) << mk->name << " f16 " << h[i];
      mk->from_bf16(h.data(), n, a.data());
      port.from_bf16(h.data(), n, b.data());
      for (std::int64_t i = 0; i < n; ++i) ASSERT_TRUE(same(a[i], b[i])) << mk->name << " bf16 " << h[i];
      std::vector<std::uint16_t> x(f.size()), y(f.size());
      const std::int64_t m = n == 13 ? 13 : static_cast<std::int64_t>(f.size());
      mk->to_f16(f.data(), m, x.data());
      port.to_f16(f.data(), m, y.data());
      for (std::int64_t i = 0; i < m; ++i) ASSERT_TRUE(same16(x[i], y[i], false)) << mk->name << " to f16 " << f[i];
      mk->to_bf16(f.data(), m, x.data());
      port.to_bf16(f.data(), m, y.data());
      for (std::int64_t i = 0; i < m; ++i) ASSERT_TRUE(same16(x[i], y[i], true)) << mk->name << " to bf16 " << f[i];
    }
}

// The AVX-512 set does what the AVX2 set does per element, in the same order (the top of
// microkernels_avx512.cpp), so the two agree bit for bit: one test for all the arithmetic.
TEST(CoreIsaKernels, Avx512BitwiseEqualsAvx2) {
  const MicroKernels<float>* a = avx512_kernels_f32();
  const MicroKernels<float>* b = avx2_kernels_f32();
  if (a == nullptr || b == nullptr) GTEST_SKIP() << "needs both the avx2 and avx512 paths";
  gen::Rng rng(1305);
  for (const TileShape& t : tile_shapes()) {
    const std::int64_t ld = kKeyBlock, ldv = kKeyBlock * kPanel;
    const std::vector<float> q = normals(rng, t.rows * t.dk_pad), k = normals(rng, t.dk_pad * ld);
    std::vector<float> sa(t.rows * ld), sb(t.rows * ld);
    a->scores(q.data(), t.dk_pad, t.rows, k.data(), ld, t.n, t.dk_pad, 0.3f, sa.data(), ld);
    b->scores(q.data(), t.dk_pad, t.rows, k.data(), ld, t.n, t.dk_pad, 0.3f, sb.data(), ld);
    std::vector<float> alpha(t.rows);
    for (int r = 0; r < t.rows; ++r) {
      const float m = a->row_max(sa.data() + r * ld, t.n);
      ASSERT_EQ(m, b->row_max(sb.data() + r * ld, t.n));
      const float xa = a->exp_sum(sa.data() + r * ld, t.n, m), xb = b->exp_sum(sb.data() + r * ld, t.n, m);
      ASSERT_EQ(std::memcmp(&xa, &xb, 4), 0) << "exp_sum rows " << t.rows << " n " << t.n;
      alpha[r] = static_cast<float>(-std::abs(rng.normal()));
    }
    ASSERT_EQ(std::memcmp(sa.data(), sb.data(), sa.size() * 4), 0) << "scores/exp rows " << t.rows << " n " << t.n;
    if (a->exp_sum_rows != nullptr) {  // all rows at once: the same bits as row by row
      std::vector<float> sc(t.rows * ld), m(t.rows), sums(t.rows);
      a->scores(q.data(), t.dk_pad, t.rows, k.data(), ld, t.n, t.dk_pad, 0.3f, sc.data(), ld);
      std::vector<float> one = sc;
      for (int r = 0; r < t.rows; ++r) m[r] = a->row_max(sc.data() + r * ld, t.n);
      a->exp_sum_rows(sc.data(), ld, t.rows, t.n, m.data(), sums.data());
      for (int r = 0; r < t.rows; ++r) {
        const float x = a->exp_sum(one.data() + r * ld, t.n, m[r]);
        ASSERT_EQ(std::memcmp(&x, &sums[r], 4), 0) << "exp_sum_rows row " << r;
      }
      ASSERT_EQ(std::memcmp(sc.data(), one.data(), sc.size() * 4), 0) << "exp_sum_rows weights";
    }
    std::vector<float> ea = alpha, eb = alpha;
    a->exp_inplace(ea.data(), t.rows);
    b->exp_inplace(eb.data(), t.rows);
    ASSERT_EQ(std::memcmp(ea.data(), eb.data(), ea.size() * 4), 0);
    AlignedArray<float> v((t.dv_pad / kPanel) * ldv);
    const std::vector<float> vals = normals(rng, (t.dv_pad / kPanel) * ldv);
    std::memcpy(v.get(), vals.data(), vals.size() * sizeof(float));
    std::vector<float> oa = normals(rng, t.rows * t.dv_pad), ob = oa;
    a->pv(sa.data(), ld, t.rows, ea.data(), v.get(), ldv, t.n, t.dv_pad, oa.data(), t.dv_pad);
    b->pv(sb.data(), ld, t.rows, eb.data(), v.get(), ldv, t.n, t.dv_pad, ob.data(), t.dv_pad);
    ASSERT_EQ(std::memcmp(oa.data(), ob.data(), oa.size() * 4), 0) << "pv rows " << t.rows << " n " << t.n;
  }
}

// The decode sweep's AVX-512 row kernels keep the AVX2 ones' order per element (the top of
// row_kernels_avx512.cpp), so they agree bit for bit: rows 1..8 (the 8- and 4-row blocks and
// single rows), keys around the lanes of n / 4 and their rest, head dims around the 16- and
// 32-value steps and their 8-value tails; f32 rows and f16 / bf16 rows converted as loaded.
void avx512_row_kernels_match_avx2(Prefetch tuning) {
  const RowKernels<float>* a = avx512_row_kernels_f32(tuning);
  const RowKernels<float>* b = avx2_row_kernels_f32();
  if (a == nullptr || b == nullptr) GTEST_SKIP() << "needs both the avx2 and avx512 paths";
  const MicroKernels<float>& port = portable_kernels_f32();
  gen::Rng rng(1306);
  for (int rows : {1, 3, 4, 5, 8})
    for (int n : {1, 3, 4, 7, 63, 64})
      for (std::int64_t d : {8, 16, 24, 40, 64, 128, 136}) {
        const std::int64_t dv = round_up(d, 16), ld = d + 8;  // rows apart, as in a strided cache
        const std::vector<float> q = normals(rng, rows * d), k = normals(rng, n * ld), v = normals(rng, n * ld);
        const std::string at = "rows " + std::to_string(rows) + " n " + std::to_string(n) + " d " + std::to_string(d);
        std::vector<float> sa(rows * 64), sb(rows * 64);
        a->dots(q.data(), d, rows, k.data(), ld, n, d, 0.3f, sa.data(), 64);
        b->dots(q.data(), d, rows, k.data(), ld, n, d, 0.3f, sb.data(), 64);
        ASSERT_EQ(std::memcmp(sa.data(), sb.data(), sa.size() * 4), 0) << "dots " << at;
        std::vector<float> p = normals(rng, rows * 64);
        for (int i = 0; i < rows * 64; i += 5) p[static_cast<std::size_t>(i)] = 0;  // axpy skips zero weights
        const std::vector<float> o0 = normals(rng, rows * dv);
        const std::vector<float> vv = normals(rng, n * (dv + 16));
        std::vector<float> oa = o0, ob = o0;
        a->pv_rows(p.data(), 64, rows, vv.data(), dv + 16, n, dv, oa.data(), dv);
        b->pv_rows(p.data(), 64, rows, vv.data(), dv + 16, n, dv, ob.data(), dv);
        ASSERT_EQ(std::memcmp(oa.data(), ob.data(), oa.size() * 4), 0) << "pv_rows " << at;
        oa = o0, ob = o0;
        for (int c = 0; c < n; ++c) {
          a->axpy(p.data() + c, 64, rows, vv.data() + c * (dv + 16), dv, oa.data(), dv);
          b->axpy(p.data() + c, 64, rows, vv.data() + c * (dv + 16), dv, ob.data(), dv);
        }
        ASSERT_EQ(std::memcmp(oa.data(), ob.data(), oa.size() * 4), 0) << "axpy " << at;
        for (bool bf16 : {false, true}) {
          std::vector<std::uint16_t> kh(k.size()), vh(vv.size());
          (bf16 ? port.to_bf16 : port.to_f16)(k.data(), static_cast<std::int64_t>(k.size()), kh.data());
          (bf16 ? port.to_bf16 : port.to_f16)(vv.data(), static_cast<std::int64_t>(vv.size()), vh.data());
          a->dots_half(q.data(), d, rows, kh.data(), ld, n, d, bf16, 0.3f, sa.data(), 64);
          b->dots_half(q.data(), d, rows, kh.data(), ld, n, d, bf16, 0.3f, sb.data(), 64);
          ASSERT_EQ(std::memcmp(sa.data(), sb.data(), sa.size() * 4), 0) << "dots_half bf16 " << bf16 << " " << at;
          oa = o0, ob = o0;
          a->pv_rows_half(p.data(), 64, rows, vh.data(), dv + 16, n, dv, bf16, oa.data(), dv);
          b->pv_rows_half(p.data(), 64, rows, vh.data(), dv + 16, n, dv, bf16, ob.data(), dv);
          ASSERT_EQ(std::memcmp(oa.data(), ob.data(), oa.size() * 4), 0) << "pv_rows_half bf16 " << bf16 << " " << at;
        }
      }
}

// The vendor (which picks the AVX-512 set's prefetch tuning) as Linux reports it.
TEST(CoreIsa, VendorIsTheOneLinuxReports) {
  std::ifstream info("/proc/cpuinfo");
  std::string line, vendor;
  while (vendor.empty() && std::getline(info, line))
    if (line.rfind("vendor_id", 0) == 0) vendor = line.substr(line.find(':') + 2);
  if (vendor.empty()) GTEST_SKIP() << "no vendor_id in /proc/cpuinfo";
  EXPECT_EQ(cpu_features().amd, vendor == "AuthenticAMD" || vendor == "HygonGenuine") << vendor;
  const RowKernels<float>* chosen = avx512_row_kernels_f32();
  if (chosen == nullptr) GTEST_SKIP() << "no avx512 path here";
  EXPECT_EQ(chosen, avx512_row_kernels_f32(cpu_features().amd ? Prefetch::into_l2 : Prefetch::into_l1)) << vendor;
  EXPECT_NE(avx512_row_kernels_f32(Prefetch::into_l1), avx512_row_kernels_f32(Prefetch::into_l2));
}

// Both software-prefetch tunings of the AVX-512 set (row_kernels.h), whichever this CPU's vendor
// uses: a prefetch must change no bit.
TEST(CoreIsaKernels, Avx512RowKernelsBitwiseEqualAvx2) {
  for (Prefetch tuning : {Prefetch::into_l1, Prefetch::into_l2}) {
    SCOPED_TRACE(tuning == Prefetch::into_l1 ? "prefetch into L1" : "prefetch into L2");
    avx512_row_kernels_match_avx2(tuning);
    if (HasFatalFailure() || IsSkipped()) return;
  }
}

// The whole core, forward and backward, on the avx512 and avx2 paths: bitwise the same outputs
// (the kernels are, and the tile code around them is shared: this also covers the AVX-512 K tile
// transposition and the rows read in place). Every feature variant (Dk = 24: a transposition
// tail), D = 128, every dtype, dense and gapped layouts.
TEST(CoreIsa, Avx512CoreBitwiseEqualsAvx2) {
  if (avx512_kernels_f32() == nullptr || avx2_kernels_f32() == nullptr)
    GTEST_SKIP() << "needs both the avx2 and avx512 paths";
  CoreKernel a({.isa = Isa::avx512}), b({.isa = Isa::avx2});
  std::uint64_t seed = 1400;
  for (DType t : {DType::f32, DType::f16, DType::bf16})
    for (int variant = -1; variant < kFeatureVariants; ++variant) {
      Problem p = variant < 0 ? testing::make_problem(150, 200, t) : feature_variant(variant, 70, 130, 20, t);
      if (variant < 0) p.shape.Dk = p.shape.Dv = 128;
      ++seed;
      const Case c = with_dout(random_case(p, seed), seed);
      const Layout layout = variant % 2 == 0 ? Layout::gapped : Layout::bhtd;
      EXPECT_TRUE(testing::bitwise_equal(run_forward(a, c, layout), run_forward(b, c, layout)))
          << dtype_name(t) << " variant " << variant;
      const Outputs ga = run_backward(a, c, layout), gb = run_backward(b, c, layout);
      EXPECT_TRUE(testing::same_gradients(ga, gb))
          << dtype_name(t) << " variant " << variant;
    }
}

}  // namespace
}  // namespace attnv::core
