#pragma once
// A Case: a problem and its values. Every value is the exact value its storage dtype holds,
// kept as a double (f32, f16 and bf16 values are exact in f64), in dense row-major order:
//   q [B, Hq, Tq, Dk], k [B, Hkv, Tk, Dk], v [B, Hkv, Tk, Dv], dout [B, Hq, Tq, Dv],
//   mask and bias [B|1, Hq|1, Tq, Tk] (Problem::mask_dims, bias_dims), kv_len [B] ([S] with packed sequences), sinks [Hq],
//   alibi [Hq], cu_seqlens_q and cu_seqlens_k [S+1] (S = Problem::varlen_sequences).
// Strided layouts are a kernel-side concern (problem/tensor.h); the reference reads Cases.
#include <cstdint>
#include <string>
#include <vector>

#include "problem/problem.h"

namespace attnv {

struct Case {
  Problem problem;
  std::vector<double> q, k, v;
  std::vector<std::uint8_t> mask;    // 1 = visible; empty unless problem.has_mask
  std::vector<double> bias;          // empty unless problem.has_bias
  std::vector<std::int64_t> kv_len;  // empty unless problem.has_kv_len
  std::vector<double> sinks;         // empty unless problem.has_sinks: one logit per query head
  std::vector<double> alibi;         // empty unless problem.has_alibi: one slope per query head
  // Packed sequences (empty unless problem.varlen_sequences > 0): sequence s holds queries
  // cu_seqlens_q[s] .. cu_seqlens_q[s+1] - 1 and keys cu_seqlens_k[s] .. cu_seqlens_k[s+1] - 1.
  std::vector<std::int64_t> cu_seqlens_q, cu_seqlens_k;
  std::vector<double> dout;          // empty when no backward is asked for
  std::string id;                    // a name for reports ("near_ties/17", "golden/three_token")

  bool has_dout() const { return !dout.empty(); }
  // Batch entry b's key count; not for packed sequences, whose kv_len is per sequence.
  std::int64_t kv_len_of(std::int64_t b) const {
    return problem.has_kv_len ? kv_len[static_cast<std::size_t>(b)] : problem.shape.Tk;
  }
  // Dense offsets (inline: the references and the bound call them once per element).
  std::size_t qi(std::int64_t b, std::int64_t h, std::int64_t i, std::int64_t d) const {
    const Shape& s = problem.shape;
    return static_cast<std::size_t>(((b * s.Hq + h) * s.Tq + i) * s.Dk + d);
  }
  std::size_t ki(std::int64_t b, std::int64_t h, std::int64_t j, std::int64_t d) const {
    const Shape& s = problem.shape;
    return static_cast<std::size_t>(((b * s.Hkv + h) * s.Tk + j) * s.Dk + d);
  }
  std::size_t vi(std::int64_t b, std::int64_t h, std::int64_t j, std::int64_t d) const {
    const Shape& s = problem.shape;
    return static_cast<std::size_t>(((b * s.Hkv + h) * s.Tk + j) * s.Dv + d);
  }
  std::size_t oi(std::int64_t b, std::int64_t h, std::int64_t i, std::int64_t d) const {  // out, dout
    const Shape& s = problem.shape;
    return static_cast<std::size_t>(((b * s.Hq + h) * s.Tq + i) * s.Dv + d);
  }
  std::size_t li(std::int64_t b, std::int64_t h, std::int64_t i) const {  // lse
    const Shape& s = problem.shape;
    return static_cast<std::size_t>((b * s.Hq + h) * s.Tq + i);
  }
  // Mask and bias of query head h of batch b: their broadcast extents pick the plane, so every
  // reader addresses them by (b, h) and a broadcast cannot be forgotten.
  std::size_t mi(std::int64_t b, std::int64_t h, std::int64_t i, std::int64_t j) const {
    return plane_index(problem.mask_dims, b, h, i, j);
  }
  std::size_t bi(std::int64_t b, std::int64_t h, std::int64_t i, std::int64_t j) const {
    return plane_index(problem.bias_dims, b, h, i, j);
  }
  std::size_t plane_index(Leading d, std::int64_t b, std::int64_t h, std::int64_t i, std::int64_t j) const {
    const Shape& s = problem.shape;
    const std::int64_t plane = (d.batch ? b : 0) * (d.heads ? s.Hq : 1) + (d.heads ? h : 0);
    return static_cast<std::size_t>((plane * s.Tq + i) * s.Tk + j);
  }
};

// Allocate every tensor the problem asks for, zero-filled (kv_len filled with Tk, mask with 1).
Case make_zero_case(const Problem& p, bool with_dout = false);
// Round every value of the case to its storage dtype (generators call this last).
void round_to_storage(Case& c);

// What a kernel or the reference produces, as exact doubles, in the dense layout above:
// out [B,Hq,Tq,Dv], lse [B,Hq,Tq], dq [B,Hq,Tq,Dk], dk [B,Hkv,Tk,Dk], dv [B,Hkv,Tk,Dv].
// dsinks [Hq] (the sinks' gradient, only for a backward of a problem with sinks) comes last so
// that the brace-initialised five-field Outputs of older code still means what it did.
// A field a kernel does not provide stays empty.
struct Outputs {
  std::vector<double> out, lse, dq, dk, dv;
  std::vector<double> dsinks;
};

}  // namespace attnv
