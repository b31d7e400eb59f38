/* Every field of the ABI version 1 structs, as an X-macro list X(struct, field). Expanded once
 * against the released version 1 header (abi_v1_layout.c) and once against the current one
 * (abi_version_test.cpp): a version 2 header that moved any of them would break version 1
 * plugins, and the test says which. (attnv_precision.reserved became struct_size: same place.) */
#define ATTNV_V1_FIELDS(X)                                                                                       \
  X(attnv_tensor, data) X(attnv_tensor, dtype) X(attnv_tensor, rank) X(attnv_tensor, shape) X(attnv_tensor, stride) \
  X(attnv_problem, B) X(attnv_problem, Hq) X(attnv_problem, Hkv) X(attnv_problem, Tq) X(attnv_problem, Tk)           \
  X(attnv_problem, Dk) X(attnv_problem, Dv) X(attnv_problem, dtype) X(attnv_problem, causal)                       \
  X(attnv_problem, alignment) X(attnv_problem, has_mask) X(attnv_problem, has_bias) X(attnv_problem, has_kv_len)    \
  X(attnv_problem, window_left) X(attnv_problem, window_right) X(attnv_problem, scale) X(attnv_problem, softcap)    \
  X(attnv_views, q) X(attnv_views, k) X(attnv_views, v) X(attnv_views, mask) X(attnv_views, bias)                   \
  X(attnv_views, kv_len) X(attnv_views, dout) X(attnv_views, out) X(attnv_views, lse) X(attnv_views, dq)            \
  X(attnv_views, dk) X(attnv_views, dv)                                                                             \
  X(attnv_decode_views, q) X(attnv_decode_views, k_new) X(attnv_decode_views, v_new)                               \
  X(attnv_decode_views, k_cache) X(attnv_decode_views, v_cache) X(attnv_decode_views, cache_len)                   \
  X(attnv_decode_views, out) X(attnv_decode_views, lse)                                                             \
  X(attnv_precision, accum) X(attnv_precision, p_dtype) X(attnv_precision, out) X(attnv_precision, block)           \
  X(attnv_precision, exp_ulps)                                                                                      \
  X(attnv_kernel, abi_version) X(attnv_kernel, struct_size) X(attnv_kernel, name) X(attnv_kernel, version)          \
  X(attnv_kernel, dtypes) X(attnv_kernel, caps) X(attnv_kernel, precision) X(attnv_kernel, forward)                 \
  X(attnv_kernel, backward) X(attnv_kernel, decode) X(attnv_kernel, last_error)
