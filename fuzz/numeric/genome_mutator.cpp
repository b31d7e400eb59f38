// The structure-aware edits and the byte-level edits of genome_mutator.h.
#include "fuzz/numeric/genome_mutator.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <iterator>

#include "problem/dtype.h"

namespace attnv::fuzz {
namespace {

using Rng = std::mt19937_64;

int pick(Rng& rng, int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); }

// Lengths just around the tile sizes in use: the tiled naive kernel's key block (16) and the
// core's key block (64) and query block (192).
constexpr std::int64_t kTileEdges[] = {1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 48, 49,
                                       63, 64, 65, 127, 128, 129, 191, 192, 193};

void set_length(Genome& g, Field f, std::int64_t n, std::int64_t small_max, std::int64_t big_max) {
  g.header[f] = code_for_length(n, small_max, big_max);
}

std::uint16_t with_exponent(std::uint16_t code, int e6) {
  return static_cast<std::uint16_t>((code & ~(63u << 9)) | (static_cast<unsigned>(e6) & 63u) << 9);
}

// Index of the first value code of each tensor in the genome's shape.
struct Offsets {
  std::size_t q, k, v, bias, end;
};
Offsets offsets(const Genome& g) {
  const Shape s = shape_of(g);
  Offsets o{};
  o.q = 0;
  o.k = static_cast<std::size_t>(q_elements(s));
  o.v = o.k + static_cast<std::size_t>(k_elements(s));
  o.bias = o.v + static_cast<std::size_t>(v_elements(s));
  o.end = value_count(g);
  return o;
}

void edit(Genome& g, Rng& rng) {
  const DType t = dtype_of(g);
  switch (pick(rng, 16)) {
    case 0: {  // huge logits: q or k (or both) far above the ordinary range
      const int e = 4 + pick(rng, 37);  // up to the 2^40 cap
      g.header[pick(rng, 2) ? kExpQ : kExpK] = code_for_exponent(e);
      if (pick(rng, 2)) g.header[kExpQ] = g.header[kExpK];
      break;
    }
    case 1:  // every logit negative (q positive, k negative), or every one positive
      g.header[kSigns] = static_cast<std::uint8_t>((g.header[kSigns] & ~15u) | (pick(rng, 2) ? (1u | 2u << 2) : (1u | 1u << 2)));
      break;
    case 2: {  // near-ties: a key row copied onto another, one value one mantissa step away
      const Shape s = shape_of(g);
      const Offsets o = offsets(g);
      materialize(g, o.v);
      const std::int64_t row = s.Dk, rows = s.B * s.Hkv * s.Tk;
      if (rows < 2) break;
      const std::int64_t a = pick(rng, static_cast<int>(rows)), b = pick(rng, static_cast<int>(rows));
      for (std::int64_t d = 0; d < row; ++d)
        g.codes[o.k + static_cast<std::size_t>(b * row + d)] = g.codes[o.k + static_cast<std::size_t>(a * row + d)];
      g.codes[o.k + static_cast<std::size_t>(b * row + pick(rng, static_cast<int>(row)))] ^= 1;
      break;
    }
    case 3: {  // subnormals of the storage dtype in q, k or v
      const Field f = static_cast<Field>(kExpQ + pick(rng, 3));
      g.header[f] = code_for_exponent(min_exponent(t) - pick(rng, 12));
      break;
    }
    case 4:  // V at the top of the f16 range (O near 65504 may round to inf legitimately)
      g.header[kDType] = 1;  // f16
      g.header[kExpV] = code_for_exponent(15 - pick(rng, 3));
      break;
    case 5: {  // lengths around tile sizes, Tq != Tk
      const std::int64_t n = kTileEdges[pick(rng, std::size(kTileEdges))];
      set_length(g, pick(rng, 2) ? kTk : kTq, n, kSmallT, kMaxT);
      break;
    }
    case 6:  // head dims around vector widths
      set_length(g, pick(rng, 2) ? kDk : kDv, kTileEdges[pick(rng, 12)], kSmallD, kMaxD);
      break;
    case 7:  // options on and off
      g.header[kFlags] ^= static_cast<std::uint8_t>(1u << pick(rng, 8));
      break;
    case 8:  // dtype, layout, shape of heads and batch, scale, softcap, window
      g.header[static_cast<Field>(std::array{kDType, kLayout, kB, kHkv, kGroup, kScale, kSoftcap, kWindowLeft,
                                             kWindowRight}[static_cast<std::size_t>(pick(rng, 9))])] =
          static_cast<std::uint8_t>(rng());
      break;
    case 9: {  // kv_len at its edges: 0, Tk, Tk - 1
      const std::int64_t tk = shape_of(g).Tk;
      const std::int64_t v = std::array{std::int64_t{0}, tk, tk - 1}[static_cast<std::size_t>(pick(rng, 3))];
      g.header[kKvLen0 + static_cast<std::size_t>(pick(rng, 2))] = static_cast<std::uint8_t>(std::max<std::int64_t>(v, 0));
      g.header[kFlags] |= kKvLen;
      break;
    }
    case 10:  // mask density: none hidden, most hidden (fully masked rows), half
      g.header[kMaskDensity] = std::array<std::uint8_t, 4>{0, 250, 255, 128}[static_cast<std::size_t>(pick(rng, 4))];
      g.header[kFlags] |= kMask;
      break;
    case 11: {  // one value to an extreme of its tensor: largest, zero, smallest; bias -inf
      const Offsets o = offsets(g);
      if (o.end == 0) break;
      const std::size_t i = static_cast<std::size_t>(rng() % o.end);
      materialize(g, i + 1);
      g.codes[i] = with_exponent(g.codes[i], std::array{63, 0, 1, 40}[static_cast<std::size_t>(pick(rng, 4))]);
      break;
    }
    case 12: {  // a run of values re-drawn over the whole exponent range
      const Offsets o = offsets(g);
      if (o.end == 0) break;
      const std::size_t i = static_cast<std::size_t>(rng() % o.end);
      const std::size_t n = std::min<std::size_t>(1 + rng() % 16, o.end - i);
      materialize(g, i + n);
      for (std::size_t j = i; j < i + n; ++j) g.codes[j] = static_cast<std::uint16_t>(rng());
      break;
    }
    case 13: {  // NaN or inf in the keys and values kv_len hides (at least one such key)
      g.header[kSigns] = static_cast<std::uint8_t>((g.header[kSigns] & 63u) | (1u + static_cast<unsigned>(pick(rng, 3))) << kPoisonShift);
      g.header[kFlags] |= kKvLen;
      const std::int64_t tk = shape_of(g).Tk;
      if (tk < 2) set_length(g, kTk, 2 + pick(rng, 30), kSmallT, kMaxT);
      const std::size_t b = static_cast<std::size_t>(pick(rng, 2));
      g.header[kKvLen0 + b] = static_cast<std::uint8_t>(pick(rng, static_cast<int>(std::min<std::int64_t>(shape_of(g).Tk, 255))));
      break;
    }
    case 14:  // decode (for a kernel that claims it) with one of its plans, or a forward again
      g.header[kB] = static_cast<std::uint8_t>((g.header[kB] & 31u) | (pick(rng, 2) ? kDecodeBit : 0u) |
                                               static_cast<unsigned>(pick(rng, 4)) << kDecodePlanShift);
      break;
    default:  // new seeded values everywhere past the explicit codes
      g.header[kSeed0 + static_cast<std::size_t>(pick(rng, 4))] = static_cast<std::uint8_t>(rng());
      break;
  }
}

}  // namespace

