/* Writes into its input q at element [0,0,1,2] (needs Tq >= 2, Dk >= 3). */
#define BAD_NAME "writes_q"
#include "bad_common.h"

static const char* bad_last_error(void) { return NULL; }

static int bad_forward(const attnv_problem* p, const attnv_views* v) {
  int rc = naive_forward(p, v);
  *(volatile float*)at(&v->q, 0, 0, 1, 2) = 0.0f;
  return rc;
}
