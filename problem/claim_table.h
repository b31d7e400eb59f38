#pragma once
// Every claim a kernel can make, described once. What reads or writes claims derives from this
// table: Capabilities::unsupported (which claim a problem needs), the claims file of the file
// route (cases/claims.cpp), the plugin ABI's capability bits (plugin/abi_convert.cpp), and the
// certificate's claims in JSON and HTML (report/), and the fitting of every drawn case to a
// kernel's claims (problem/fit_to_claims.h: the generators and the fuzz genome); tests hold the
// certificate schema's keys to it, and the generators and the genome to drawing each row. A new
// claim is one row here (its arithmetic lives in the reference, the bound and the kernels).
#include <cstdint>
#include <string_view>

#include "problem/kernel.h"
#include "problem/problem.h"

namespace attnv {

struct ClaimInfo {
  std::string_view key;    // the name in JSON (certificate, claims files, Python): "causal_bottom_right"
  std::string_view label;  // for people: "causal bottom-right"
  bool Capabilities::*member;
  std::uint32_t abi_bit;   // its ATTNV_CAP_* bit (plugin/abi_convert.cpp checks each against attnv_plugin.h);
                           // 0: not in the plugin ABI yet, so no plugin can claim it
  // What of this claim a problem uses, named as unsupported() reports it ("causal bottom_right"),
  // "" when it uses none. Null for claims about the call rather than the problem (LSE, backward,
  // strides, decode, hidden NaN/inf): callers that need those check them.
  std::string_view (*used_by)(const Problem&);
  // Why a program answering through files cannot claim it ("" when it can): cases/claims.cpp
  // accepts the key only as false.
  std::string_view not_through_files;
  bool files_default;      // its value in the file route's default claims (every forward feature)
  bool may_be_omitted;     // a claims file may leave it out: it came later, and left out it claims less
  // How a problem stops using it (fit_to_claims, problem/fit_to_claims.h), for a kernel that does
  // not claim it or withdraws it in the problem's dtype: the feature switched off, or replaced by
  // one the kernel claims (given here as `caps`). Null exactly where used_by is.
  void (*drop)(Problem&, const Capabilities& caps);
};

// A causal rule the kernel cannot take top-left: bottom-right where it claims that, else none.
inline void drop_top_left(Problem& p, const Capabilities& caps) {
  if (caps.causal_bottom_right && !caps.withdrawn_in(p.dtype, "causal_bottom_right"))
    p.alignment = Alignment::bottom_right;
  else
    p.causal = false;
}

inline constexpr ClaimInfo kClaims[] = {
    {"gqa", "GQA", &Capabilities::gqa, 1u << 0,
     [](const Problem& p) -> std::string_view { return p.shape.Hkv != p.shape.Hq ? "grouped heads (Hkv < Hq)" : ""; },
     "", true, false,
     [](Problem& p, const Capabilities&) { p.shape.Hkv = p.shape.Hq; }},
    {"causal_top_left", "causal top-left", &Capabilities::causal_top_left, 1u << 1,
     [](const Problem& p) -> std::string_view {
       return p.causal && p.alignment == Alignment::top_left ? "causal top_left" : "";
     },
     "", true, false,
     drop_top_left},
    // Bottom-right alignment, whether it places a causal mask, a window or ALiBi's distances
    // (docs/semantics.md: p_i decides all three). Top-left is the baseline every kernel takes for
    // a window or ALiBi; only its causal rule is a claim of its own.
    {"causal_bottom_right", "causal bottom-right", &Capabilities::causal_bottom_right, 1u << 2,
     [](const Problem& p) -> std::string_view {
       if (p.alignment != Alignment::bottom_right) return "";
       return p.causal ? "causal bottom_right" : p.window.bounded() || p.has_alibi ? "bottom_right alignment" : "";
     },
     "", true, false,
     [](Problem& p, const Capabilities&) { p.alignment = Alignment::top_left; }},
    {"window", "window", &Capabilities::window, 1u << 3,
     [](const Problem& p) -> std::string_view { return p.window.bounded() ? "window" : ""; }, "", true, false,
     [](Problem& p, const Capabilities&) { p.window = {}; }},
    {"mask", "mask", &Capabilities::mask, 1u << 4,
     [](const Problem& p) -> std::string_view { return p.has_mask ? "mask" : ""; }, "", true, false,
     [](Problem& p, const Capabilities&) { p.has_mask = false, p.mask_dims = {}; }},
    {"bias", "bias", &Capabilities::bias, 1u << 5,
     [](const Problem& p) -> std::string_view { return p.has_bias ? "bias" : ""; }, "", true, false,
     [](Problem& p, const Capabilities&) { p.has_bias = false, p.bias_dims = {}; }},
    {"kv_len", "kv_len", &Capabilities::kv_len, 1u << 6,
     [](const Problem& p) -> std::string_view { return p.has_kv_len ? "kv_len" : ""; }, "", true, false,
     [](Problem& p, const Capabilities&) { p.has_kv_len = false; }},
    {"softcap", "softcap", &Capabilities::softcap, 1u << 7,
     [](const Problem& p) -> std::string_view { return p.softcap ? "softcap" : ""; }, "", true, false,
     [](Problem& p, const Capabilities&) { p.softcap.reset(); }},
    {"custom_scale", "custom scale", &Capabilities::custom_scale, 1u << 8,
     [](const Problem& p) -> std::string_view { return p.scale ? "custom scale" : ""; }, "", true, false,
     [](Problem& p, const Capabilities&) { p.scale.reset(); }},
    {"lse", "LSE", &Capabilities::lse, 1u << 9, nullptr, "", true, false,
     nullptr},
    {"backward", "backward", &Capabilities::backward, 1u << 10, nullptr, "", false, false,
     nullptr},
    {"decode", "decode", &Capabilities::decode, 1u << 11, nullptr,
     "a case folder holds calls, not a KV cache that persists between them", false, true,
     nullptr},
    {"strided", "strided", &Capabilities::strided, 1u << 12, nullptr, "a case folder has no memory layout", false, true,
     nullptr},
    {"hidden_nonfinite", "hidden NaN/inf stays hidden", &Capabilities::hidden_nonfinite, 1u << 13, nullptr, "", false, true,
     nullptr},
    {"sinks", "attention sinks", &Capabilities::sinks, 1u << 14,
     [](const Problem& p) -> std::string_view { return p.has_sinks ? "sinks" : ""; },
     "", false, true,
     [](Problem& p, const Capabilities&) { p.has_sinks = false; }},
    // A mask or bias with its own batch or head extent; [Tq, Tk] ones need only "mask"/"bias".
    // Off in the file route's default claims: a program written for [Tq, Tk] files claims less.
    {"mask_bias_per_batch_head", "per-batch/per-head mask and bias", &Capabilities::mask_bias_per_batch_head, 1u << 15,
     [](const Problem& p) -> std::string_view {
       return (p.has_mask && p.mask_dims.any()) || (p.has_bias && p.bias_dims.any()) ? "per-batch or per-head mask/bias" : "";
     },
     "", false, true,
     [](Problem& p, const Capabilities&) { p.mask_dims = p.bias_dims = {}; }},
    {"alibi", "ALiBi", &Capabilities::alibi, 1u << 16,
     [](const Problem& p) -> std::string_view { return p.has_alibi ? "ALiBi" : ""; },
     "", false, true,
     [](Problem& p, const Capabilities&) { p.has_alibi = false; }},
    // A problem feature (Problem::page_size), so supports() can decline a page size and
    // unsupported() names it; only decode problems have one.
    {"paged_kv", "paged KV cache", &Capabilities::paged_kv, 1u << 18,
     [](const Problem& p) -> std::string_view { return p.page_size != 0 ? "paged KV cache" : ""; },
     "a case folder holds calls, not page pools and a block table that persist between them", false, true,
     [](Problem& p, const Capabilities&) { p.page_size = 0; }},
    // Packed sequences (Problem::varlen_sequences; the bounds in Case/KernelViews cu_seqlens_q/k):
    // through the plugin ABI as attnv_problem.varlen_sequences and attnv_views.cu_seqlens_q/_k,
    // through files as the manifest's varlen_sequences and cu_seqlens_q.npy, cu_seqlens_k.npy.
    {"varlen", "packed variable-length sequences", &Capabilities::varlen, 1u << 17,
     [](const Problem& p) -> std::string_view { return p.varlen_sequences > 0 ? "varlen" : ""; },
     "", false, true,
     [](Problem& p, const Capabilities&) { p.varlen_sequences = 0; }},
    // Per-sequence key lengths (FlashAttention's seqused_k): kv_len [S] with packed sequences.
    // A claim of its own: a kernel claiming varlen and kv_len was never sent the two together
    // (validate.cpp rejected it until then), so it must not start receiving them unasked.
    {"varlen_kv_len", "per-sequence key lengths (seqused_k)", &Capabilities::varlen_kv_len, 1u << 19,
     [](const Problem& p) -> std::string_view {
       return p.varlen_sequences > 0 && p.has_kv_len ? "per-sequence key lengths (varlen with kv_len)" : "";
     },
     "", false, true,
     [](Problem& p, const Capabilities&) { p.has_kv_len = false; }},
};

}  // namespace attnv
