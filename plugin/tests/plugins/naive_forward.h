/* naive_forward.h: a correct naive f32 forward for the C test plugins (MHA, any scale, softcap,
 * any strides, LSE when asked), shared by the misbehaving plugins (bad_common.h, built against
 * the version 1 header) and v2_declines.c (the version 2 one): it reads only version 1 fields.
 * Any Tk (the suite draws production shapes of several thousand keys). */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "attnv_plugin.h"

static float* at(const attnv_tensor* t, int64_t a, int64_t b, int64_t c, int64_t d) {
  return (float*)t->data + a * t->stride[0] + b * t->stride[1] + c * t->stride[2] + d * t->stride[3];
}

static int naive_forward(const attnv_problem* p, const attnv_views* v) {
  double* s = malloc((size_t)(p->Tk > 0 ? p->Tk : 1) * sizeof(double));
  if (!s) return 1;
  for (int64_t b = 0; b < p->B; ++b)
    for (int64_t h = 0; h < p->Hq; ++h)
      for (int64_t i = 0; i < p->Tq; ++i) {
        double m = -INFINITY, l = 0;
        for (int64_t j = 0; j < p->Tk; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < p->Dk; ++d) dot += (double)*at(&v->q, b, h, i, d) * *at(&v->k, b, h, j, d);
          s[j] = dot * p->scale;
          if (p->softcap != 0) s[j] = p->softcap * tanh(s[j] / p->softcap);
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
  free(s);
  return 0;
}

