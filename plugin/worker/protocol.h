#pragma once
// The parent <-> worker protocol. One SOCK_SEQPACKET socketpair (message boundaries kept, so
// every message is one fixed-size POD struct read whole) and one memfd shared region.
//
// The worker is started as `attnv-worker PLUGIN [KEY=VALUE ...]` (the --kernel-option
// settings, given to the plugin's set_option in order) with the socket on fd kSocketFd and the region
// on fd kRegionFd. It loads the plugin and sends a Hello unprompted. Then, per call, the parent
// sends a Request and the worker answers a Reply; EOF on the socket makes the worker exit.
//
// The region (parent: all read-write; worker: as below), page-aligned throughout:
//   page 0            Status (worker read-write; its signal handlers write here)
//   page 1            guard (PROT_NONE)
//   buffer 0 pages    data starts at the first byte; slack after its end holds a canary
//   guard page
//   buffer 1 pages ...
// Each buffer is mapped PROT_READ (inputs) or PROT_READ|PROT_WRITE (outputs) in the worker; the
// guard pages stay PROT_NONE, so any access just before or just after a buffer faults.
#include <array>
#include <cstdint>
#include <iterator>
#include <string_view>

#include "attnv_plugin.h"
#include "problem/features/registry.h"

namespace attnv::plugin::wire {

inline constexpr int kSocketFd = 3;
inline constexpr int kRegionFd = 4;
inline constexpr std::uint32_t kMagic = 0x61747476;  // "attv"
inline constexpr std::uint8_t kCanary = 0xA5;

// The tensors of a call. The call's own tensors have fixed slots; after them each feature's
// per-head inputs, then its index arrays (problem/features/), in registry order, each in the slot
// of its name (slot_named). kv_len, cu_seqlens_q and cu_seqlens_k are plain int64 arrays (rank 1,
// dense), not tensors. Parent and worker are built from the same registry, so the numbering is
// internal: a feature appended to the registry appends its slots.
enum Slot : int { q, k, v, mask, bias, dout, out, lse, dq, dk, dv, dsinks, kCallSlots };
inline constexpr int kSlots = kCallSlots + static_cast<int>(std::size(kHeadInputs) + std::size(kIndexInputs));
inline constexpr auto kTensorNames = [] {
  std::array<std::string_view, kSlots> names{"q", "k", "v", "mask", "bias", "dout", "out", "lse", "dq", "dk", "dv", "dsinks"};
  int s = kCallSlots;
  for (const HeadInput& h : kHeadInputs) names[s++] = h.name;
  for (const IndexInput& x : kIndexInputs) names[s++] = x.name;
  return names;
}();

// The slot named `name`; kSlots when there is none.
constexpr int slot_named(std::string_view name) {
  for (int s = 0; s < kSlots; ++s)
    if (name == kTensorNames[s]) return s;
  return kSlots;
}
// A decode's cache_len rides in kv_len's slot.
inline constexpr int kKvLenSlot = slot_named("kv_len");
static_assert(kKvLenSlot < kSlots, "the decode's cache_len travels in kv_len's slot");

struct Tensor {
  std::int64_t offset = -1;  // byte offset of the data in the region; -1: absent
  std::int64_t bytes = 0;    // extent the strides touch (data .. last element's end)
  std::int64_t mapped = 0;   // bytes mapped for it: `bytes` rounded up to whole pages
  std::int32_t writable = 0;
  std::int32_t dtype = 0;
  std::int32_t rank = 0;
  std::int32_t pad = 0;
  std::int64_t shape[4] = {};
  std::int64_t stride[4] = {};
};

// decode travels in the forward's slots: k_new in k, v_new in v, cache_len in kv_len's, the
// caches (read and written; page pools for a paged cache) in dk and dv, and a paged cache's
// block table (int64, read-only) in dout.
// supports: only the plugin's supports() for the problem, for the operation in `ask`; no
// tensors. forward, backward and decode are asked too, by the worker, before the call.
// precision: only the plugin's precision_for() for the problem; the model comes back in
// Reply::precision.
enum class Op : std::uint32_t { forward = 1, backward = 2, decode = 3, supports = 4, precision = 5 };
static_assert(static_cast<int>(Op::forward) == ATTNV_OP_FORWARD && static_cast<int>(Op::backward) == ATTNV_OP_BACKWARD &&
              static_cast<int>(Op::decode) == ATTNV_OP_DECODE);

struct Request {
  std::uint32_t magic = kMagic;
  Op op = Op::forward;
  Op ask = Op::forward;  // op == supports: the operation asked about
  std::uint32_t pad = 0;
  std::uint64_t region_bytes = 0;  // the region's current size (it only grows)
  attnv_problem problem{};
  Tensor t[kSlots];
};

// declined: supports() said no (text: its reason); the call was not made.
enum class ReplyKind : std::uint32_t { ok = 0, refused = 1, load_error = 2, protocol_error = 3, declined = 4 };

struct Reply {
  std::uint32_t magic = kMagic;
  ReplyKind kind = ReplyKind::ok;
  std::int32_t code = 0;  // the plugin's nonzero return (refused)
  char text[1024] = {};   // last_error text, or what went wrong
  attnv_precision precision{};  // Op::precision: the plugin's answer
};

// Sent once after loading. On a load failure kind = load_error and text says why.
struct Hello {
  std::uint32_t magic = kMagic;
  ReplyKind kind = ReplyKind::ok;
  char text[1024] = {};
  char name[256] = {};
  char version[256] = {};
  std::uint32_t dtypes = 0;
  std::uint32_t caps = 0;
  std::uint32_t abi_version = 0;   // the plugin's (1 or 2)
  std::int32_t has_supports = 0;   // supports() is set: calls may be declined
  std::int32_t has_precision_for = 0;  // precision_for() is set: the model may depend on the problem
  std::uint32_t withdrawn[4] = {};     // attnv_kernel::withdrawn
  char configuration[1024] = {};       // attnv_kernel::configuration ("" when NULL)
  // Per storage dtype (index = ATTNV_F64..ATTNV_BF16): the plugin's precision() result.
  // has_precision = 0: the plugin gives none (NULL function), the natural model applies.
  std::int32_t has_precision = 0;
  std::int32_t precision_rc[4] = {};
  attnv_precision precision[4] = {};
};

// Written by the worker's signal handlers (and zeroed by the parent before each call).
struct Status {
  std::uint32_t magic = 0;       // kMagic once a signal was recorded
  std::int32_t signal = 0;
  std::int32_t si_code = 0;
  std::int32_t access = 0;       // 0 unknown, 1 read, 2 write (x86-64 page-fault error code)
  std::uint64_t fault_addr = 0;
  std::uint64_t region_base = 0;  // where the worker mapped the region
};

}  // namespace attnv::plugin::wire
