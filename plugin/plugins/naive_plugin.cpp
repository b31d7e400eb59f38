// The naive kernel (kernels/naive_kernel.h) as a plugin: libattnv_naive_plugin.so.
#include "attnv_export_kernel.h"
#include "kernels/naive_kernel.h"

ATTNV_EXPORT_KERNEL_VERSIONED(std::make_unique<attnv::kernels::NaiveKernel>(), "attnv-naive")
