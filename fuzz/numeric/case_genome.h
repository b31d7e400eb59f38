#pragma once
// The numeric fuzz target's input format: a fixed header of byte codes (shape, options, tensor
// exponents, signs, mask density, kv_len, seed) and then 16-bit value codes, read from the end
// of the data as FuzzedDataProvider reads integers. Every byte string decodes to a valid Case,
// and encode() is the exact inverse of decode(), so the mutators can edit the structure and
// write it back.
//
// Values: code bit 15 = sign, bits 9-14 = e6, bits 0-8 = mantissa m;
//   value = +-(1 + m/512) * 2^(tensor_exponent + e6 - 32), 0 when e6 = 0,
// (bias: e6 = 63 means -inf, a hidden key), clamped to where the bound applies and rounded to
// the storage dtype. Values past the explicit codes come from the seed, in the ordinary range.
//
// Range limits, because the bound (reference/bound/BOUND.md section 0) does not cover overflow
// of intermediates: |q|, |k| <= 2^40 and scale <= 2^4 keep q.k * scale below 2^91 for Dk <= 72
// in an f32 accumulator, and keep the fast reference's error radius finite when such logits
// cancel (at 2^56 it gave up: A = 2^113 leaves double-double no correct digit);
// |v|, |bias| <= 2^100 keep the online-softmax accumulator (sum e_j v_j, e_j <= 1, Tk <= 200)
// finite. Logits up to 2^86 are still far beyond where exp overflows (88.7 in f32), so
// overflow bugs in the softmax remain reachable.
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "problem/buffers.h"
#include "problem/case.h"
#include "problem/kernel.h"

