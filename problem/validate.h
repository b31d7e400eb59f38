#pragma once
// Validation: every impossible problem gets a clear message. The functions return all the
// problems found (empty = valid); the require_* forms throw InputError with them joined.
#include <string>
#include <vector>

#include "problem/case.h"
#include "problem/problem.h"
#include "problem/tensor.h"

namespace attnv {

std::vector<std::string> check_problem(const Problem& p);
// The problem, then what any reader of a Case needs before indexing it: every tensor's size,
// kv_len within [0, Tk], mask values 0/1; with need_dout, dout present. No value checks.
std::vector<std::string> check_shapes(const Case& c, bool need_dout = false);
// The problem, plus tensor sizes, kv_len range, mask values 0/1, and every value representable in
// the storage dtype. NaN and inf are allowed here: SPEC lets hidden positions hold anything, and
// whether a value is hidden depends on visibility, so the reference rejects the non-finite values
// it actually reads (with their location) instead.
std::vector<std::string> check_case(const Case& c);
// Strided buffers for a kernel call: shapes match, strides non-negative, byte extents do not
// overflow, each output is free of self-overlap and overlaps no input and no other output.
std::vector<std::string> check_views(const Problem& p, const KernelViews& views);

// A decode call (problem/kernel.h, Kernel::decode): check_problem, plus causal bottom_right, no
// mask, bias or kv_len. Then the views: q [B,Hq,n,Dk], k_new/v_new [B,Hkv,n,D], k_cache/v_cache
// [B,Hkv,Tk,D], out, optional lse, cache_len present with 0 <= cache_len[b] <= Tk - n, dtypes as
// in a forward, the caches and outputs free of self-overlap and overlapping nothing else.
std::vector<std::string> check_decode_problem(const Problem& p);
std::vector<std::string> check_decode_views(const Problem& p, const DecodeViews& views);

void require_valid(const Problem& p);
void require_valid(const Case& c);

}  // namespace attnv
