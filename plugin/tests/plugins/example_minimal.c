/* example_minimal.c: the smallest correct attnv plugin, shown whole in README.md (a test keeps
 * the two identical). Plain attention (no mask, causal, bias or GQA) with its log-sum-exp, in f32
 * and f64, any strides, accumulated in double.
 *   cc -std=c99 -O2 -shared -fPIC -I plugin/include example_minimal.c -o libexample.so -lm */
#include <math.h>
#include <stdlib.h>
#include "attnv_plugin.h"

static int64_t at(const attnv_tensor* t, int64_t a, int64_t b, int64_t c, int64_t d) {
  if (t->rank == 3) return b * t->stride[0] + c * t->stride[1] + d * t->stride[2];  /* lse [B,Hq,Tq] */
  return a * t->stride[0] + b * t->stride[1] + c * t->stride[2] + d * t->stride[3];
}
static double get(const attnv_tensor* t, int64_t a, int64_t b, int64_t c, int64_t d) {
  return t->dtype == ATTNV_F64 ? ((double*)t->data)[at(t, a, b, c, d)] : ((float*)t->data)[at(t, a, b, c, d)];
}
static void put(const attnv_tensor* t, int64_t a, int64_t b, int64_t c, int64_t d, double x) {
  if (t->dtype == ATTNV_F64) ((double*)t->data)[at(t, a, b, c, d)] = x;
  else ((float*)t->data)[at(t, a, b, c, d)] = (float)x;
}

static int forward(const attnv_problem* p, const attnv_views* v) {
  double* s = malloc((size_t)p->Tk * sizeof(double));
  if (!s) return 1;
  for (int64_t b = 0; b < p->B; ++b)
    for (int64_t h = 0; h < p->Hq; ++h)
      for (int64_t i = 0; i < p->Tq; ++i) {
        double m = -INFINITY, l = 0;
        for (int64_t j = 0; j < p->Tk; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < p->Dk; ++d) dot += get(&v->q, b, h, i, d) * get(&v->k, b, h, j, d);
          s[j] = dot * p->scale;
          if (s[j] > m) m = s[j];
        }
        for (int64_t j = 0; j < p->Tk; ++j) l += (s[j] = exp(s[j] - m));
        for (int64_t d = 0; d < p->Dv; ++d) {
          double o = 0;
          for (int64_t j = 0; j < p->Tk; ++j) o += s[j] * get(&v->v, b, h, j, d);
          put(&v->out, b, h, i, d, o / l);
        }
        if (v->lse.data) put(&v->lse, 0, b, h, i, m + log(l));
      }
  free(s);
  return 0;
}

static const attnv_kernel kernel = {
    ATTNV_ABI_VERSION, sizeof(attnv_kernel), "example_minimal", "1.0",
    ATTNV_DTYPE_BIT(ATTNV_F32) | ATTNV_DTYPE_BIT(ATTNV_F64),  /* dtypes it claims */
    ATTNV_CAP_STRIDED | ATTNV_CAP_LSE,                        /* features it claims */
    NULL,  /* precision model: NULL is the natural one (f32 accumulation for f32) */
    forward, NULL /* backward */, NULL /* decode */, NULL /* last_error */};

ATTNV_PLUGIN_EXPORT const attnv_kernel* attnv_kernel_entry(void) { return &kernel; }
