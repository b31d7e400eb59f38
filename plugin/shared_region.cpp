#include "shared_region.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "abi_convert.h"
#include "problem/error.h"

namespace attnv::plugin {

std::size_t page_size() {
  static const std::size_t p = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return p;
}

namespace {

std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

wire::Tensor place(const attnv_tensor& a, std::int64_t bytes, std::size_t& offset, bool writable) {
  wire::Tensor t;
  t.offset = static_cast<std::int64_t>(offset);
  t.bytes = bytes;
  // Even an empty tensor gets a page: its data pointer must be non-null to count as present.
  t.mapped = static_cast<std::int64_t>(round_up(static_cast<std::size_t>(std::max<std::int64_t>(bytes, 1)), page_size()));
  t.writable = writable;
  t.dtype = a.dtype;
  t.rank = a.rank;
  for (int i = 0; i < 4; ++i) {
    t.shape[i] = a.shape[i];
    t.stride[i] = a.stride[i];
  }
  offset += static_cast<std::size_t>(t.mapped) + page_size();  // the buffer, then its trailing guard
  return t;
}

}  // namespace

int move_fd_high(int fd) {
  if (fd < 0) return fd;
  const int high = fcntl(fd, F_DUPFD_CLOEXEC, 10);
  ::close(fd);
  return high;
}

std::int64_t extent_bytes(const attnv_tensor& t) {
  std::int64_t last = 0;
  for (int i = 0; i < t.rank; ++i) {
    if (t.shape[i] <= 0) return 0;
    last += (t.shape[i] - 1) * t.stride[i];
  }
  return (last + 1) * element_bytes(t);
}

CallLayout plan_call(const attnv_views& v, const attnv_problem& p, wire::Op op) {
  const bool backward = op == wire::Op::backward, decode = op == wire::Op::decode;
  CallLayout l;
  for (int s = 0; s < wire::kSlots; ++s) l.names[s] = wire::kTensorNames[s].data();  // literals: null-terminated
  if (decode) {
    l.names[wire::k] = "k_new";
    l.names[wire::v] = "v_new";
    l.names[wire::kKvLenSlot] = "cache_len";
    l.names[wire::dk] = "k_cache";
    l.names[wire::dv] = "v_cache";
    l.names[wire::dout] = "block_table";  // a paged cache's (decode_in_slots)
  }
  const attnv_tensor* ts[wire::kSlots] = {&v.q,   &v.k,   &v.v,  &v.mask, &v.bias, &v.dout,
                                          &v.out, &v.lse, &v.dq, &v.dk,   &v.dv,   &v.dsinks};
  for (const HeadInput& h : kHeadInputs) ts[wire::slot_named(h.name)] = &(v.*h.abi_view);
  // The int64 arrays (the slots without a tensor): pointer and element count, which the views
  // do not carry; an absent array maps nothing. A decode's cache_len [B] rides in kv_len's slot.
  const Problem problem = problem_from_abi(p);
  std::pair<const std::int64_t*, std::int64_t> arrays[wire::kSlots] = {};
  for (const IndexInput& x : kIndexInputs) arrays[wire::slot_named(x.name)] = {v.*x.abi_view, x.count(problem)};
  if (decode) arrays[wire::kKvLenSlot] = {v.kv_len, p.B};
  std::size_t offset = 2 * page_size();  // status page, then a guard
  for (int s = 0; s < wire::kSlots; ++s) {
    const bool writable = backward ? (s == wire::dq || s == wire::dk || s == wire::dv || s == wire::dsinks)
                                   : (s == wire::out || s == wire::lse || (decode && (s == wire::dk || s == wire::dv)));
    if (!ts[s]) {
      const auto [data, count] = arrays[s];
      if (!data) continue;
      attnv_tensor a{};
      a.data = const_cast<std::int64_t*>(data);
      a.dtype = ATTNV_F64;  // 8-byte elements; the worker passes a plain int64 pointer
      a.rank = 1;
      a.shape[0] = count;
      a.stride[0] = 1;
      l.t[s] = place(a, count * 8, offset, false);
      l.src[s] = data;
      continue;
    }
    const attnv_tensor& a = *ts[s];
    if (!a.data) continue;
    l.t[s] = place(a, extent_bytes(a), offset, writable);
    l.src[s] = a.data;
  }
  l.total = offset;
  return l;
}

SharedRegion::SharedRegion() {
  fd_ = memfd_create("attnv-plugin-region", MFD_CLOEXEC);
  if (fd_ < 0) throw InputError(std::string("plugin: cannot create shared memory (memfd_create): ") + std::strerror(errno));
  // Above the fds the worker receives (3, 4), so dup2 onto them always clears close-on-exec.
  fd_ = move_fd_high(fd_);
  reserve(2 * page_size());
}

SharedRegion::~SharedRegion() {
  if (base_) munmap(base_, size_);
  if (fd_ >= 0) ::close(fd_);
}

void SharedRegion::reserve(std::size_t bytes) {
  if (bytes <= size_) return;
  const std::size_t n = round_up(std::max(bytes, 2 * size_), page_size());
  if (ftruncate(fd_, static_cast<off_t>(n)) != 0)
    throw InputError("plugin: cannot grow shared memory to " + std::to_string(n) + " bytes: " + std::strerror(errno));
  void* p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
  if (p == MAP_FAILED) throw InputError("plugin: cannot map " + std::to_string(n) + " bytes of shared memory: " + std::strerror(errno));
  if (base_) munmap(base_, size_);
  base_ = static_cast<unsigned char*>(p);
  size_ = n;
}

void SharedRegion::copy_in(const CallLayout& l) const {
  for (int s = 0; s < wire::kSlots; ++s) {
    const wire::Tensor& t = l.t[s];
    if (t.offset < 0) continue;
    unsigned char* dst = base_ + t.offset;
    std::memcpy(dst, l.src[s], static_cast<std::size_t>(t.bytes));
    std::memset(dst + t.bytes, wire::kCanary, static_cast<std::size_t>(t.mapped - t.bytes));
  }
}

std::string SharedRegion::check_canaries(const CallLayout& l) const {
  for (int s = 0; s < wire::kSlots; ++s) {
    const wire::Tensor& t = l.t[s];
    if (t.offset < 0 || !t.writable) continue;  // inputs are read-only: their slack cannot change
    const unsigned char* p = base_ + t.offset;
    for (std::int64_t i = t.bytes; i < t.mapped; ++i)
      if (p[i] != wire::kCanary)
        return std::string(l.names[s]) + ": first corrupted byte " + std::to_string(i - t.bytes) +
               " bytes past its end (byte offset " + std::to_string(i) + ", extent " + std::to_string(t.bytes) + " bytes)";
  }
  return "";
}

void SharedRegion::copy_out(const CallLayout& l) const {
  for (int s = 0; s < wire::kSlots; ++s) {
    const wire::Tensor& t = l.t[s];
    if (t.offset < 0 || !t.writable) continue;
    std::memcpy(const_cast<void*>(l.src[s]), base_ + t.offset, static_cast<std::size_t>(t.bytes));
  }
}

}  // namespace attnv::plugin
