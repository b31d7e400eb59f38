// The naive kernel and its planted bugs (see naive_kernel.h). Arithmetic runs in Acc (float, or
// double for f64 storage); the inputs are exact in Acc, so converting them loses nothing.
#include "kernels/naive_kernel.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "problem/buffers.h"
#include "problem/cache_pages.h"
#include "problem/case.h"
#include "problem/error.h"
#include "problem/validate.h"
#include "kernels/flush_guard.h"

namespace attnv::kernels {
namespace {

// SPEC visibility, written here again on purpose (see the header).
struct Visibility {
  const Case& c;
  Plant plant;
  std::int64_t kv_len(std::int64_t b) const {
    if (!c.problem.has_kv_len) return c.problem.shape.Tk;
    return plant == Plant::kv_len_of_batch0 ? c.kv_len[0] : c.kv_len[static_cast<std::size_t>(b)];
  }
  // The mask and bias plane of (b, h), by hand from the extents: the mask_head0 plant reads
  // plane 0 for every batch and head, the bug of a kernel that ignores the leading strides.
  std::size_t plane_at(Leading d, std::int64_t b, std::int64_t h, std::int64_t i, std::int64_t j) const {
    const Shape& s = c.problem.shape;
    if (plant == Plant::mask_head0) b = h = 0;
    const std::int64_t plane = (d.batch ? b : 0) * (d.heads ? s.Hq : 1) + (d.heads ? h : 0);
    return static_cast<std::size_t>((plane * s.Tq + i) * s.Tk + j);
  }
  double bias_at(std::int64_t b, std::int64_t h, std::int64_t i, std::int64_t j) const {
    return c.bias[plane_at(c.problem.bias_dims, b, h, i, j)];
  }
  // Query i's frame: the keys [first, end) it may see and the rows that share its alignment,
  // queries [q0, q0 + rows). Unpacked: [0, kv_len[b]) and all Tq rows; packed sequences: its own
  // sequence's keys (its first kv_len[s] with per-sequence key lengths) and queries. The
  // varlen_global_alignment plant keeps the sequence's keys (a block-diagonal mask) but aligns by
  // the packed corner: every key, every query. `stored_end`: where the sequence's keys end in
  // the packed K (cu_seqlens_k[s+1]), what the seqused_aligned_to_stored_keys plant aligns to;
  // unpacked, Tk for the kv_len_aligned_to_stored_keys plant.
  struct Frame {
    std::int64_t first, end, q0, rows, stored_end;
  };
  Frame frame(std::int64_t b, std::int64_t i) const {
    const Problem& p = c.problem;
    if (p.varlen_sequences == 0)
      return {0, kv_len(b), 0, p.shape.Tq, plant == Plant::kv_len_aligned_to_stored_keys ? p.shape.Tk : kv_len(b)};
    std::size_t s = 0;
    while (c.cu_seqlens_q[s + 1] <= i) ++s;
    const std::int64_t first = c.cu_seqlens_k[s], stored_end = c.cu_seqlens_k[s + 1];
    const std::int64_t end = p.has_kv_len ? first + c.kv_len[s] : stored_end;
    return {first, end, c.cu_seqlens_q[s], c.cu_seqlens_q[s + 1] - c.cu_seqlens_q[s], stored_end};
  }
  // The query's position among the keys, in packed key coordinates: the frame's first key plus
  // i's place in its rows (top-left), or counted back from the frame's last key (bottom-right).
  std::int64_t position(std::int64_t b, std::int64_t i, bool bottom_right) const {
    Frame f = frame(b, i);
    if (plant == Plant::varlen_global_alignment && c.problem.varlen_sequences > 0)
      f = {0, c.problem.shape.Tk, 0, c.problem.shape.Tq, c.problem.shape.Tk};
    if (plant == Plant::seqused_aligned_to_stored_keys || plant == Plant::kv_len_aligned_to_stored_keys) f.end = f.stored_end;
    return bottom_right ? f.end - (f.rows - (i - f.q0)) : f.first + (i - f.q0);
  }
  // The query's position for ALiBi; the alibi_wrong_corner plant takes the other alignment's.
  std::int64_t alibi_position(std::int64_t b, std::int64_t i) const {
    bool bottom_right = c.problem.alignment == Alignment::bottom_right;
    if (plant == Plant::alibi_wrong_corner) bottom_right = !bottom_right;
    return position(b, i, bottom_right);
  }
  // Chunks of C keys from the frame's first key; a query before it is in no key's chunk. The
  // chunk_by_query_index plant takes the chunk of the query's index among its rows instead of its
  // position (the same thing top-left, not bottom-right).
  bool same_chunk(const Frame& f, std::int64_t i, std::int64_t j, std::int64_t pos) const {
    const std::int64_t at = plant == Plant::chunk_by_query_index ? f.first + (i - f.q0) : pos;
    if (at < f.first) return false;
    return (j - f.first) / c.problem.chunk == (at - f.first) / c.problem.chunk;
  }
  bool operator()(std::int64_t b, std::int64_t h, std::int64_t i, std::int64_t j) const {
    const Problem& p = c.problem;
    const Frame f = frame(b, i);
    if (j < f.first || j >= f.end) return false;
    const bool bottom_right = p.alignment == Alignment::bottom_right && plant != Plant::alignment_confused;
    const std::int64_t pos = position(b, i, bottom_right);
    if (p.causal && j > pos + (plant == Plant::causal_off_by_one ? 1 : 0)) return false;
    if (p.window.left >= 0 && pos - j > p.window.left) return false;  // no pos - wl: wl <= 2^63-1
    if (p.window.right >= 0 && j - pos > p.window.right) return false;
    if (p.chunk > 0 && !same_chunk(f, i, j, pos)) return false;
    if (p.has_mask && !c.mask[plane_at(p.mask_dims, b, h, i, j)]) return false;
    if (p.has_bias && bias_at(b, h, i, j) == -kInf) return false;
    return true;
  }
};

template <class Acc>
struct Engine {
  const Case& c;
  const NaiveOptions& opt;
  bool reverse_pv;  // the nondeterministic plant's coin
  Visibility vis{c, opt.plant};

