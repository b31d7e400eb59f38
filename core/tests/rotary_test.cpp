// The core's rotary embedding (NeoX half-split) against the long-double reference and its
// derived per-element bound (reference/rotary.h) for every storage dtype, strided and in place;
// two planted bugs (GPT-J interleaved pairs, positions off by one) must fail the same judgement;
// bad calls give clear errors.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/rotary.h"
#include "gen/rng.h"
#include "problem/buffers.h"
#include "problem/error.h"
#include "reference/bound/bound.h"
#include "reference/rotary.h"

namespace attnv::core {
namespace {

using I = std::int64_t;
using Shape4 = std::array<I, 4>;

// A [B, H, T, D] tensor in a dtype, BTHD memory order when `bthd` (strided for the kernel).
struct Tensor {
  std::vector<unsigned char> bytes;
  TensorRef ref;
  Tensor(DType t, Shape4 s, bool bthd) {
    bytes.assign(static_cast<std::size_t>(s[0] * s[1] * s[2] * s[3] * dtype_bytes(t)), 0);
    ref = TensorRef{bytes.data(), t, 4, s, dense_strides(s, 4)};
    if (bthd) ref.stride = {s[2] * s[1] * s[3], s[3], s[1] * s[3], 1};
  }
  void write(const std::vector<double>& x) {
    std::size_t n = 0;
    for (I b = 0; b < ref.shape[0]; ++b)
      for (I h = 0; h < ref.shape[1]; ++h)
        for (I t = 0; t < ref.shape[2]; ++t)
          for (I d = 0; d < ref.shape[3]; ++d) store(ref, {b, h, t, d}, x[n++]);
  }
  std::vector<double> read() const {
    std::vector<double> x;
    for (I b = 0; b < ref.shape[0]; ++b)
      for (I h = 0; h < ref.shape[1]; ++h)
        for (I t = 0; t < ref.shape[2]; ++t)
          for (I d = 0; d < ref.shape[3]; ++d) x.push_back(load(ref, {b, h, t, d}));
    return x;
  }
};

constexpr Shape4 kShape{2, 3, 5, 16};

std::vector<double> random_values(DType t, std::uint64_t seed) {
  gen::Rng rng(seed);
  std::vector<double> x(static_cast<std::size_t>(kShape[0] * kShape[1] * kShape[2] * kShape[3]));
  for (double& v : x) v = round_to(t, 3 * rng.normal());
  return x;
}

// Positions [B, T]: small, mid-range and large (the angle grows with the position).
std::vector<I> positions() { return {0, 1, 17, 4095, 100000, 3, 8191, 8192, 65535, 250000}; }

// "" when every element of `got` is accepted against the reference, else the first failure.
// `worst` receives the largest |got - exact| / threshold (the share of the allowance used).
std::string judge(const std::vector<double>& x, const std::vector<double>& got, DType t, double* worst = nullptr) {
  const reference::RotaryReference r = reference::rotary_reference(x, kShape, positions(), 10000, t == DType::f64 ? DType::f64 : DType::f32);
  if (worst) {
    *worst = 0;
    for (std::size_t i = 0; i < got.size(); ++i)
      *worst = std::max(*worst, std::abs(got[i] - r.y[i]) / bound::threshold(got[i], r.y[i], r.bound[i], t));
  }
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!bound::accept(got[i], r.y[i], r.bound[i], t))
      return "element " + std::to_string(i) + ": " + std::to_string(got[i]) + ", exact " + std::to_string(r.y[i]) +
             ", bound " + std::to_string(r.bound[i]);
  return "";
}

TEST(CoreRotary, WithinDerivedBoundEveryDtypeStridedAndInPlace) {
  for (DType t : {DType::f32, DType::f16, DType::bf16, DType::f64}) {
    const std::vector<double> x = random_values(t, 11);
    Tensor in(t, kShape, false), out(t, kShape, true);
    in.write(x);
    apply_rotary(in.ref, out.ref, positions().data());
    double worst = 0;
    EXPECT_EQ(judge(x, out.read(), t, &worst), "") << dtype_name(t);
    std::printf("rotary %s: worst error / allowance %.3g\n", std::string(dtype_name(t)).c_str(), worst);
    EXPECT_EQ(in.read(), x) << "the input was written";
    apply_rotary(in.ref, in.ref, positions().data());  // in place: the same bits
    EXPECT_EQ(in.read(), out.read()) << dtype_name(t);
  }
}

// Planted bug: GPT-J interleaved pairs (2d, 2d + 1) instead of the half split, with the core's
// arithmetic otherwise (angle in double, cos/sin rounded to f32).
std::vector<double> interleaved(const std::vector<double>& x, DType t) {
  std::vector<double> y(x.size());
  const I D = kShape[3], T = kShape[2];
  const std::vector<I> pos = positions();
  for (std::size_t row = 0; row < x.size() / static_cast<std::size_t>(D); ++row) {
    const I b = static_cast<I>(row) / (kShape[1] * T), tk = static_cast<I>(row) % T;
    for (I d = 0; d < D / 2; ++d) {
      const double a = static_cast<double>(pos[static_cast<std::size_t>(b * T + tk)]) * std::pow(10000.0, -2.0 * d / D);
      const float c = static_cast<float>(std::cos(a)), s = static_cast<float>(std::sin(a));
      const float x0 = static_cast<float>(x[row * D + 2 * d]), x1 = static_cast<float>(x[row * D + 2 * d + 1]);
      y[row * D + 2 * d] = round_to(t, x0 * c - x1 * s);
      y[row * D + 2 * d + 1] = round_to(t, x1 * c + x0 * s);
    }
  }
  return y;
}

TEST(CoreRotary, PlantedBugsFailTheBound) {
  for (DType t : {DType::f32, DType::f16, DType::bf16}) {
    const std::vector<double> x = random_values(t, 12);
    EXPECT_NE(judge(x, interleaved(x, t), t), "") << "GPT-J interleaving passed in " << dtype_name(t);
    Tensor in(t, kShape, false), out(t, kShape, false);
    in.write(x);
    std::vector<I> shifted = positions();
    for (I& p : shifted) ++p;
    apply_rotary(in.ref, out.ref, shifted.data());
    EXPECT_NE(judge(x, out.read(), t), "") << "positions off by one passed in " << dtype_name(t);
  }
}

std::string error_of(const TensorRef& in, const TensorRef& out, const I* pos) {
  try {
    apply_rotary(in, out, pos);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(CoreRotary, BadCallsGiveClearErrors) {
  Tensor a(DType::f32, kShape, false), odd(DType::f32, {2, 3, 5, 15}, false), h(DType::f16, kShape, false);
  EXPECT_NE(error_of(odd.ref, odd.ref, positions().data()).find("D = 15 must be even"), std::string::npos);
  EXPECT_NE(error_of(a.ref, h.ref, positions().data()).find("same dtype"), std::string::npos);
  std::vector<I> bad = positions();
  bad[7] = -2;
  EXPECT_NE(error_of(a.ref, a.ref, bad.data()).find("positions[b=1, t=2] = -2 is negative"), std::string::npos);
  EXPECT_NE(error_of(a.ref, a.ref, nullptr).find("positions are required"), std::string::npos);
}

}  // namespace
}  // namespace attnv::core
