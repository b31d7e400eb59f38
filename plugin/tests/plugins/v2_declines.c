/* An ABI version 2 plugin (attnv_plugin.h) that declines some problems honestly through
 * supports() and takes an option through set_option():
 *   --kernel-option decline=odd_dk   (the default) head dimensions Dk that are odd
 *   --kernel-option decline=softcap  every problem with a softcap, a feature it claims: a claim
 *                                    it never honours, so it must not be certified
 *   --kernel-option decline=all      every problem: nothing may be certified
 *   --kernel-option decline=none     nothing
 * Otherwise a correct naive f32 forward (MHA, softcap, any scale, any strides, LSE). Its forward
 * refuses a problem supports() declined: attnv must never make that call. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnv_plugin.h"

enum { DECLINE_ODD_DK, DECLINE_SOFTCAP, DECLINE_ALL, DECLINE_NONE };
static int mode = DECLINE_ODD_DK;
static char error_text[256];

static float* at(const attnv_tensor* t, int64_t a, int64_t b, int64_t c, int64_t d) {
  return (float*)t->data + a * t->stride[0] + b * t->stride[1] + c * t->stride[2] + d * t->stride[3];
}

/* 1: computed; 0: declined, with why. */
static int decide(const attnv_problem* p, char* why, uint32_t n) {
  /* A version 2 field: present only when attnv says so (an older attnv passes less). */
  if (p->struct_size < sizeof(attnv_problem)) {
    snprintf(why, n, "attnv passed a %u-byte attnv_problem; this plugin needs %u", (unsigned)p->struct_size,
             (unsigned)sizeof(attnv_problem));
    return 0;
  }
  switch (mode) {
    case DECLINE_ODD_DK:
      if (p->Dk % 2 != 0) {
        snprintf(why, n, "Dk = %lld: only even head dimensions are compiled", (long long)p->Dk);
        return 0;
      }
      return 1;
    case DECLINE_SOFTCAP:
      if (p->softcap != 0) {
        snprintf(why, n, "softcap %g: the softcap path is not built", p->softcap);
        return 0;
      }
      return 1;
    case DECLINE_ALL: snprintf(why, n, "this build computes nothing"); return 0;
    default: return 1;
  }
}

static int supports(const attnv_problem* p, int32_t op, char* why, uint32_t why_size) {
  if (op != ATTNV_OP_FORWARD) {
    snprintf(why, why_size, "only the forward is built");
    return 0;
  }
  return decide(p, why, why_size);
}

static int forward(const attnv_problem* p, const attnv_views* v) {
  char why[256];
  if (!decide(p, why, sizeof why)) {
    snprintf(error_text, sizeof error_text, "forward called with a problem supports() declined: %s", why);
    return 9;
  }
  double* s = malloc((size_t)p->Tk * sizeof(double));
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

static int set_option(const char* key, const char* value) {
  static const char* const modes[] = {"odd_dk", "softcap", "all", "none"};
  if (strcmp(key, "decline") != 0) {
    snprintf(error_text, sizeof error_text, "unknown option '%s' (this plugin takes decline=odd_dk|softcap|all|none)", key);
    return 1;
  }
  for (int i = 0; i < 4; ++i)
    if (strcmp(value, modes[i]) == 0) {
      mode = i;
      return 0;
    }
  snprintf(error_text, sizeof error_text, "decline=%s: expected odd_dk, softcap, all or none", value);
  return 1;
}

static const char* last_error(void) { return error_text; }

static const attnv_kernel kernel = {
    ATTNV_ABI_VERSION, sizeof(attnv_kernel), "v2_declines", "2.0", ATTNV_DTYPE_BIT(ATTNV_F32),
    ATTNV_CAP_STRIDED | ATTNV_CAP_LSE | ATTNV_CAP_SOFTCAP | ATTNV_CAP_CUSTOM_SCALE,
    NULL, forward, NULL, NULL, last_error, supports, set_option};

ATTNV_PLUGIN_EXPORT const attnv_kernel* attnv_kernel_entry(void) { return &kernel; }
