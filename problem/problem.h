#pragma once
// The attention problem: one description used by the core, the reference, the properties, the
// file exchange and the certifier alike. It describes shapes and options only; the values live
// in a Case (problem/case.h) and strided buffers in TensorRef (problem/tensor.h).
// What each field means is defined in docs/semantics.md ("The problem parameters").
#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "problem/dtype.h"

namespace attnv {

// Which corner the causal rule and the window are aligned to (docs/semantics.md "Which keys a query sees").
//   top_left:     p_i = i
//   bottom_right: p_i = i + kv_len[b] - Tq   (the KV-cache / decode convention)
enum class Alignment : std::uint8_t { top_left, bottom_right };

std::string_view alignment_name(Alignment a);  // "top_left", "bottom_right"
std::optional<Alignment> parse_alignment(std::string_view s);

struct Shape {
  std::int64_t B = 1;    // batch
  std::int64_t Hq = 1;   // query heads
  std::int64_t Hkv = 1;  // key/value heads; Hq % Hkv == 0
  std::int64_t Tq = 1;   // queries
  std::int64_t Tk = 1;   // keys
  std::int64_t Dk = 1;   // query/key head dim
  std::int64_t Dv = 1;   // value head dim
  bool operator==(const Shape&) const = default;
};

// Sliding window (left, right); -1 means unbounded on that side.
struct Window {
  std::int64_t left = -1;
  std::int64_t right = -1;
  bool bounded() const { return left >= 0 || right >= 0; }
  bool operator==(const Window&) const = default;
};

// The leading extents of a mask or a bias, [B|1, Hq|1, Tq, Tk] (docs/semantics.md, "Masks and
// biases"): `batch` gives it its own plane per batch entry (B), else one plane broadcast over B;
// `heads` the same over query heads. Neither set is the [Tq, Tk] mask/bias of before.
struct Leading {
  bool batch = false;
  bool heads = false;
  bool any() const { return batch || heads; }
  bool operator==(const Leading&) const = default;
};

struct Problem {
  Shape shape;
  DType dtype = DType::f32;        // storage of Q, K, V, bias, dO and the outputs
  std::optional<double> scale;     // unset: 1/sqrt(Dk)
  std::optional<double> softcap;   // s <- c * tanh(s / c), applied before the bias
  bool causal = false;
  Alignment alignment = Alignment::top_left;
  Window window;
  bool has_mask = false;    // bool [B|1, Hq|1, Tq, Tk] (extents: mask_dims); true = visible
  bool has_bias = false;    // additive [B|1, Hq|1, Tq, Tk] (extents: bias_dims); -inf hides a key
  Leading mask_dims;        // meaningful only with has_mask; default [Tq, Tk] broadcast over B and H
  Leading bias_dims;        // meaningful only with has_bias
  bool has_kv_len = false;  // int64 [B] ([S] per packed sequence); absent means kv_len[b] = Tk
  // Attention sinks: one learned logit per query head [Hq] that joins every row's softmax
  // denominator as a key of value 0 (docs/semantics.md, "Attention sinks").
  bool has_sinks = false;
  // ALiBi: one slope per query head [Hq], m_h >= 0, adding -m_h * |j - p_i| to every logit (p_i
  // the query's position under `alignment`; docs/semantics.md, "ALiBi").
  bool has_alibi = false;
  // Decode calls only: 0 is a contiguous KV cache per batch entry; > 0 a paged cache, a pool of
  // pages of page_size positions reached through a block table (DecodeViews::block_table), with
  // Tk = the capacity of one sequence, a whole number of pages (docs/semantics.md, "Paged KV
  // cache"). A problem field, not only a views flag, so that supports() can decline a page size
  // and unsupported() names the claim.
  std::int64_t page_size = 0;
  // Variable-length packed batch (FlashAttention's varlen API): S >= 1 sequences packed along Tq
  // and Tk with B == 1, their bounds in Case::cu_seqlens_q/k [S+1]; 0 = not varlen. Query i of
  // sequence s sees only keys of sequence s, at local positions (docs/semantics.md, "Packed
  // variable-length sequences").
  std::int64_t varlen_sequences = 0;
  // Chunked local attention (Llama 4's attention_chunk_size): C > 0 hides key j from query i
  // unless floor(j / C) == floor(p_i / C); 0 = none (docs/semantics.md, "Which keys a query sees").
  std::int64_t chunk = 0;

  double effective_scale() const;
  std::int64_t group() const { return shape.Hq / shape.Hkv; }  // G: query heads per KV head
  bool operator==(const Problem&) const = default;
};

// Element counts of each tensor (valid only for a validated problem: no overflow).
std::int64_t q_elements(const Shape& s);    // B*Hq*Tq*Dk
std::int64_t k_elements(const Shape& s);    // B*Hkv*Tk*Dk
std::int64_t v_elements(const Shape& s);    // B*Hkv*Tk*Dv
std::int64_t out_elements(const Shape& s);  // B*Hq*Tq*Dv
std::int64_t lse_elements(const Shape& s);  // B*Hq*Tq
// Mask and bias extents [B|1, Hq|1, Tq, Tk] and their element counts.
std::array<std::int64_t, 4> broadcast_extents(const Shape& s, Leading d);
std::int64_t mask_elements(const Problem& p);  // per p.mask_dims
std::int64_t bias_elements(const Problem& p);  // per p.bias_dims

// One line such as "B=1 Hq=8 Hkv=2 Tq=5 Tk=7 Dk=64 Dv=64 f16 causal(bottom_right) window(3,-1)".
std::string describe(const Problem& p);

}  // namespace attnv