namespace attnv::fuzz {

// Positions of the header bytes.
enum Field : std::size_t {
  kDType, kB, kHkv, kGroup, kTq, kTk, kDk, kDv, kFlags, kWindowLeft, kWindowRight, kScale, kSoftcap,
  kLayout, kExpQ, kExpK, kExpV, kExpBias, kSigns, kMaskDensity, kKvLen0, kKvLen1,
  kSeed0, kSeed1, kSeed2, kSeed3, kChunk, kHeaderBytes
};

// Bits of header[kFlags].
enum Flag : std::uint8_t {
  kCausal = 1, kBottomRight = 2, kMask = 4, kBias = 8, kKvLen = 16, kSoftcapOn = 32, kCustomScale = 64,
  kWindow = 128
};

// header[kDType]: bits 0-1 the storage dtype; bit 2 attention sinks (only when the kernel claims
// Capabilities::sinks), bits 3-7 where they sit: z_h = 2 (code - 16) + a seeded per-head offset
// in [-2, 2], clamped to [-30, 30] (a sink far below the logits, of their size, or taking nearly
// all the weight; within the backward's +-32 logit range). Bits 2-7 were ignored before sinks,
// so a saved input with bit 2 set now decodes with sinks for a kernel that claims them.
inline constexpr std::uint8_t kSinksBit = 4;
inline constexpr int kSinkShift = 3;

// header[kB]: bit 0 the batch (B = 1 + bit); bits 1-4 the mask's and the bias's own leading
// extents, [B|1, Hq|1, Tq, Tk] (only when the kernel claims Capabilities::mask_bias_per_batch_head):
// mask per batch, mask per head, bias per batch, bias per head. The first plane takes the values
// of a [Tq, Tk] genome; every other plane is a seeded rotation of them (so planes differ).
inline constexpr int kPlaneShift = 1;
// header[kB] bit 7: decode instead of a forward (only when the kernel claims Capabilities::decode):
// the case is a prompt (judge/decode.h: T = Tk tokens, causal bottom-right, no mask, bias,
// kv_len or packing, which a growing cache excludes) fed to Kernel::decode; bits 5-6 the plan:
// 0 prefill then single tokens, 1 chunks of ceil(T/3), 2 one token per call, 3 a paged cache
// sharing a prefix (only when the kernel claims paged_kv, else plan 0). Bits 5-7 were ignored
// before, so a saved input with bit 7 set now decodes as a decode for such a kernel.
inline constexpr std::uint8_t kDecodeBit = 128;
inline constexpr int kDecodePlanShift = 5;
// header[kHkv]: bit 0 the KV heads (Hkv = 1 + bit); bit 1 ALiBi (only when the kernel claims
// Capabilities::alibi); bits 2-5 its slopes: m_h = 2^(-8 (h + 1) / Hq) (the ALiBi paper's
// geometric slopes) times 2^(code - 8), from gentle to hiding all but the nearest keys.
// Bits 1-7 of both bytes were ignored before planes and ALiBi, so a saved input with them set
// now decodes with those features for a kernel that claims them.
inline constexpr std::uint8_t kAlibiBit = 2;
inline constexpr int kAlibiShift = 2;
// header[kHkv] bit 6: packed variable-length sequences (only when the kernel claims
// Capabilities::varlen). The case is then one batch entry without kv_len, mask or bias (what
// packing excludes), and the kv_len bytes, free, give the packing: S = 1 + header[kKvLen0] % 4
// sequences, the S - 1 inner bounds of cu_seqlens_q and of cu_seqlens_k drawn in [0, Tq] and
// [0, Tk] from header[kKvLen1] and the seed, sorted (equal neighbours: an empty sequence).
// Bit 6 was ignored before, so a saved input with it set now decodes packed for such a kernel.
inline constexpr std::uint8_t kVarlenBit = 64;
// header[kHkv] bit 7, with bit 6: per-sequence key lengths, kv_len [S] (FlashAttention's
// seqused_k; only when the kernel claims Capabilities::varlen_kv_len and kv_len). kv_len[s] from
// the seed: a quarter of the sequences use all their keys, a quarter none, the rest any count
// in [0, len_k[s]]. Bit 7 was ignored before, so a saved input with it set now decodes with
// them for such a kernel.
inline constexpr std::uint8_t kSeqUsedBit = 128;
inline constexpr std::int64_t kMaxSequences = 4;

// header[kChunk] (only when the kernel claims Capabilities::chunked): 0 no chunks, 255 chunks of
// 2^63 - 1 keys, else chunks of that many keys (from 1, every key its own chunk, to past kMaxT,
// one chunk). Appended after the seed: an input written before it, which ends there, reads 0.
// header[kSigns]: bits 0-1 q, 2-3 k, 4-5 v sign modes (1 all positive, 2 all negative); bits
// 6-7 poison: 1 NaN, 2 +inf, 3 -inf in the K and V rows that kv_len hides from every query
//     (only when the kernel claims Capabilities::hidden_nonfinite)
// (SPEC lets hidden positions hold anything; a kernel that multiplies them by 0 leaks NaN).
inline constexpr int kPoisonShift = 6;

inline constexpr std::int64_t kMaxBatch = 2, kMaxHkv = 2, kMaxGroup = 3;
inline constexpr std::int64_t kMaxT = 200;   // past the core's query block of 192
inline constexpr std::int64_t kMaxD = 72;
inline constexpr int kValueExpBias = 32;     // e6 - 32: the per-value exponent offset

struct Genome {
  std::array<std::uint8_t, kHeaderBytes> header{};
  std::vector<std::uint16_t> codes;  // explicit value codes: q, k, v, bias in dense order
};

Genome decode(const std::uint8_t* data, std::size_t size);
std::vector<std::uint8_t> encode(const Genome& g);

// The splitmix64 finaliser: the seeded values past the explicit codes, and dO (differential_judge).
std::uint64_t splitmix(std::uint64_t x);

// What the header codes mean.
std::uint32_t seed_of(const Genome& g);            // the seed of the values past the explicit codes
DType dtype_of(const Genome& g);
Shape shape_of(const Genome& g);
Layout layout_of(const Genome& g);
int tensor_exponent(std::uint8_t code);            // code 0 -> 0; spans [-150, 100]
std::uint8_t code_for_exponent(int e);             // a code whose tensor_exponent is nearest e
std::int64_t length_of(std::uint8_t code, std::int64_t small_max, std::int64_t big_max);
std::uint8_t code_for_length(std::int64_t n, std::int64_t small_max, std::int64_t big_max);
// Small ranges most of the time (cheap cases), sometimes up to the big ones.
inline constexpr std::int64_t kSmallT = 40, kSmallD = 16;

// Value codes: explicit where given, else the seeded default for that position.
std::uint16_t value_code(const Genome& g, std::size_t index);
// Number of value codes the case uses (q, k, v, bias).
std::size_t value_count(const Genome& g);
// Extends g.codes with the seeded defaults up to n codes (so edits keep the other values).
void materialize(Genome& g, std::size_t n);

// Whether the genome asks for a decode that these claims allow (header[kB] bit 7), and its plan
// code (bits 5-6, 3 only when paged_kv is claimed, else 0).
bool decodes(const Genome& g, const Capabilities& caps);
int decode_plan_code(const Genome& g, const Capabilities& caps);

// The Case the genome describes, fitted to what the kernel claims (features it does not claim
// are dropped, so every case is one the kernel must get right).
Case to_case(const Genome& g, const Capabilities& caps);

}  // namespace attnv::fuzz
