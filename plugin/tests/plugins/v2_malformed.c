/* ABI version 2 declarations that are malformed in one way each, chosen at compile time:
 *   V2_TOO_SMALL  struct_size of a version 1 struct with abi_version 2
 *   V2_TOO_LARGE  struct_size past the version 2 struct (a newer header's fields, or garbage)
 *   V2_VERSION    abi_version 3
 *   V2_LONG_CONFIGURATION  a configuration of 2000 bytes, past the 1023 attnv takes
 * Loading each is an input error that names what is wrong. */
#include <stddef.h>
#include <string.h>

#include "attnv_plugin.h"

static int forward(const attnv_problem* p, const attnv_views* v) {
  (void)p;
  (void)v;
  return 0;
}

#if defined(V2_TOO_SMALL)
#define VERSION ATTNV_ABI_VERSION
#define SIZE offsetof(attnv_kernel, supports)
#elif defined(V2_TOO_LARGE)
#define VERSION ATTNV_ABI_VERSION
#define SIZE (sizeof(attnv_kernel) + 16)
#elif defined(V2_VERSION)
#define VERSION 3u
#define SIZE sizeof(attnv_kernel)
#elif defined(V2_LONG_CONFIGURATION)
#define VERSION ATTNV_ABI_VERSION
#define SIZE sizeof(attnv_kernel)
#else
#error "define one of V2_TOO_SMALL, V2_TOO_LARGE, V2_VERSION, V2_LONG_CONFIGURATION"
#endif

static char configuration[2001];

static attnv_kernel kernel = {
    VERSION, (uint32_t)SIZE, "v2_malformed", "0", ATTNV_DTYPE_BIT(ATTNV_F32), ATTNV_CAP_STRIDED,
    NULL, forward, NULL, NULL, NULL, NULL, NULL, NULL, {0, 0, 0, 0}, NULL};

ATTNV_PLUGIN_EXPORT const attnv_kernel* attnv_kernel_entry(void) {
#if defined(V2_LONG_CONFIGURATION)
  memset(configuration, 'x', sizeof configuration - 1);
  kernel.configuration = configuration;
#endif
  return &kernel;
}
