// The optimized core through the conformance suite, exactly as a third-party kernel would be:
// the one-line macro on a factory (R2 runs the backward).
#include <memory>

#include "core/core_kernel.h"
#include "properties/conformance/conformance_gtest.h"

ATTNV_CONFORMANCE_SUITE(Core, [] { return std::make_unique<attnv::core::CoreKernel>(); });
