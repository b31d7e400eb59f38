// The naive kernel as a plugin (it claims the paged KV cache), with one wrong write after each
// paged decode call; contiguous calls are left correct, so only R21's paged run can show it.
// Built once per bug (plugin/tests/CMakeLists.txt):
//   PAGED_WRITES_PAST_APPENDED  also writes the slot just past the last appended position of
//                               sequence 0 when that slot is in the same, partly filled page: a
//                               write outside the appended slots, which the worker copies back
//                               with the whole pool, so R21's pool comparison names it.
//   PAGED_WRITES_TABLE          writes block_table[0][0] (its own value back): the table is an
//                               input, mapped read-only in the worker, so the write faults and is
//                               named as a write into input block_table.
#include <cstdint>
#include <memory>

#include "attnv_export_kernel.h"
#include "kernels/naive_kernel.h"
#include "problem/buffers.h"
#include "problem/cache_pages.h"

namespace {

class PagedMisbehaves : public attnv::props::NaiveKernel {
 public:
  PagedMisbehaves() : NaiveKernel({}, "paged_misbehaves") {}
  void decode(const attnv::Problem& p, const attnv::DecodeViews& v) override {
    NaiveKernel::decode(p, v);
    if (p.page_size == 0) return;
#if defined(PAGED_WRITES_PAST_APPENDED)
    const std::int64_t next = v.cache_len[0] + p.shape.Tq;
    if (next % p.page_size == 0 || next >= p.shape.Tk) return;  // no slot left in that page
    attnv::store(v.k_cache, attnv::CachePages::of(p, v).index(0, 0, next, 0), 0.0);
#elif defined(PAGED_WRITES_TABLE)
    // volatile: a store of the value just read must not be optimized away.
    *const_cast<volatile std::int64_t*>(v.block_table) = v.block_table[0];
#else
#error "build with PAGED_WRITES_PAST_APPENDED or PAGED_WRITES_TABLE"
#endif
  }
};

}  // namespace

ATTNV_EXPORT_KERNEL_VERSIONED(std::make_unique<PagedMisbehaves>(), "test")
