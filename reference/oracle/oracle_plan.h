#pragma once
// What the oracle reads, decided before any multiprecision work (private to the oracle).
// SPEC: what a hidden key holds must not change any output, so hidden K/V rows and hidden
// bias values are never read; every value that IS read must be finite, else InputError.
#include <cstdint>
#include <vector>

#include "problem/case.h"

namespace attnv::reference::oracle_detail {

struct ReadPlan {
  std::int64_t Hq = 0, Hkv = 0, Tq = 0, Tk = 0;
  // Visible keys of (b, h, i), at [(b * Hq + h) * Tq + i]: masks and biases may differ per head.
  std::vector<std::vector<std::int64_t>> keys;
  // Key j of KV head kvh, batch b, visible to some query head that reads it: [(b * Hkv + kvh) * Tk + j].
  std::vector<std::uint8_t> key_read;
  std::vector<std::uint8_t> bias_read;  // bias element (Case::bi order) visible to its row

  const std::vector<std::int64_t>& visible(std::int64_t b, std::int64_t h, std::int64_t i) const {
    return keys[static_cast<std::size_t>((b * Hq + h) * Tq + i)];
  }
};

// Checks the problem and the tensor sizes (InputError listing what is wrong), then records the
// visible keys of every row. need_dout: the backward is asked for, so dout must be present.
ReadPlan plan_reads(const Case& c, bool need_dout);

// InputError for the first non-finite value the plan reads, in a fixed order (q, k, v, bias,
// dout), naming the tensor, its element index and why it is read. dout is read only for rows
// with a visible key (a fully masked row has O = 0 whatever dO is).
void check_read_values(const Case& c, const ReadPlan& plan, bool need_dout);

// The same two steps for one row (b, h, i), reading only what that row reads; returns its
// visible keys. Also checks that b, h, i are in range.
std::vector<std::int64_t> plan_and_check_row(const Case& c, std::int64_t b, std::int64_t h,
                                             std::int64_t i);

}  // namespace attnv::reference::oracle_detail
