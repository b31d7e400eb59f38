/* An ABI version 2 plugin (attnv_plugin.h) that declines some problems honestly through
 * supports() and takes an option through set_option():
 *   --kernel-option decline=odd_dk   (the default) head dimensions Dk that are odd
 *   --kernel-option decline=softcap  every problem with a softcap, a feature it claims: a claim
 *                                    it never honours, so it must not be certified
 *   --kernel-option decline=all      every problem: nothing may be certified
 *   --kernel-option decline=none     nothing
 *   --kernel-option decline=broken   supports() answers 7, neither yes (1) nor no (0): a broken
 *                                    contract, so every call is a refusal (a finding)
 *   --kernel-option precision=broken precision_for() fails (returns 5) for every problem
 * Its precision model depends on the problem (precision_for): single-query problems (Tq = 1)
 * declare an exp within 4 ulps, the others the natural model's 2.
 * Otherwise the test plugins' naive f32 forward (naive_forward.h: MHA, softcap, any scale, any
 * strides, LSE). Its forward
 * refuses a problem supports() declined: attnv must never make that call. */
#include <stdio.h>
#include <string.h>

#include "attnv_plugin.h"
#include "naive_forward.h"

enum { DECLINE_ODD_DK, DECLINE_SOFTCAP, DECLINE_ALL, DECLINE_NONE, DECLINE_BROKEN };
static int mode = DECLINE_ODD_DK;
static int precision_broken = 0;
static char error_text[256];

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
  if (mode == DECLINE_BROKEN) return 7;
  return decide(p, why, why_size);
}

static int forward(const attnv_problem* p, const attnv_views* v) {
  char why[256];
  if (!decide(p, why, sizeof why)) {
    snprintf(error_text, sizeof error_text, "forward called with a problem supports() declined: %s", why);
    return 9;
  }
  return naive_forward(p, v);
}

static int precision_for(const attnv_problem* p, attnv_precision* m) {
  if (precision_broken) {
    snprintf(error_text, sizeof error_text, "precision=broken");
    return 5;
  }
  m->accum = ATTNV_F32;
  m->p_dtype = ATTNV_F32;
  m->out = ATTNV_F32;
  m->block = 0;
  m->exp_ulps = p->Tq == 1 ? 4.0 : 2.0;
  return 0;
}

static int set_option(const char* key, const char* value) {
  static const char* const modes[] = {"odd_dk", "softcap", "all", "none", "broken"};
  if (strcmp(key, "precision") == 0 && strcmp(value, "broken") == 0) {
    precision_broken = 1;
    return 0;
  }
  if (strcmp(key, "decline") != 0) {
    snprintf(error_text, sizeof error_text,
             "unknown option '%s' (this plugin takes decline=odd_dk|softcap|all|none|broken, precision=broken)", key);
    return 1;
  }
  for (int i = 0; i < 5; ++i)
    if (strcmp(value, modes[i]) == 0) {
      mode = i;
      return 0;
    }
  snprintf(error_text, sizeof error_text, "decline=%s: expected odd_dk, softcap, all, none or broken", value);
  return 1;
}

static const char* last_error(void) { return error_text; }

static const attnv_kernel kernel = {
    ATTNV_ABI_VERSION, sizeof(attnv_kernel), "v2_declines", "2.0", ATTNV_DTYPE_BIT(ATTNV_F32),
    ATTNV_CAP_STRIDED | ATTNV_CAP_LSE | ATTNV_CAP_SOFTCAP | ATTNV_CAP_CUSTOM_SCALE,
    NULL, forward, NULL, NULL, last_error, supports, set_option, precision_for};

ATTNV_PLUGIN_EXPORT const attnv_kernel* attnv_kernel_entry(void) { return &kernel; }
