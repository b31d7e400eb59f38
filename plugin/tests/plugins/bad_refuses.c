/* Refuses every call with a nonzero return and a last_error message. */
#define BAD_NAME "refuses"
#include "bad_common.h"

static const char* bad_last_error(void) { return "this kernel only runs on Tuesdays"; }

static int bad_forward(const attnv_problem* p, const attnv_views* v) {
  (void)p;
  (void)v;
  return 7;
}
