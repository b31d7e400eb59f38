/* The layout of the ABI version 1 structs as the released header (abi_v1/attnv_plugin.h, found
 * first: quoted includes search this folder) defines them: offsets of every field, in the order of
 * abi_v1_fields.h, and the sizes. abi_version_test.cpp holds the current header to them. */
#include <stddef.h>

#include "abi_v1/attnv_plugin.h"
#include "abi_v1_fields.h"

#define ATTNV_V1_OFFSET(s, f) offsetof(s, f),
#define ATTNV_V1_NAME(s, f) #s "." #f,
const size_t attnv_test_v1_offsets[] = {ATTNV_V1_FIELDS(ATTNV_V1_OFFSET)};
const char* const attnv_test_v1_names[] = {ATTNV_V1_FIELDS(ATTNV_V1_NAME)};
const size_t attnv_test_v1_count = sizeof attnv_test_v1_offsets / sizeof attnv_test_v1_offsets[0];
const size_t attnv_test_v1_sizes[] = {sizeof(attnv_tensor), sizeof(attnv_problem), sizeof(attnv_views),
                                      sizeof(attnv_decode_views), sizeof(attnv_precision), sizeof(attnv_kernel)};
const unsigned attnv_test_v1_version = ATTNV_ABI_VERSION;
