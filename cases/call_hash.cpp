#include "cases/call_hash.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <vector>

#include "problem/error.h"
#include "problem/features/registry.h"

namespace attnv::cases {
namespace {

// Word-at-a-time mixing (each word multiplied in, rotated, then the splitmix64 finaliser at the
// end): a single flipped bit anywhere changes about half the output bits. Not cryptographic;
// the inputs are attnv's own generated cases, and a replayed call's problem is compared too.
class Hasher {
 public:
  void word(std::uint64_t w) {
    h_ ^= w * 0x9e3779b97f4a7c15ull;
    h_ = std::rotl(h_, 29) * 0xbf58476d1ce4e5b9ull + ++n_;
  }
  void real(double x) { word(std::isnan(x) ? 0x7ff8000000000000ull : std::bit_cast<std::uint64_t>(x)); }
  void opt(const std::optional<double>& x) {
    word(x.has_value());
    real(x.value_or(0.0));
  }
  std::uint64_t finish() const {
    std::uint64_t z = h_ ^ n_;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }

 private:
  std::uint64_t h_ = 0x6174746e762d6331ull;  // "attnv-c1"
  std::uint64_t n_ = 0;
};

}  // namespace

std::uint64_t call_hash(const Case& c) {
  Hasher h;
  const Problem& p = c.problem;
  h.word(1);  // serialization version
  h.word(c.has_dout() ? 2 : 1);
  h.word(static_cast<std::uint64_t>(p.dtype));
  for (std::int64_t d : {p.shape.B, p.shape.Hq, p.shape.Hkv, p.shape.Tq, p.shape.Tk, p.shape.Dk, p.shape.Dv})
    h.word(static_cast<std::uint64_t>(d));
  h.opt(p.scale);
  h.opt(p.softcap);
  h.word(p.causal);
  h.word(static_cast<std::uint64_t>(p.alignment));
  h.word(static_cast<std::uint64_t>(p.window.left));
  h.word(static_cast<std::uint64_t>(p.window.right));
  h.word(p.has_mask);
  h.word(p.has_bias);
  h.word(p.has_kv_len);
  // The later options (problem/features/) are not hashed row by row: each is hashed
  // through its data (sinks, ALiBi, the packed bounds, below) or, for the extents, this one word,
  // as they were before the table; a row-by-row hash would change every exported case's hash.
  // Rows with a hash_tag (chunk and later) are hashed by it, at the end.
  // CallHash.EveryLaterOptionInAManifestChangesTheHash holds each row to it.
  // Leading extents of mask and bias: hashed only when present, so every call recorded before
  // they existed keeps its hash. B == Hq makes [B,1] and [1,Hq] the same size: the bits tell them apart.
  if (p.mask_dims.any() || p.bias_dims.any())
    h.word(0x100u | (p.mask_dims.batch ? 1u : 0u) | (p.mask_dims.heads ? 2u : 0u) | (p.bias_dims.batch ? 4u : 0u) |
           (p.bias_dims.heads ? 8u : 0u));
  // Each tensor is preceded by its length, so values cannot slide from one tensor into the next.
  auto reals = [&h](const std::vector<double>& v) {
    h.word(v.size());
    for (double x : v) h.real(x);
  };
  reals(c.q);
  reals(c.k);
  reals(c.v);
  h.word(c.mask.size());
  for (std::uint8_t m : c.mask) h.word(m);
  reals(c.bias);
  auto int64s = [&h](const std::vector<std::int64_t>& v) {
    h.word(v.size());
    for (std::int64_t n : v) h.word(static_cast<std::uint64_t>(n));
  };
  // kv_len hashes as it always did: its length (0 when absent) and values, even when absent.
  for (const IndexInput& in : kIndexInputs)
    if (in.hash == IndexInput::Hash::with_tensors) int64s(c.*in.values);
  reals(c.dout);
  // The per-head inputs came later: each hashed only when present, after its fixed tag, so the
  // hash of every case without them (and of every folder exported before them) is unchanged.
  for (const HeadInput& in : kHeadInputs)
    if (p.*in.present) {
      h.word(in.hash_tag);
      reals(c.*in.values);
    }
  // The later index arrays likewise (packed sequences' bounds: "varlen", then both).
  for (const IndexInput& in : kIndexInputs)
    if (in.hash == IndexInput::Hash::when_present && in.present(p)) {
      if (in.hash_tag != 0) h.word(in.hash_tag);
      int64s(c.*in.values);
    }
  // Options with no data of their own (chunk): their tag and value, when set.
  for (const ProblemOption& o : kProblemOptions)
    if (o.hash_tag != 0 && o.get(p) != 0) {
      h.word(o.hash_tag);
      h.word(static_cast<std::uint64_t>(o.get(p)));
    }
  return h.finish();
}

std::uint64_t file_hash(const std::filesystem::path& file) {
  std::ifstream f(file, std::ios::binary);
  if (!f) throw InputError(file.string() + ": cannot open for reading");
  Hasher h;
  h.word(0x66696c65);  // "file": never equal to a call hash's serialization
  std::vector<char> buf(std::size_t{1} << 20);
  std::uint64_t total = 0;
  while (f) {
    f.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const std::size_t got = static_cast<std::size_t>(f.gcount());
    // Chunks are whole words except the last; its tail is zero-padded and the length is hashed
    // at the end, so a file and the same file with zero bytes appended differ.
    for (std::size_t n = 0; n < got; n += 8) {
      std::uint64_t w = 0;
      std::memcpy(&w, buf.data() + n, std::min<std::size_t>(8, got - n));
      h.word(w);
    }
    total += got;
  }
  if (f.bad()) throw InputError(file.string() + ": read error");
  h.word(total);
  return h.finish();
}

std::string hash_hex(std::uint64_t h) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace attnv::cases
