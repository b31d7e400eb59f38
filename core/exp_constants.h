#pragma once
// The constants of the vectorized f32 exp, shared by every SIMD width (microkernels_avx2.cpp,
// microkernels_avx512.cpp) so that each lane computes the same operations on the same constants:
// the measured accuracy (core/tests/exp_test.cpp, within PrecisionModel::exp_ulps = 2) holds for
// every path, and the paths' exps agree bit for bit.
//
// exp(x) = 2^n exp(r): n = round(x log2 e), r = x - n ln2 in two steps (Cody-Waite: the high
// part has 9 + 8 significant bits, so n * kLn2Hi is exact for |n| < 2^8), exp(r) by the degree-6
// polynomial of Cephes expf on [-ln2/2, ln2/2].
namespace attnv::core::exp_f32 {

// The argument is clamped to [kMin, kMax]: exp(-110) lies below half the smallest subnormal,
// exp(100) above the largest float, so the clamped results are 0 and inf as for the true values.
inline constexpr float kMin = -110.0f;
inline constexpr float kMax = 100.0f;
inline constexpr float kLog2e = 1.44269504088896341f;
inline constexpr float kLn2Hi = 0.693359375f;
inline constexpr float kLn2Lo = -2.12194440e-4f;
// Coefficients, highest degree first: exp(r) ~ 1 + r + r^2 (p5 + p4 r + ... + p0 r^5).
inline constexpr float kP[6] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                                4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f};

}  // namespace attnv::core::exp_f32
