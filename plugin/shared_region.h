#pragma once
// The parent's side of the shared memory (worker/protocol.h has the layout): a memfd mapped
// read-write here, grown as calls need, and the placement of a call's tensors in it with their
// guard pages and canary slack.
#include <cstddef>
#include <cstdint>
#include <string>

#include "problem/tensor.h"
#include "worker/protocol.h"

namespace attnv::plugin {

std::size_t page_size();
// Moves a descriptor to >= 10 with close-on-exec (so dup2 onto the worker's fds 3 and 4 always
// makes a fresh, inheritable copy); returns the new one, or -1.
int move_fd_high(int fd);

// Bytes the strides of `t` touch from its data pointer (0 for an empty tensor).
std::int64_t extent_bytes(const attnv_tensor& t);

// Where a call's tensors go: offsets, extents and protections per slot, and the size needed.
struct CallLayout {
  wire::Tensor t[wire::kSlots];
  const void* src[wire::kSlots] = {};  // the caller's buffer for each slot
  // What each slot holds, for diagnoses: wire::kTensorNames, or the decode names (k_new, v_new,
  // cache_len, k_cache, v_cache, block_table) for a decode call.
  const char* names[wire::kSlots] = {};
  std::size_t total = 0;
};
// Forward: out and lse are written; backward: dq, dk, dv (out and lse are read); decode: out,
// lse and the caches in the dk, dv slots (protocol.h), whole: a paged cache's pools with every
// page, so a write outside the appended slots comes back to the caller, whose check sees it.
// `p` gives the lengths of the int64 arrays: kv_len [B], cu_seqlens_q/_k [varlen_sequences + 1].
CallLayout plan_call(const attnv_views& v, const attnv_problem& p, wire::Op op);

class SharedRegion {
 public:
  SharedRegion();  // InputError when no memfd can be made
  ~SharedRegion();
  SharedRegion(const SharedRegion&) = delete;
  SharedRegion& operator=(const SharedRegion&) = delete;

  int fd() const { return fd_; }
  std::size_t size() const { return size_; }
  unsigned char* base() const { return base_; }
  wire::Status& status() const { return *reinterpret_cast<wire::Status*>(base_); }
  void reserve(std::size_t bytes);  // grows the file and the mapping (never shrinks)

  // Copies every tensor in (its full extent) and fills each slack with the canary.
  void copy_in(const CallLayout& l) const;
  // The first written canary byte of a writable buffer: "out: first corrupted byte 4 bytes past
  // its end (byte offset 68 of 64)". Empty when every canary holds.
  std::string check_canaries(const CallLayout& l) const;
  // Copies the writable tensors back to the caller's buffers.
  void copy_out(const CallLayout& l) const;

 private:
  int fd_ = -1;
  unsigned char* base_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace attnv::plugin
