/* Declares ATTNV_CAP_BACKWARD without a backward function: loading it is an input error. */
#include <stddef.h>

#include "attnv_plugin.h"

static int forward(const attnv_problem* p, const attnv_views* v) {
  (void)p;
  (void)v;
  return 0;
}

static const attnv_kernel kernel = {
    ATTNV_ABI_VERSION, sizeof(attnv_kernel), "bad_declaration", "0", ATTNV_DTYPE_BIT(ATTNV_F32),
    ATTNV_CAP_BACKWARD, NULL, forward, NULL, NULL, NULL,
};

ATTNV_PLUGIN_EXPORT const attnv_kernel* attnv_kernel_entry(void) { return &kernel; }
