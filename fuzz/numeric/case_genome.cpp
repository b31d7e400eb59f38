#include "fuzz/numeric/case_genome.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "problem/dtype.h"
#include "problem/fit_to_claims.h"

namespace attnv::fuzz {

std::uint64_t splitmix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

namespace {

bool flag(const Genome& g, Flag f) { return (g.header[kFlags] & f) != 0; }

struct TensorCodes {
  std::size_t q = 0, k = 0, v = 0, bias = 0;  // element counts, in this order in the codes
};

TensorCodes counts(const Shape& s, bool bias) {  // the genome's biases are [Tq, Tk]
  TensorCodes t;
  t.q = static_cast<std::size_t>(q_elements(s));
  t.k = static_cast<std::size_t>(k_elements(s));
  t.v = static_cast<std::size_t>(v_elements(s));
  t.bias = bias ? static_cast<std::size_t>(s.Tq * s.Tk) : 0;
  return t;
}

// Sign rule of header[kSigns] for tensor slot 0 (q), 1 (k), 2 (v): 1 all positive, 2 all
// negative (q positive with k negative: every logit negative), else the code's own sign.
double apply_sign_mode(const Genome& g, int slot, double x) {
  switch ((g.header[kSigns] >> (2 * slot)) & 3) {
    case 1: return std::fabs(x);
    case 2: return -std::fabs(x);
    default: return x;
  }
}

double decode_value(std::uint16_t code, int tensor_exp, double cap, DType dtype, bool is_bias) {
  const int e6 = (code >> 9) & 63;
  if (e6 == 0) return 0.0;
  if (is_bias && e6 == 63) return -std::numeric_limits<double>::infinity();
  const double mag = std::ldexp(1.0 + (code & 511) / 512.0, tensor_exp + e6 - kValueExpBias);
  const double clamped = std::min({mag, cap, max_finite(dtype)});
  const double x = (code & 0x8000) ? -clamped : clamped;
  return round_to(dtype, x);
}

}  // namespace

std::uint32_t seed_of(const Genome& g) {
  return static_cast<std::uint32_t>(g.header[kSeed0]) | static_cast<std::uint32_t>(g.header[kSeed1]) << 8 |
         static_cast<std::uint32_t>(g.header[kSeed2]) << 16 | static_cast<std::uint32_t>(g.header[kSeed3]) << 24;
}

// Reads exactly as FuzzedDataProvider::ConsumeIntegral did when the format was defined (from
// the end of the data, most significant byte first, 0 once the data runs out), so every saved
// corpus input decodes as before; written out so that the CLI (g++, no clang headers) links it.
Genome decode(const std::uint8_t* data, std::size_t size) {
  std::size_t remaining = size;
  const auto next = [&]() -> std::uint8_t { return remaining > 0 ? data[--remaining] : 0; };
  Genome g;
  for (auto& b : g.header) b = next();
  const std::size_t n = value_count(g);
  while (remaining >= 2 && g.codes.size() < n) {
    const auto hi = static_cast<std::uint16_t>(next());
    g.codes.push_back(static_cast<std::uint16_t>(hi << 8 | next()));
  }
  return g;
}

// decode() reads from the end, most significant byte first: write the bytes in reading order,
// then reverse.
std::vector<std::uint8_t> encode(const Genome& g) {
  std::vector<std::uint8_t> out(g.header.begin(), g.header.end());
  out.reserve(g.header.size() + 2 * g.codes.size());
  for (std::uint16_t c : g.codes) {
    out.push_back(static_cast<std::uint8_t>(c >> 8));
    out.push_back(static_cast<std::uint8_t>(c & 0xff));
  }
  std::reverse(out.begin(), out.end());
  return out;
}

DType dtype_of(const Genome& g) {
  static constexpr DType kTypes[] = {DType::f32, DType::f16, DType::bf16, DType::f64};
  return kTypes[g.header[kDType] % 4];
}

// The 64 long lengths a sequence code can name: every multiple of 16 from 48 to 192 with its
// neighbours (the tiled naive kernel's key block of 16, the core's 64-key and 192-query blocks),
// and values in between.
constexpr std::int64_t kLongLengths[64] = {
    41,  44,  47,  48,  49,  51,  55,  59,  63,  64,  65,  66,  70,  74,  78,  79,
    80,  81,  85,  89,  93,  95,  96,  97,  99,  103, 107, 111, 112, 113, 114, 118,
    122, 126, 127, 128, 129, 133, 137, 141, 143, 144, 145, 148, 151, 155, 159, 160,
    161, 162, 166, 170, 174, 175, 176, 177, 181, 185, 189, 191, 192, 193, 196, 200};
static_assert(kLongLengths[63] == kMaxT);

std::int64_t length_of(std::uint8_t code, std::int64_t small_max, std::int64_t big_max) {
  if (code < 192) return 1 + code % small_max;
  if (big_max - small_max <= 64) return small_max + 1 + (code - 192) % (big_max - small_max);  // every length
  return kLongLengths[code - 192];
}

std::uint8_t code_for_length(std::int64_t n, std::int64_t small_max, std::int64_t big_max) {
  int best = 0;
  for (int c = 0; c < 256; ++c)
    if (std::llabs(length_of(static_cast<std::uint8_t>(c), small_max, big_max) - n) <
        std::llabs(length_of(static_cast<std::uint8_t>(best), small_max, big_max) - n))
      best = c;
  return static_cast<std::uint8_t>(best);
}

Shape shape_of(const Genome& g) {
  Shape s;
  s.B = 1 + g.header[kB] % kMaxBatch;
  s.Hkv = 1 + g.header[kHkv] % kMaxHkv;
  s.Hq = s.Hkv * (1 + g.header[kGroup] % kMaxGroup);
  s.Tq = length_of(g.header[kTq], kSmallT, kMaxT);
  s.Tk = length_of(g.header[kTk], kSmallT, kMaxT);
  s.Dk = length_of(g.header[kDk], kSmallD, kMaxD);
  s.Dv = length_of(g.header[kDv], kSmallD, kMaxD);
  return s;
}

Layout layout_of(const Genome& g) {
  static constexpr Layout kLayouts[] = {Layout::bhtd, Layout::bthd, Layout::gapped};
  return kLayouts[g.header[kLayout] % 3];
}

int tensor_exponent(std::uint8_t code) {
  if (code < 128) return (code + 8) % 16 - 8;  // ordinary range; code 0 -> 0
  return -150 + (code - 128) * 250 / 127;      // subnormals of f32 up to far beyond exp's range
}

std::uint8_t code_for_exponent(int e) {
  int best = 0;
  for (int c = 0; c < 256; ++c)
    if (std::abs(tensor_exponent(static_cast<std::uint8_t>(c)) - e) <
        std::abs(tensor_exponent(static_cast<std::uint8_t>(best)) - e))
      best = c;
  return static_cast<std::uint8_t>(best);
}

std::size_t value_count(const Genome& g) {
  const TensorCodes t = counts(shape_of(g), flag(g, kBias));
  return t.q + t.k + t.v + t.bias;
}

std::uint16_t value_code(const Genome& g, std::size_t index) {
  if (index < g.codes.size()) return g.codes[index];
  // Seeded default: random sign and mantissa, exponent in [-4, 3] around the tensor's.
  const std::uint64_t r = splitmix(static_cast<std::uint64_t>(seed_of(g)) << 32 ^ index);
  const auto e6 = static_cast<std::uint16_t>(kValueExpBias - 4 + ((r >> 1) & 7));
  return static_cast<std::uint16_t>((r & 1) << 15 | e6 << 9 | ((r >> 4) & 511));
}

void materialize(Genome& g, std::size_t n) {
  n = std::min(n, value_count(g));
  for (std::size_t i = g.codes.size(); i < n; ++i) g.codes.push_back(value_code(g, i));
}

// -1 (unbounded) .. 20, and now and then a side near 2^63 (the manifest allows up to 2^63 - 1):
// a kernel computing pos + wr or pos - wl overflows there, the bug the reference itself once had.
namespace {
std::int64_t window_side(std::uint8_t h) {
  const int v = h % 24;
  if (v == 22) return std::numeric_limits<std::int64_t>::max();
  if (v == 23) return std::numeric_limits<std::int64_t>::max() - 1;
  return v - 1;
}
}  // namespace

bool decodes(const Genome& g, const Capabilities& caps) { return (g.header[kB] & kDecodeBit) != 0 && caps.decode; }

int decode_plan_code(const Genome& g, const Capabilities& caps) {
  const int code = (g.header[kB] >> kDecodePlanShift) & 3;
  return code == 3 && !caps.paged_kv ? 0 : code;
}

Case to_case(const Genome& g, const Capabilities& caps) {
  Problem p;
  // Everything the header switches on, then fitted to the claims (the claim table's drops).
  p.shape = shape_of(g);
  p.dtype = dtype_of(g);
  p.alignment = flag(g, kBottomRight) ? Alignment::bottom_right : Alignment::top_left;
  p.causal = flag(g, kCausal);
  if (flag(g, kWindow)) {
    p.window.left = window_side(g.header[kWindowLeft]);
    p.window.right = window_side(g.header[kWindowRight]);
  }
  p.has_mask = flag(g, kMask);
  p.has_bias = flag(g, kBias);
  p.has_kv_len = flag(g, kKvLen);
  if (flag(g, kSoftcapOn)) p.softcap = std::ldexp(1.0, g.header[kSoftcap] % 64 / 8 - 2) * (1 + g.header[kSoftcap] / 64 / 4.0);
  if (flag(g, kCustomScale)) p.scale = std::ldexp(1.0 + (g.header[kScale] & 3) / 4.0, (g.header[kScale] >> 2) % 9 - 5);
  if (g.header[kChunk] != 0) p.chunk = g.header[kChunk] == 255 ? std::numeric_limits<std::int64_t>::max() : g.header[kChunk];
  p.has_sinks = (g.header[kDType] & kSinksBit) != 0;
  p.has_alibi = (g.header[kHkv] & kAlibiBit) != 0;
  const int planes = (g.header[kB] >> kPlaneShift) & 15;
  if (p.has_mask) p.mask_dims = {(planes & 1) != 0, (planes & 2) != 0};
  if (p.has_bias) p.bias_dims = {(planes & 4) != 0, (planes & 8) != 0};
  // Packing reshapes the rest of the case (one batch entry, no mask or bias), so it is switched
  // on only for a kernel that claims it: unclaimed, it costs the other features nothing.
  if ((g.header[kHkv] & kVarlenBit) != 0 && caps.varlen && !caps.withdrawn_in(p.dtype, "varlen")) {
    p.shape.B = 1;
    p.has_mask = p.has_bias = false;
    p.has_kv_len = (g.header[kHkv] & kSeqUsedBit) != 0;
    p.mask_dims = p.bias_dims = {};
    p.varlen_sequences = 1 + g.header[kKvLen0] % kMaxSequences;
  }
  if (decodes(g, caps)) {  // a prompt: what a growing cache excludes goes
    p.has_mask = p.has_bias = p.has_kv_len = false;
    p.mask_dims = p.bias_dims = {};
    p.varlen_sequences = 0;
    p.causal = true;
    p.alignment = Alignment::bottom_right;
  }
  fit_to_claims(p, caps);

  Case c = make_zero_case(p);
  c.id = "fuzz";
  const DType t = p.dtype;
  // Offsets into the codes follow the genome's own shape (bias included when its flag is set),
  // so a capability that changes the case does not reshuffle the values.
  const TensorCodes n = counts(shape_of(g), flag(g, kBias));
  const double cap_qk = std::ldexp(1.0, 40), cap_v = std::ldexp(1.0, 100);
  auto fill = [&](std::vector<double>& dst, std::size_t offset, std::size_t avail, int slot, std::uint8_t exp_code,
                  double cap, bool is_bias) {
    const int e = tensor_exponent(exp_code);
    for (std::size_t i = 0; i < dst.size(); ++i) {
      const std::uint16_t code = value_code(g, offset + (i < avail ? i : i % std::max<std::size_t>(avail, 1)));
      const double x = decode_value(code, e, cap, t, is_bias);
      dst[i] = slot >= 0 ? apply_sign_mode(g, slot, x) : x;
    }
  };
  fill(c.q, 0, n.q, 0, g.header[kExpQ], cap_qk, false);
  fill(c.k, n.q, n.k, 1, g.header[kExpK], cap_qk, false);
  fill(c.v, n.q + n.k, n.v, 2, g.header[kExpV], cap_v, false);
  if (p.has_bias) {
    const std::size_t plane = n.bias;  // Tq * Tk: the genome's codes describe one plane
    std::vector<double> first(plane);
    fill(first, n.q + n.k + n.v, n.bias, -1, g.header[kExpBias], cap_v, true);
    for (std::size_t at = 0; at < c.bias.size(); at += plane) {
      const std::size_t shift = at == 0 ? 0 : splitmix(static_cast<std::uint64_t>(seed_of(g)) * 31 + at) % plane;
      for (std::size_t e = 0; e < plane; ++e) c.bias[at + e] = first[(e + shift) % plane];
    }
  }
  if (p.has_sinks) {
    const double centre = 2.0 * ((g.header[kDType] >> kSinkShift) - 16);
    for (std::size_t h = 0; h < c.sinks.size(); ++h) {
      const std::uint64_t r = splitmix(static_cast<std::uint64_t>(seed_of(g)) * 7919 + 0x51 + h);
      const double offset = static_cast<double>(r % 4097) / 1024.0 - 2.0;
      c.sinks[h] = std::clamp(centre + offset, -30.0, 30.0);
    }
  }
  if (p.has_mask) {  // element e of every plane, in order (the first plane as before planes)
    const std::uint32_t density = g.header[kMaskDensity];
    for (std::size_t e = 0; e < c.mask.size(); ++e) {
      const std::uint64_t r = splitmix(static_cast<std::uint64_t>(seed_of(g)) * 131 + e);
      c.mask[e] = (r & 255) < density ? 0 : 1;
    }
  }
  if (p.has_alibi) {
    const int k = (g.header[kHkv] >> kAlibiShift) % 16;
    const auto hq = static_cast<double>(p.shape.Hq);
    for (std::size_t h = 0; h < c.alibi.size(); ++h)
      c.alibi[h] = std::exp2(-8.0 * static_cast<double>(h + 1) / hq + (k - 8));
  }
  if (p.varlen_sequences > 0) {
    const std::int64_t totals[] = {p.shape.Tq, p.shape.Tk};
    std::vector<std::int64_t>* bounds[] = {&c.cu_seqlens_q, &c.cu_seqlens_k};
    for (std::size_t a = 0; a < 2; ++a) {
      std::vector<std::int64_t>& cu = *bounds[a];  // [0, total, ..., total] from make_zero_case
      for (std::size_t s = 1; s + 1 < cu.size(); ++s) {
        const std::uint64_t r = splitmix(static_cast<std::uint64_t>(seed_of(g)) * 8191 + g.header[kKvLen1] * 64u + a * 8 + s);
        cu[s] = static_cast<std::int64_t>(r % static_cast<std::uint64_t>(totals[a] + 1));
      }
      std::sort(cu.begin() + 1, cu.end() - 1);
    }
  }
  if (p.has_kv_len && p.varlen_sequences > 0)  // the kv_len bytes gave the packing: from the seed
    for (std::size_t s = 0; s < c.kv_len.size(); ++s) {
      const std::int64_t len = c.cu_seqlens_k[s + 1] - c.cu_seqlens_k[s];
      const std::uint64_t r = splitmix(static_cast<std::uint64_t>(seed_of(g)) * 4099 + 0x5e9 + s);
      c.kv_len[s] = r % 4 == 0 ? len : r % 4 == 1 ? 0 : static_cast<std::int64_t>((r >> 2) % static_cast<std::uint64_t>(len + 1));
    }
  else if (p.has_kv_len)
    for (std::int64_t b = 0; b < p.shape.B; ++b)
      c.kv_len[static_cast<std::size_t>(b)] = g.header[kKvLen0 + static_cast<std::size_t>(b)] % (p.shape.Tk + 1);
  round_to_storage(c);
  // Poison is planted only for a kernel that claims hidden NaN/inf stay hidden (R6's claim): for
  // the others a leak is a robustness note on the certificate, not a finding to hunt.
  if (const int poison = g.header[kSigns] >> kPoisonShift; poison != 0 && p.has_kv_len && caps.hidden_nonfinite) {
    const double bad = poison == 1 ? std::numeric_limits<double>::quiet_NaN()
                                   : (poison == 2 ? 1.0 : -1.0) * std::numeric_limits<double>::infinity();
    const auto plant = [&](std::int64_t b, std::int64_t from, std::int64_t to) {
      for (std::int64_t h = 0; h < p.shape.Hkv; ++h)
        for (std::int64_t j = from; j < to; ++j) {
          for (std::int64_t d = 0; d < p.shape.Dk; ++d) c.k[c.ki(b, h, j, d)] = bad;
          for (std::int64_t d = 0; d < p.shape.Dv; ++d) c.v[c.vi(b, h, j, d)] = bad;
        }
    };
    // Packed: the keys each sequence leaves unused (the others' keys stay finite: they are seen).
    if (p.varlen_sequences > 0)
      for (std::size_t s = 0; s < c.kv_len.size(); ++s) plant(0, c.cu_seqlens_k[s] + c.kv_len[s], c.cu_seqlens_k[s + 1]);
    else
      for (std::int64_t b = 0; b < p.shape.B; ++b) plant(b, c.kv_len_of(b), p.shape.Tk);
  }
  return c;
}

}  // namespace attnv::fuzz
