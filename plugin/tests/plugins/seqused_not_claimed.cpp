// The naive kernel as a plugin (the C++ export adapter, ABI version 2) claiming packed sequences
// and kv_len but not the two together (ATTNV_CAP_VARLEN_KV_LEN): what a plugin built before
// per-sequence key lengths declares. attnv must never send it kv_len [S].
#include <memory>

#include "attnv_export_kernel.h"
#include "kernels/naive_kernel.h"

namespace {

class SequsedNotClaimed : public attnv::kernels::NaiveKernel {
 public:
  SequsedNotClaimed() : NaiveKernel({}, "seqused_not_claimed") {}
  attnv::Capabilities capabilities() const override {
    attnv::Capabilities c = NaiveKernel::capabilities();
    c.varlen_kv_len = false;
    return c;
  }
};

}  // namespace

ATTNV_EXPORT_KERNEL_VERSIONED(std::make_unique<SequsedNotClaimed>(), "test")
