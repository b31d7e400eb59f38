/* bad_common.h: what the misbehaving test plugins share: a correct naive f32 forward (MHA, no
 * options, any strides) and the declaration. Each bad_*.c defines BAD_NAME and its own forward
 * that calls naive_forward and then does its one wrong thing. */
#include "naive_forward.h"

/* Byte just past the last element of a 4-d f32 view. */
static char* end_of(const attnv_tensor* t) {
  return (char*)at(t, t->shape[0] - 1, t->shape[1] - 1, t->shape[2] - 1, t->shape[3] - 1) + sizeof(float);
}

static int bad_forward(const attnv_problem* p, const attnv_views* v);
static const char* bad_last_error(void);

static const attnv_kernel bad_kernel = {
    ATTNV_ABI_VERSION, sizeof(attnv_kernel), BAD_NAME, "0", ATTNV_DTYPE_BIT(ATTNV_F32), ATTNV_CAP_STRIDED | ATTNV_CAP_LSE,
    NULL, bad_forward, NULL, NULL, bad_last_error,
};

ATTNV_PLUGIN_EXPORT const attnv_kernel* attnv_kernel_entry(void) { return &bad_kernel; }