  const Shape& s() const { return c.problem.shape; }
  std::int64_t kv_head(std::int64_t h) const {
    return opt.plant == Plant::gqa_tile ? h % s().Hkv : h / c.problem.group();
  }
  Acc scale() const {
    if (opt.plant == Plant::scale_by_dk && !c.problem.scale) return static_cast<Acc>(1.0 / static_cast<double>(s().Dk));
    if (opt.plant == Plant::scale_divides) return static_cast<Acc>(1.0 / c.problem.effective_scale());
    if (opt.plant == Plant::d_model_scale && !c.problem.scale)
      return static_cast<Acc>(1.0 / std::sqrt(static_cast<double>(s().Hq * s().Dk)));
    return static_cast<Acc>(c.problem.effective_scale());
  }
  // Where Q element (b, h, i, d) is read. The head_slicing plant splits the packed row of
  // Hq * Dk values as [Dk, Hq] (column f = h*Dk + d read as head f % Hq, dim f / Hq): the
  // layer-style reshape bug, at kernel level.
  std::size_t query_index(std::int64_t b, std::int64_t h, std::int64_t i, std::int64_t d) const {
    if (opt.plant != Plant::head_slicing) return c.qi(b, h, i, d);
    const std::int64_t f = h * s().Dk + d;
    return c.qi(b, f % s().Hq, i, f / s().Hq);
  }
  // The dropout_at_inference plant's mask: kept with probability 0.9 (a splitmix64 hash of the
  // element; any generator would do, the bug is that inference drops at all).
  static bool plant_kept(std::int64_t b, std::int64_t h, std::int64_t i, std::int64_t j) {
    std::uint64_t z = 0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(((b * 131 + h) * 8191 + i) * 65599 + j + 1);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return static_cast<double>(z >> 11) * 0x1.0p-53 < 0.9;
  }
  // The raw score s and the logit t = softcap(s) + bias.
  Acc score(std::int64_t b, std::int64_t h, std::int64_t i, std::int64_t j) const {
    Acc dot = 0;
    const std::int64_t hk = kv_head(h);
    for (std::int64_t d = 0; d < s().Dk; ++d)
      dot += static_cast<Acc>(c.q[query_index(b, h, i, d)]) * static_cast<Acc>(c.k[c.ki(b, hk, j, d)]);
    if (opt.plant == Plant::key_normalized) {
      Acc norm = 0;
      for (std::int64_t d = 0; d < s().Dk; ++d) norm += static_cast<Acc>(c.k[c.ki(b, hk, j, d)] * c.k[c.ki(b, hk, j, d)]);
      if (norm > 0) dot /= std::sqrt(norm);
    }
    return dot * scale();
  }
  // with_alibi false: the logit the alibi_dropped_in_backward plant recomputes in the backward.
  Acc logit(std::int64_t b, std::int64_t h, std::int64_t i, std::int64_t j, bool with_alibi = true) const {
    Acc t = score(b, h, i, j);
    if (c.problem.softcap) {
      const Acc cap = static_cast<Acc>(*c.problem.softcap);
      t = cap * std::tanh(t / cap);
    }
    if (c.problem.has_bias)
      t += static_cast<Acc>(vis.bias_at(b, h, i, j)) * (opt.plant == Plant::bias_scaled ? scale() : Acc(1));
    if (c.problem.has_alibi && with_alibi) {
      const std::int64_t d = j - vis.alibi_position(b, i);
      t -= static_cast<Acc>(c.alibi[static_cast<std::size_t>(h)]) * static_cast<Acc>(d < 0 ? -d : d);
    }
    if (opt.plant == Plant::spurious_alibi) t -= static_cast<Acc>(std::abs(static_cast<double>(i - j)) / 4);
    return t;
  }
  // The head's attention sink, or -inf without sinks (exp(-inf - m) = 0 adds nothing).
  Acc sink(std::int64_t h) const {
    if (!c.problem.has_sinks) return -std::numeric_limits<Acc>::infinity();
    const Acc s = static_cast<Acc>(c.sinks[static_cast<std::size_t>(h)]);
    return opt.plant == Plant::sink_scaled ? s * scale() : s;
  }
  Acc value(std::int64_t b, std::int64_t hk, std::int64_t j, std::int64_t d) const {
    const double v = c.v[c.vi(b, hk, j, d)];
    return static_cast<Acc>(opt.plant == Plant::v_sign_lost ? std::abs(v) : v);
  }
  Acc accumulate(Acc acc, Acc term) const {
    const Acc sum = acc + term;
    return opt.plant == Plant::f16_accumulation ? static_cast<Acc>(round_to(DType::f16, sum)) : sum;
  }
  std::vector<std::int64_t> keys_of(std::int64_t b, std::int64_t h, std::int64_t i) const {
    std::vector<std::int64_t> keys;
    for (std::int64_t j = 0; j < s().Tk; ++j)
      if (vis(b, h, i, j) || opt.plant == Plant::mask_after_softmax || opt.plant == Plant::hidden_times_zero)
        keys.push_back(j);
    return keys;
  }

