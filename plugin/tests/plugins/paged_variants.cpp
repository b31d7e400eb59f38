// The naive kernel as a plugin (through the C++ export adapter, ABI version 2), in one variant
// per build (plugin/tests/CMakeLists.txt) around the paged KV cache. Contiguous decode calls
// are always correct, so whatever a variant shows comes from R21's paged run:
//   PAGED_WRITES_PAST_APPENDED  after each paged call, also writes the slot just past the last
//                               appended position of sequence 0 when that slot is in the same,
//                               partly filled page: a write outside the appended slots, which
//                               the worker copies back with the whole pool, so R21's pool
//                               comparison names it.
//   PAGED_WRITES_TABLE          after each paged call, writes block_table[0][0] (its own value
//                               back): the table is an input, mapped read-only in the worker, so
//                               the write faults and is named as a write into input block_table.
//   PAGED_DECLINES_ODD_PAGES    claims the paged cache but declines (supports()) the page sizes
//                               it has not "compiled", the odd ones: NOT SUPPORTED, not a failure.
//   PAGED_NOT_CLAIMED           claims decode without the paged cache: R21 runs without pages.
#include <cstdint>
#include <memory>
#include <string>

#include "attnv_export_kernel.h"
#include "kernels/naive_kernel.h"
#include "problem/buffers.h"
#include "problem/cache_pages.h"

namespace {

#if defined(PAGED_WRITES_PAST_APPENDED)
constexpr const char* kName = "paged_writes_past_appended";
#elif defined(PAGED_WRITES_TABLE)
constexpr const char* kName = "paged_writes_table";
#elif defined(PAGED_DECLINES_ODD_PAGES)
constexpr const char* kName = "paged_declines_odd_pages";
#elif defined(PAGED_NOT_CLAIMED)
constexpr const char* kName = "paged_not_claimed";
#else
#error "build with one of PAGED_WRITES_PAST_APPENDED, PAGED_WRITES_TABLE, PAGED_DECLINES_ODD_PAGES, PAGED_NOT_CLAIMED"
#endif

class PagedVariant : public attnv::kernels::NaiveKernel {
 public:
  PagedVariant() : NaiveKernel({}, kName) {}

  attnv::Capabilities capabilities() const override {
    attnv::Capabilities c = NaiveKernel::capabilities();
#if defined(PAGED_NOT_CLAIMED)
    c.paged_kv = false;
#endif
    return c;
  }

  attnv::Support supports(const attnv::Problem& p, attnv::KernelOp op) override {
#if defined(PAGED_DECLINES_ODD_PAGES)
    if (p.page_size % 2 != 0)
      return attnv::Support::no("page_size " + std::to_string(p.page_size) + ": only even page sizes are compiled");
#endif
    return NaiveKernel::supports(p, op);
  }

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
#endif
  }
};

}  // namespace

ATTNV_EXPORT_KERNEL_VERSIONED(std::make_unique<PagedVariant>(), "test")
