/* Crashes (a write to address 0x10, a member of a null struct pointer; not NULL itself, which
 * UBSan would catch first under the asan preset) when Tq == 3; correct otherwise, so a test can see the worker restarted. */
#define BAD_NAME "segv"
#include "bad_common.h"

static const char* bad_last_error(void) { return NULL; }

static int bad_forward(const attnv_problem* p, const attnv_views* v) {
  if (p->Tq == 3) *(volatile float*)(uintptr_t)16 = 1.0f;
  return naive_forward(p, v);
}