  // Two passes over the keys: max and sum, then the weighted sum of V. Returns L.
  Acc naive_row(std::int64_t b, std::int64_t h, std::int64_t i, const std::vector<std::int64_t>& keys,
                std::vector<Acc>& acc) const {
    const std::int64_t hk = kv_head(h);
    std::vector<Acc> t(keys.size());
    std::vector<bool> hidden(keys.size(), false);
    // The sink joins the max and the sum as a key of value 0.
    Acc m = sink(h);
    for (std::size_t jj = 0; jj < keys.size(); ++jj) {
      hidden[jj] = !vis(b, h, i, keys[jj]);
      t[jj] = logit(b, h, i, keys[jj]);
      if (opt.plant == Plant::hidden_times_zero && hidden[jj]) continue;  // weight 0 below
      m = std::max(m, t[jj]);
    }
    if (opt.plant == Plant::no_max_subtraction) m = 0;
    Acc l = c.problem.has_sinks ? std::exp(sink(h) - m) : Acc(0);
    bool max_skipped = keys.size() < 2;  // the plant needs a second key to leave l > 0
    for (std::size_t jj = 0; jj < keys.size(); ++jj) {
      const Acc logit_j = t[jj];
      t[jj] = (opt.plant == Plant::hidden_times_zero && hidden[jj]) ? Acc(0) : std::exp(logit_j - m);
      if (opt.plant == Plant::denominator_skips_max && logit_j == m && !max_skipped) {
        max_skipped = true;
        continue;
      }
      l += t[jj];
    }
    for (std::size_t step = 0; step < keys.size(); ++step) {
      const std::size_t jj = reverse_pv ? keys.size() - 1 - step : step;
      Acc pj = t[jj] / l;
      if (opt.plant == Plant::mask_after_softmax && hidden[jj]) pj = 0;
      if (opt.plant == Plant::dropout_at_inference) pj = plant_kept(b, h, i, keys[jj]) ? pj / Acc(0.9) : Acc(0);
      for (std::int64_t d = 0; d < s().Dv; ++d)
        acc[static_cast<std::size_t>(d)] =
            accumulate(acc[static_cast<std::size_t>(d)], pj * value(b, hk, keys[jj], d));
    }
    return m + std::log(l);
  }

