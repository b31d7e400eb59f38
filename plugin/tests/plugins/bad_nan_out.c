/* Correct, except that out[0,0,0,0] is NaN. */
#define BAD_NAME "nan_out"
#include "bad_common.h"

static const char* bad_last_error(void) { return NULL; }

static int bad_forward(const attnv_problem* p, const attnv_views* v) {
  int rc = naive_forward(p, v);
  *at(&v->out, 0, 0, 0, 0) = NAN;
  return rc;
}
