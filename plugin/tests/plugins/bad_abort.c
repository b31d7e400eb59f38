/* Calls abort() (a failed assertion, say) in every call. */
#define BAD_NAME "abort"
#include "bad_common.h"

static const char* bad_last_error(void) { return NULL; }

#include <stdlib.h>

static int bad_forward(const attnv_problem* p, const attnv_views* v) {
  (void)p;
  (void)v;
  abort();
}