  // The ggml bug: padding slots start at -inf, the mask would keep them there, but with no mask
  // the softcap runs over them and tanh turns -inf into -1. Only a dispatch to the tiled main
  // path has padding slots: the small problems a toy generator draws never get there.
  bool softcap_pads() const {
    return opt.plant == Plant::softcap_pads_tile && c.problem.softcap && !c.problem.has_mask && s().Tq >= 64 &&
           s().Tk >= 64 && s().Dk % 64 == 0;
  }

  // FlashAttention-2 online softmax over key blocks. Returns L.
  Acc tiled_row(std::int64_t b, std::int64_t h, std::int64_t i, const std::vector<std::int64_t>& keys,
                std::vector<Acc>& acc) const {
    const std::int64_t hk = kv_head(h);
    const std::int64_t block = std::max<std::int64_t>(1, opt.block);
    // The sink starts the running max and sum, as a first block of one key of value 0.
    Acc m = sink(h), l = c.problem.has_sinks ? Acc(1) : Acc(0);
    std::size_t next = 0;
    for (std::int64_t j0 = 0; j0 < s().Tk; j0 += block) {
      std::vector<Acc> t;
      std::vector<std::int64_t> js;
      while (next < keys.size() && keys[next] < j0 + block) {
        t.push_back(logit(b, h, i, keys[next]));
        js.push_back(keys[next++]);
      }
      // The bugs: a partial last block padded with keys that nobody masks, V 0 and a score of 0
      // (zero_padded_tail) or of softcap(-inf) = -cap (softcap_pads_tile).
      const std::int64_t padding = opt.plant == Plant::zero_padded_tail || softcap_pads()
                                       ? std::max<std::int64_t>(0, j0 + block - s().Tk) : 0;
      for (std::int64_t z = 0; z < padding; ++z) {
        t.push_back(opt.plant == Plant::zero_padded_tail ? Acc(0) : -static_cast<Acc>(*c.problem.softcap));
        js.push_back(-1);
      }
      if (t.empty()) continue;  // a fully hidden block is skipped
      const Acc m_new = std::max(m, *std::max_element(t.begin(), t.end()));
      if (m_new > m && m != -std::numeric_limits<Acc>::infinity()) {
        const Acc alpha = std::exp(m - m_new);
        l *= alpha;
        if (opt.plant != Plant::lost_rescale)
          for (Acc& x : acc) x *= alpha;
      }
      m = m_new;
      for (std::size_t jj = 0; jj < t.size(); ++jj) {
        const Acc e = std::exp(t[jj] - m);
        l += e;
        if (js[jj] < 0) continue;  // padding: V = 0
        for (std::int64_t d = 0; d < s().Dv; ++d)
          acc[static_cast<std::size_t>(d)] =
              accumulate(acc[static_cast<std::size_t>(d)], e * value(b, hk, js[jj], d));
      }
    }
    for (Acc& x : acc) x /= l;
    return m + std::log(l);
  }

  double round_out(Acc x) const {
    return opt.plant == Plant::truncated_output ? truncate_to(c.problem.dtype, x) : round_to(c.problem.dtype, x);
  }

  Outputs forward() const {
    Outputs o;
    o.out.assign(static_cast<std::size_t>(out_elements(s())), 0.0);
    o.lse.assign(static_cast<std::size_t>(lse_elements(s())), -kInf);
    const std::int64_t full_query_rows = s().Tq / 8 * 8;
    for (std::int64_t b = 0; b < s().B; ++b)
      for (std::int64_t h = 0; h < s().Hq; ++h)
        for (std::int64_t i = 0; i < s().Tq; ++i) {
          if (opt.plant == Plant::query_tail_skipped && i >= full_query_rows) continue;
          const std::vector<std::int64_t> keys = keys_of(b, h, i);
          std::vector<Acc> acc(static_cast<std::size_t>(s().Dv), Acc(0));
          Acc lse;
          bool any_visible = false;
          for (std::int64_t j = 0; j < s().Tk && !any_visible; ++j) any_visible = vis(b, h, i, j);
          if (!any_visible && !c.problem.has_sinks) {  // SPEC: no visible key gives O = 0, L = -inf
            if (opt.plant == Plant::nan_on_fully_masked)
              for (Acc& x : acc) x = x / Acc(0);
            lse = -std::numeric_limits<Acc>::infinity();
          } else {
            lse = opt.structure == Structure::naive ? naive_row(b, h, i, keys, acc) : tiled_row(b, h, i, keys, acc);
          }
          for (std::int64_t d = 0; d < s().Dv; ++d) o.out[c.oi(b, h, i, d)] = round_out(acc[static_cast<std::size_t>(d)]);
          o.lse[c.li(b, h, i)] = static_cast<double>(lse);  // LSE is stored in the accumulator dtype
        }
    return o;
  }

