// attnv's optimized core (core/core_kernel.h) as a plugin: libattnv_core_plugin.so. It runs the
// core through the plugin route (the worker, the shared region, the ABI conversions) exactly as
// a third-party kernel goes, so whatever the ABI carries (the paged KV cache included) is shown
// to arrive whole: the core certified as a plugin must certify as it does in process.
#include "attnv_export_kernel.h"
#include "core/core_kernel.h"

ATTNV_EXPORT_KERNEL_VERSIONED(std::make_unique<attnv::core::CoreKernel>(), "attnv-core")
