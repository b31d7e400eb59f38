/* Aborts while it is loaded (a constructor, before attnv_kernel_entry can answer): a plugin that
 * cannot be loaded is a usage error naming the crash, never attnv's internal error. */
#include <stdlib.h>

#define BAD_NAME "ctor_abort"
#include "bad_common.h"

static const char* bad_last_error(void) { return NULL; }

static int bad_forward(const attnv_problem* p, const attnv_views* v) { return naive_forward(p, v); }

__attribute__((constructor)) static void abort_when_loaded(void) { abort(); }
