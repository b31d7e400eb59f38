/* Writes 3 bytes just past the end of out: inside out last page, so only the canary sees it. */
#define BAD_NAME "canary"
#include "bad_common.h"

static const char* bad_last_error(void) { return NULL; }

static int bad_forward(const attnv_problem* p, const attnv_views* v) {
  int rc = naive_forward(p, v);
  volatile char* e = end_of(&v->out);
  e[0] = 1, e[1] = 2, e[2] = 3;
  return rc;
}
