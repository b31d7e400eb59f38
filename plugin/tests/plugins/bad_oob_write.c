/* Writes one element past the end of out (a guard-page hit when out ends on a page boundary). */
#define BAD_NAME "oob_write"
#include "bad_common.h"

static const char* bad_last_error(void) { return NULL; }

static int bad_forward(const attnv_problem* p, const attnv_views* v) {
  int rc = naive_forward(p, v);
  *(volatile float*)end_of(&v->out) = 1.0f;
  return rc;
}
