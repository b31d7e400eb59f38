/* bad_common.h: what the misbehaving test plugins share: a correct naive f32 forward (MHA, no
 * options, any strides) and the declaration. Each bad_*.c defines BAD_NAME and its own forward
 * that calls naive_forward and then does its one wrong thing. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "attnv_plugin.h"

static float* at(const attnv_tensor* t, int64_t a, int64_t b, int64_t c, int64_t d) {
  return (float*)t->data + a * t->stride[0] + b * t->stride[1] + c * t->stride[2] + d * t->stride[3];
}

/* Byte just past the last element of a 4-d f32 view. */
static char* end_of(const attnv_tensor* t) {
  return (char*)at(t, t->shape[0] - 1, t->shape[1] - 1, t->shape[2] - 1, t->shape[3] - 1) + sizeof(float);
}

static int naive_forward(const attnv_problem* p, const attnv_views* v) {
  for (int64_t b = 0; b < p->B; ++b)
    for (int64_t h = 0; h < p->Hq; ++h)
      for (int64_t i = 0; i < p->Tq; ++i) {
        double m = -INFINITY, l = 0, s[1024]; /* the suite draws Tk <= 1000 */
        if (p->Tk > 1024) return 1;
        for (int64_t j = 0; j < p->Tk; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < p->Dk; ++d) dot += (double)*at(&v->q, b, h, i, d) * *at(&v->k, b, h, j, d);
          s[j] = dot * p->scale;
          m = s[j] > m ? s[j] : m;
        }
        for (int64_t j = 0; j < p->Tk; ++j) l += (s[j] = exp(s[j] - m));
        for (int64_t d = 0; d < p->Dv; ++d) {
          double o = 0;
          for (int64_t j = 0; j < p->Tk; ++j) o += s[j] * *at(&v->v, b, h, j, d);
          *at(&v->out, b, h, i, d) = (float)(o / l);
        }
        if (v->lse.data) /* [B,Hq,Tq] */
          *((float*)v->lse.data + b * v->lse.stride[0] + h * v->lse.stride[1] + i * v->lse.stride[2]) = (float)(m + log(l));
      }
  return 0;
}

static int bad_forward(const attnv_problem* p, const attnv_views* v);
static const char* bad_last_error(void);

static const attnv_kernel bad_kernel = {
    ATTNV_ABI_VERSION, sizeof(attnv_kernel), BAD_NAME, "0", ATTNV_DTYPE_BIT(ATTNV_F32), ATTNV_CAP_STRIDED | ATTNV_CAP_LSE,
    NULL, bad_forward, NULL, NULL, bad_last_error,
};

ATTNV_PLUGIN_EXPORT const attnv_kernel* attnv_kernel_entry(void) { return &bad_kernel; }