  // `fwd` holds the forward's own outputs as the views hold them (O rounded, L in Acc).
  Outputs backward(const Outputs& fwd) const {
    Outputs o;
    std::vector<Acc> dq(static_cast<std::size_t>(q_elements(s())), 0), dk(static_cast<std::size_t>(k_elements(s())), 0),
        dv(static_cast<std::size_t>(v_elements(s())), 0);
    std::vector<Acc> dsinks(c.problem.has_sinks ? static_cast<std::size_t>(s().Hq) : 0, 0);
    const Acc sc = scale();
    for (std::int64_t b = 0; b < s().B; ++b)
      for (std::int64_t h = 0; h < s().Hq; ++h) {
        const std::int64_t hk = kv_head(h);
        for (std::int64_t i = 0; i < s().Tq; ++i) {
          const Acc L = static_cast<Acc>(fwd.lse[c.li(b, h, i)]);
          if (L == -std::numeric_limits<Acc>::infinity()) continue;  // no visible key: no gradient
          Acc D = 0;
          for (std::int64_t d = 0; d < s().Dv; ++d)
            D += static_cast<Acc>(c.dout[c.oi(b, h, i, d)]) * static_cast<Acc>(fwd.out[c.oi(b, h, i, d)]);
          if (c.problem.has_sinks) {
            // The sink is a key of value 0: dP_sink = 0, so dS_sink = P_sink (0 - D).
            const Acc P_sink = std::exp(sink(h) - L);
            dsinks[static_cast<std::size_t>(h)] += opt.plant == Plant::dsink_sign_flipped ? P_sink * D : -(P_sink * D);
          }
          for (std::int64_t j = 0; j < s().Tk; ++j) {
            if (!vis(b, h, i, j)) continue;
            const Acc P = std::exp(logit(b, h, i, j, opt.plant != Plant::alibi_dropped_in_backward) - L);
            Acc dP = 0;
            for (std::int64_t d = 0; d < s().Dv; ++d)
              dP += static_cast<Acc>(c.dout[c.oi(b, h, i, d)]) * static_cast<Acc>(c.v[c.vi(b, hk, j, d)]);
            Acc dS = P * (dP - D);
            if (c.problem.softcap) {
              const Acc cap = static_cast<Acc>(*c.problem.softcap);
              const Acc th = std::tanh(score(b, h, i, j) / cap);
              dS *= Acc(1) - th * th;
            }
            if (opt.scale_ds_first) dS *= sc;
            for (std::int64_t d = 0; d < s().Dv; ++d)
              dv[c.vi(b, hk, j, d)] += P * static_cast<Acc>(c.dout[c.oi(b, h, i, d)]);
            for (std::int64_t d = 0; d < s().Dk; ++d) {
              dq[c.qi(b, h, i, d)] += dS * static_cast<Acc>(c.k[c.ki(b, hk, j, d)]);
              dk[c.ki(b, hk, j, d)] += dS * static_cast<Acc>(c.q[c.qi(b, h, i, d)]);
            }
          }
        }
      }
    const Acc dq_scale = opt.scale_ds_first ? Acc(1) : sc;  // already in dS
    const Acc dk_scale = opt.plant == Plant::dk_missing_scale || opt.scale_ds_first ? Acc(1) : sc;
    auto rounded = [&](const std::vector<Acc>& x, Acc factor) {
      std::vector<double> r(x.size());
      for (std::size_t n = 0; n < x.size(); ++n) r[n] = round_out(x[n] * factor);
      return r;
    };
    o.dq = rounded(dq, dq_scale);
    o.dk = rounded(dk, dk_scale);
    o.dv = rounded(dv, Acc(1));
    if (c.problem.has_sinks) o.dsinks = rounded(dsinks, Acc(1));
    return o;
  }
};

// Positions < kv_len[b] of a paged cache (pool t, read through `pages`) as a dense f64
// [B, Hkv, Tk, D] view over `dense`; the rest 0. A page outside the pool (only a planted table
// bug reads entries the call does not use) is left 0 rather than read out of bounds.
TensorRef gather(const TensorRef& t, const CachePages& pages, const Shape& s, std::int64_t D,
                 const std::vector<std::int64_t>& kv_len, std::vector<double>& dense) {
  dense.assign(static_cast<std::size_t>(s.B * s.Hkv * s.Tk * D), 0.0);
  TensorRef ref;
  ref.data = dense.data();
  ref.dtype = DType::f64;
  ref.shape = {s.B, s.Hkv, s.Tk, D};
  ref.stride = dense_strides(ref.shape, 4);
  for (std::int64_t b = 0; b < s.B; ++b)
    for (std::int64_t h = 0; h < s.Hkv; ++h)
      for (std::int64_t j = 0; j < kv_len[static_cast<std::size_t>(b)]; ++j) {
        if (const std::int64_t page = pages.index(b, h, j, 0)[0]; page < 0 || page >= t.shape[0]) continue;
        for (std::int64_t d = 0; d < D; ++d)
          dense[static_cast<std::size_t>(((b * s.Hkv + h) * s.Tk + j) * D + d)] = load(t, pages.index(b, h, j, d));
      }
  return ref;
}

}  // namespace

NaiveKernel::NaiveKernel(NaiveOptions opt, std::string name) : opt_(opt), name_(std::move(name)) {
  if (name_.empty()) name_ = opt_.structure == Structure::naive ? "naive" : "naive_tiled";
}

Capabilities NaiveKernel::capabilities() const {
  Capabilities c;
  c.dtypes = {DType::f64, DType::f32, DType::f16, DType::bf16};
  c.gqa = c.causal_top_left = c.causal_bottom_right = c.window = c.mask = c.bias = c.kv_len = c.chunked = true;
  c.softcap = c.custom_scale = c.lse = c.backward = c.strided = c.decode = c.hidden_nonfinite = true;
  c.sinks = true;
  c.mask_bias_per_batch_head = true;
  c.alibi = true;
  c.paged_kv = true;
  c.varlen = c.varlen_kv_len = true;
  return c;
}

PrecisionModel NaiveKernel::precision(DType storage) const {
  PrecisionModel m = PrecisionModel::natural(storage, opt_.structure == Structure::tiled ? opt_.block : 0);
  m.flush_subnormals = opt_.declare_flush.value_or(opt_.flush_subnormals);
  return m;
}

void NaiveKernel::forward(const Problem& p, const KernelViews& views) {
  const FlushGuard flush(opt_.flush_subnormals);
  forward_unflushed(p, views);
}

void NaiveKernel::backward(const Problem& p, const KernelViews& views) {
  const FlushGuard flush(opt_.flush_subnormals);
  backward_unflushed(p, views);
}

void NaiveKernel::decode(const Problem& p, const DecodeViews& views) {
  const FlushGuard flush(opt_.flush_subnormals);
  decode_unflushed(p, views);
}

void NaiveKernel::forward_unflushed(const Problem& p, const KernelViews& views) {
  const Case c = case_from_views(p, views);
  const bool reverse = opt_.plant == Plant::nondeterministic && (calls_++ % 2 == 1);
  Outputs o = p.dtype == DType::f64 ? Engine<double>{c, opt_, reverse}.forward()
                                    : Engine<float>{c, opt_, reverse}.forward();
  if (opt_.plant == Plant::empty_rows_unwritten) {
    // A row with no visible key (L = -inf) writes its L but skips its O, left as the buffer held
    // it (a kernel that assumes zeroed outputs; with zeroed buffers the exact O = 0 matches):
    // what the buffer held goes back in, as if never written.
    const Shape& sh = p.shape;
    for (std::int64_t b = 0; b < sh.B; ++b)
      for (std::int64_t h = 0; h < sh.Hq; ++h)
        for (std::int64_t i = 0; i < sh.Tq; ++i) {
          const std::size_t r = static_cast<std::size_t>((b * sh.Hq + h) * sh.Tq + i);
          if (o.lse[r] != -std::numeric_limits<double>::infinity()) continue;
          for (std::int64_t d = 0; d < sh.Dv; ++d)
            o.out[r * static_cast<std::size_t>(sh.Dv) + static_cast<std::size_t>(d)] = load(views.out, {b, h, i, d});
        }
  }
  write_outputs(o, p, views);
}

void NaiveKernel::backward_unflushed(const Problem& p, const KernelViews& views) {
  const Case c = case_from_views(p, views);
  // The forward's own O and L, as they sit in the views: O has the shape of dout, so the dense
  // reader of case_from_views reads it when pointed there.
  Outputs fwd;
  KernelViews out_as_dout = views;
  out_as_dout.dout = views.out;
  fwd.out = case_from_views(p, out_as_dout).dout;
  fwd.lse.resize(static_cast<std::size_t>(lse_elements(p.shape)));
  for (std::int64_t b = 0; b < p.shape.B; ++b)
    for (std::int64_t h = 0; h < p.shape.Hq; ++h)
      for (std::int64_t i = 0; i < p.shape.Tq; ++i)
        fwd.lse[c.li(b, h, i)] = load(views.lse, {b, h, i, 0});
  const Outputs o = p.dtype == DType::f64 ? Engine<double>{c, opt_, false}.backward(fwd)
                                          : Engine<float>{c, opt_, false}.backward(fwd);
  write_outputs(o, p, views);
}

void NaiveKernel::decode_unflushed(const Problem& p, const DecodeViews& views) {
  if (auto e = check_decode_views(p, views); !e.empty()) throw InputError("naive decode: invalid call: " + e[0]);
  const Shape& s = p.shape;
  const CachePages pages = CachePages::of(p, views);
  std::vector<std::int64_t> kv_len(static_cast<std::size_t>(s.B));
  for (std::int64_t b = 0; b < s.B; ++b) {
    std::int64_t at = views.cache_len[b];
    if (opt_.plant == Plant::decode_append_shifted && at + s.Tq < s.Tk) ++at;
    for (std::int64_t h = 0; h < s.Hkv; ++h)
      for (std::int64_t i = 0; i < s.Tq; ++i) {
        for (std::int64_t d = 0; d < s.Dk; ++d)
          store(views.k_cache, pages.index(b, h, at + i, d), load(views.k_new, {b, h, i, d}));
        for (std::int64_t d = 0; d < s.Dv; ++d)
          store(views.v_cache, pages.index(b, h, at + i, d), load(views.v_new, {b, h, i, d}));
      }
    std::int64_t& len = kv_len[static_cast<std::size_t>(b)];
    len = views.cache_len[b] + s.Tq;
    // The sequence length taken as whole pages: the last page's slots past cache_len + n count.
    if (opt_.plant == Plant::paged_last_page_full && pages.paged()) len = (len + p.page_size - 1) / p.page_size * p.page_size;
  }
  Problem fp = p;
  fp.has_kv_len = true;
  fp.page_size = 0;
  if (opt_.plant == Plant::decode_top_left) fp.alignment = Alignment::top_left;
  KernelViews fv;
  fv.q = views.q;
  fv.k = views.k_cache;
  fv.v = views.v_cache;
  // A paged cache is gathered into dense f64 copies of [B, Hkv, Tk, D] (exact: every storage
  // value is a double), positions < kv_len[b] only: what a contiguous cache would show the forward.
  std::vector<double> k_dense, v_dense;
  if (pages.paged()) {
    CachePages read = pages;
    std::vector<std::int64_t> row0;
    if (opt_.plant == Plant::paged_table_row0) {  // every sequence reads batch 0's table row
      for (std::int64_t b = 0; b < s.B; ++b) row0.insert(row0.end(), pages.table, pages.table + pages.blocks);
      read.table = row0.data();
    }
    fv.k = gather(views.k_cache, read, s, s.Dk, kv_len, k_dense);
    fv.v = gather(views.v_cache, read, s, s.Dv, kv_len, v_dense);
  }
  fv.kv_len = kv_len.data();
  fv.out = views.out;
  fv.lse = views.lse;
  fv.sinks = views.sinks;
  fv.alibi = views.alibi;
  if (opt_.plant == Plant::alibi_dropped_in_decode) {
    fp.has_alibi = false;
    fv.alibi = TensorRef{};
  }
  forward_unflushed(fp, fv);  // (already under this call's FlushGuard)
}

}  // namespace attnv::kernels
