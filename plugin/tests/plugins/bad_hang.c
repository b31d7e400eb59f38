/* Never returns (an infinite loop): the certifier must time it out. */
#define BAD_NAME "hang"
#include "bad_common.h"

static const char* bad_last_error(void) { return NULL; }

static int bad_forward(const attnv_problem* p, const attnv_views* v) {
  volatile uint64_t spin = 0;
  (void)p;
  (void)v;
  for (;;) ++spin;
  return 0;
}
