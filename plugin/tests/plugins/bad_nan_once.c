/* Correct, except on the one call that finds the file named by ATTNV_TEST_NAN_ONCE_MARKER: that
 * call removes the file and writes NaN to out[0,0,0,0]. A kernel that fails a case once and then
 * passes it, across processes: what a race or an uninitialised buffer looks like from outside.
 * The tests of `attnv fuzz` and `attnv repro` use it to show that a pass of such a case is not
 * called a fix. */
#include <stdio.h>
#include <stdlib.h>

#define BAD_NAME "nan_once"
#include "bad_common.h"

static const char* bad_last_error(void) { return NULL; }

static int bad_forward(const attnv_problem* p, const attnv_views* v) {
  int rc = naive_forward(p, v);
  const char* marker = getenv("ATTNV_TEST_NAN_ONCE_MARKER");
  if (marker != NULL && remove(marker) == 0) *at(&v->out, 0, 0, 0, 0) = NAN;
  return rc;
}