void mutate(Genome& g, std::mt19937_64& rng) {
  for (int n = 1 + pick(rng, 3); n > 0; --n) edit(g, rng);
  g.codes.resize(std::min(g.codes.size(), value_count(g)));
}

void mutate_bytes(std::vector<std::uint8_t>& bytes, std::mt19937_64& rng, const std::vector<std::uint8_t>* other,
                  std::size_t max_size) {
  static constexpr std::uint8_t kInteresting[] = {0, 1, 0x7f, 0x80, 0xff};
  for (int n = 1 + pick(rng, 4); n > 0; --n) {
    if (bytes.empty()) bytes.push_back(static_cast<std::uint8_t>(rng()));
    const std::size_t at = static_cast<std::size_t>(rng() % bytes.size());
    switch (pick(rng, 7)) {
      case 0: bytes[at] ^= static_cast<std::uint8_t>(1u << pick(rng, 8)); break;
      case 1: bytes[at] = static_cast<std::uint8_t>(rng()); break;
      case 2: bytes[at] = kInteresting[pick(rng, static_cast<int>(std::size(kInteresting)))]; break;
      case 3:  // a whole value code (two bytes) at once
        bytes[at] = static_cast<std::uint8_t>(rng());
        if (at + 1 < bytes.size()) bytes[at + 1] = static_cast<std::uint8_t>(rng());
        break;
      case 4: {  // a run copied from elsewhere in the input, or from another input
        const std::vector<std::uint8_t>& from = other && !other->empty() && pick(rng, 2) ? *other : bytes;
        const std::size_t src = static_cast<std::size_t>(rng() % from.size());
        const std::size_t len = std::min({static_cast<std::size_t>(1 + rng() % 32), from.size() - src, bytes.size() - at});
        const std::vector<std::uint8_t> run(from.begin() + static_cast<std::ptrdiff_t>(src),
                                            from.begin() + static_cast<std::ptrdiff_t>(src + len));
        std::copy(run.begin(), run.end(), bytes.begin() + static_cast<std::ptrdiff_t>(at));
        break;
      }
      case 5: {  // bytes inserted (the header, read from the end, shifts by as many)
        const std::size_t len = 1 + rng() % 8;
        for (std::size_t i = 0; i < len; ++i)
          bytes.insert(bytes.begin() + static_cast<std::ptrdiff_t>(at), static_cast<std::uint8_t>(rng()));
        break;
      }
      default: {  // bytes erased
        const std::size_t len = std::min<std::size_t>(1 + rng() % 8, bytes.size() - at);
        bytes.erase(bytes.begin() + static_cast<std::ptrdiff_t>(at), bytes.begin() + static_cast<std::ptrdiff_t>(at + len));
        break;
      }
    }
  }
  if (bytes.size() > max_size) bytes.erase(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(bytes.size() - max_size));
}

}  // namespace attnv::fuzz
