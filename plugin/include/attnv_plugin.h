/* attnv_plugin.h: the attnv kernel plugin ABI, version 2 (version 1 plugins still load).
 *
 * A kernel author implements this header in a shared library that exports one symbol,
 * attnv_kernel_entry, returning a description of the kernel: its name and version, what it
 * claims (dtypes and features), its precision model (so the error bound fits it) and its entry
 * points over strided tensor descriptors. `attnv certify --kernel plugin:PATH` loads the library
 * in a worker process and holds the kernel to every requirement its claims cover.
 *
 * Plain C99: fixed-width integers, no enums in structs, no C++ types. What every field means is
 * defined in docs/semantics.md of the attnv repository (installed with this header as
 * share/doc/attnv/semantics.md); the C++ side mirrors these structs in problem/problem.h and
 * problem/tensor.h.
 *
 * Rules a plugin must follow (each is checked, and breaking it is a finding):
 *  - Write only into the output tensors (out, lse; dq, dk, dv, dsinks in backward), and only into the
 *    elements their shape and strides address. Inputs are mapped read-only.
 *  - Return 0 on success. A nonzero return is a refusal ("this call is not supported"): the
 *    certifier reports it with the text of last_error.
 *  - Calls come from one thread at a time; the plugin may use threads of its own inside a call.
 *  - Every call gets fresh buffers: keep no pointer to them after the call returns.
 *
 * Versions and growth. attnv reads plugins of ABI version 1 and 2. Version 2 adds to version 1,
 * without moving anything: supports() (a kernel declines a problem honestly, and attnv reports
 * it as NOT SUPPORTED instead of a failure), set_option() (--kernel-option key=value) and a
 * struct_size in every struct that crosses the ABI, so that later fields are appended without
 * breaking plugins built against this header:
 *  - attnv_kernel (the plugin's): struct_size = sizeof(attnv_kernel) as the plugin was built;
 *    attnv reads no field past it.
 *  - attnv_problem, attnv_views, attnv_decode_views (attnv's): struct_size = the size attnv
 *    filled; a field appended later exists for the plugin only when
 *    offsetof(struct, field) + sizeof(field) <= struct_size.
 *  - attnv_precision (filled by the plugin): attnv sets struct_size before calling precision();
 *    the plugin writes no field past it.
 *  - attnv_tensor is embedded by value in the views and never grows: per-tensor information is
 *    added as fields appended to the views (guarded by their struct_size).
 * A version 1 plugin sees the same structs; it reads only the version 1 fields, which sit at the
 * same offsets.
 */
#ifndef ATTNV_PLUGIN_H
#define ATTNV_PLUGIN_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ATTNV_ABI_VERSION 2u
#define ATTNV_ENTRY_SYMBOL "attnv_kernel_entry"

/* Storage dtypes (values of attnv_tensor.dtype and attnv_problem.dtype). */
#define ATTNV_F64 0
#define ATTNV_F32 1
#define ATTNV_F16 2  /* IEEE binary16 */
#define ATTNV_BF16 3 /* bfloat16 */
#define ATTNV_U8 16  /* mask elements: 0 hidden, 1 visible */
#define ATTNV_DTYPE_BIT(d) (1u << (d))

/* A strided tensor. data == NULL: absent. Strides are in elements (not bytes), may be any
 * non-negative value, and describe [B,H,T,D], [B,T,H,D] and views with gaps alike. */
typedef struct attnv_tensor {
  void* data;
  int32_t dtype;
  int32_t rank;      /* 4 for q k v out dout dq dk dv, 3 for lse [B,Hq,Tq], 2 for mask and bias [Tq,Tk]
                        (4, [B|1,Hq|1,Tq,Tk], for a mask or bias with leading extents: attnv_problem),
                        1 for sinks and dsinks [Hq] */
  int64_t shape[4];  /* the first `rank` entries are used */
  int64_t stride[4];
} attnv_tensor;

/* Which corner the causal rule and the window align to (docs/semantics.md: the query's position). */
#define ATTNV_ALIGN_TOP_LEFT 0     /* p_i = i */
#define ATTNV_ALIGN_BOTTOM_RIGHT 1 /* p_i = i + kv_len[b] - Tq */

typedef struct attnv_problem {
  int64_t B, Hq, Hkv, Tq, Tk, Dk, Dv; /* Hq % Hkv == 0: query head h reads KV head h / (Hq/Hkv) */
  int32_t dtype;                      /* storage of q, k, v, bias, dout and the outputs */
  int32_t causal;                     /* 0 or 1 */
  int32_t alignment;                  /* ATTNV_ALIGN_* */
  int32_t has_mask, has_bias, has_kv_len;
  int64_t window_left, window_right;  /* -1: unbounded on that side; up to 2^63-1, so compare
                                         distances (pos - j > left), never pos - left or pos + right */
  double scale;                       /* always set (1/sqrt(Dk) unless the case says otherwise) */
  double softcap;                     /* 0: none; else s <- softcap * tanh(s / softcap) before the bias */
  /* ABI version 2 */
  uint32_t struct_size;               /* set by attnv: sizeof(attnv_problem) as attnv was built */
  uint32_t reserved;                  /* 0 */
  /* Appended in version 2 (read only when struct_size covers it, see above). 1: attention sinks,
   * one logit per query head in every row's softmax denominator (docs/semantics.md, "Attention
   * sinks"); the views then carry sinks [Hq] and, in a backward, dsinks [Hq]. Never 1 unless the
   * kernel claims ATTNV_CAP_SINKS. */
  int32_t has_sinks;
  int32_t reserved_sinks;             /* 0 */
  /* Appended (present when struct_size covers them; ATTNV_CAP_MASK_BIAS_PER_BATCH_HEAD): the
   * mask's and the bias's own leading extents. 1: one [Tq,Tk] plane per batch entry (_batch) or
   * per query head (_heads); 0: one plane broadcast over it. When either of a tensor's two is 1,
   * its view is rank 4 [B|1, Hq|1, Tq, Tk] (extent 1 where broadcast); when both are 0 it is the
   * rank 2 [Tq,Tk] of version 1. Always 0 for a tensor the problem does not have. */
  int32_t mask_batch, mask_heads;
  int32_t bias_batch, bias_heads;
  /* Appended (present when struct_size covers it; ATTNV_CAP_ALIBI). 1: ALiBi, one slope m_h >= 0
   * per query head in attnv_views.alibi [Hq]; every logit gets -m_h * |j - p_i| after the softcap
   * and the bias, p_i the query's position under `alignment` (docs/semantics.md, "ALiBi"). */
  int32_t has_alibi;
  int32_t reserved_alibi;             /* 0 */
  /* Appended (present when struct_size covers it; ATTNV_CAP_VARLEN). S >= 1: a packed batch of S
   * variable-length sequences (FlashAttention's varlen API) with B == 1, their bounds in
   * attnv_views.cu_seqlens_q/_k [S+1]; query i of sequence s sees only the keys of sequence s, at
   * local positions (docs/semantics.md, "Packed variable-length sequences"). 0: not packed. */
  int64_t varlen_sequences;
  /* Appended (present when struct_size covers it; ATTNV_CAP_PAGED_KV; decode calls only). > 0: the
   * KV cache is a pool of pages of page_size positions reached through
   * attnv_decode_views.block_table, Tk (the capacity of one sequence) a whole number of pages
   * (docs/semantics.md, "Paged KV cache"). 0: contiguous caches [B,Hkv,Tk,D]. */
  int64_t page_size;
  /* Appended (present when struct_size covers it; ATTNV_CAP_CHUNKED). C > 0: chunked local
   * attention, key j hidden from query i unless floor(j / C) == floor(p_i / C) (docs/semantics.md,
   * "Which keys a query sees"). 0: none. */
  int64_t chunk;
} attnv_problem;

/* The buffers of a forward or backward call. lse is f32 (f64 for f64 storage), [B,Hq,Tq].
 * kv_len: int64 [B] or NULL; with varlen_sequences = S > 0 (ATTNV_CAP_VARLEN_KV_LEN) it holds
 * S entries instead, kv_len[s] in [0, cu_seqlens_k[s+1] - cu_seqlens_k[s]]: the keys sequence s
 * uses. A forward call may pass lse.data == NULL (not asked for). */
typedef struct attnv_views {
  attnv_tensor q, k, v;
  attnv_tensor mask, bias;
  const int64_t* kv_len;
  attnv_tensor dout;      /* backward only */
  attnv_tensor out, lse;  /* forward writes; backward reads what the forward wrote */
  attnv_tensor dq, dk, dv; /* backward writes */
  /* ABI version 2 */
  uint32_t struct_size;    /* set by attnv: sizeof(attnv_views) as attnv was built */
  uint32_t reserved;       /* 0 */
  /* Appended in version 2 (present when struct_size covers them and problem->has_sinks):
   * sinks [Hq] (rank 1, storage dtype) is read by forward and backward; dsinks [Hq] (rank 1,
   * storage dtype) is written by backward: dsinks_h = -sum over the rows (b, i) of head h of
   * exp(sinks_h - lse) * (dout . out). */
  attnv_tensor sinks;
  attnv_tensor dsinks;
  /* Appended (present when struct_size covers it and problem->has_alibi): the ALiBi slopes [Hq]
   * (rank 1, storage dtype), read by forward and backward. They have no gradient. */
  attnv_tensor alibi;
  /* Appended (present when struct_size covers them and problem->varlen_sequences > 0): int64
   * [S+1], non-decreasing from 0 to Tq and to Tk: sequence s holds queries
   * cu_seqlens_q[s] .. cu_seqlens_q[s+1]-1 and keys cu_seqlens_k[s] .. cu_seqlens_k[s+1]-1. */
  const int64_t* cu_seqlens_q;
  const int64_t* cu_seqlens_k;
} attnv_views;

/* Decode with a KV cache: the Tq new tokens' keys and values (k_new, v_new: [B,Hkv,Tq,D]) are
 * appended to the cache at positions cache_len[b] .. cache_len[b]+Tq-1 (k_cache, v_cache:
 * [B,Hkv,Tk,D], Tk = capacity), then q attends to the first cache_len[b]+Tq keys with the
 * bottom-right causal rule, as a forward call with kv_len[b] = cache_len[b] + Tq would.
 * The caches are the only inputs a decode call may write, and only at the appended positions. */
typedef struct attnv_decode_views {
  attnv_tensor q;
  attnv_tensor k_new, v_new;
  attnv_tensor k_cache, v_cache;
  const int64_t* cache_len; /* int64 [B], cache_len[b] + Tq <= Tk */
  attnv_tensor out, lse;
  /* ABI version 2 */
  uint32_t struct_size;    /* set by attnv: sizeof(attnv_decode_views) as attnv was built */
  uint32_t reserved;       /* 0 */
  /* Appended in version 2 (present when struct_size covers it and problem->has_sinks): sinks
   * [Hq] (rank 1, storage dtype), read-only, in every decode row's softmax denominator. */
  attnv_tensor sinks;
  /* Appended (present when struct_size covers it and problem->page_size > 0): int64
   * [B, Tk / page_size], dense row-major. k_cache and v_cache are then page pools
   * [num_pages, Hkv, page_size, D]: position pos of sequence b lives in page
   * block_table[b * (Tk / page_size) + pos / page_size], slot pos % page_size. Pages may be shared
   * between sequences; only the entries of blocks below ceil((cache_len[b] + Tq) / page_size) are
   * read, and only the appended positions are written. */
  const int64_t* block_table;
  /* Appended (present when struct_size covers it and problem->has_alibi): the ALiBi slopes [Hq]
   * (rank 1, storage dtype), read-only; query i of sequence b sits at cache_len[b] + i. */
  attnv_tensor alibi;
} attnv_decode_views;

/* Capability bits (attnv_kernel.caps): what the kernel claims. Requirements that need an
 * unclaimed capability are listed as "not claimed", never failed. */
#define ATTNV_CAP_GQA (1u << 0)                 /* Hkv < Hq (else MHA only) */
#define ATTNV_CAP_CAUSAL_TOP_LEFT (1u << 1)
#define ATTNV_CAP_CAUSAL_BOTTOM_RIGHT (1u << 2)
#define ATTNV_CAP_WINDOW (1u << 3)
#define ATTNV_CAP_MASK (1u << 4)                /* boolean [Tq,Tk] mask */
#define ATTNV_CAP_BIAS (1u << 5)                /* additive [Tq,Tk] bias */
#define ATTNV_CAP_KV_LEN (1u << 6)              /* per-batch key lengths */
#define ATTNV_CAP_SOFTCAP (1u << 7)
#define ATTNV_CAP_CUSTOM_SCALE (1u << 8)        /* a scale other than 1/sqrt(Dk) */
#define ATTNV_CAP_LSE (1u << 9)                 /* writes the log-sum-exp */
#define ATTNV_CAP_BACKWARD (1u << 10)
#define ATTNV_CAP_DECODE (1u << 11)             /* decode with a KV cache */
#define ATTNV_CAP_STRIDED (1u << 12)            /* any strides (else dense [B,H,T,D] only) */
/* NaN/inf in hidden K, V rows and hidden bias never reach an output (requirement R6). Without
 * it R6 still runs, and a leak is reported as a robustness note, not a finding. */
#define ATTNV_CAP_HIDDEN_NONFINITE (1u << 13)
/* Attention sinks (attnv_problem.has_sinks, attnv_views.sinks and dsinks,
 * attnv_decode_views.sinks), forward, decode with ATTNV_CAP_DECODE, and, with
 * ATTNV_CAP_BACKWARD, backward (the sinks' gradient). */
#define ATTNV_CAP_SINKS (1u << 14)
/* Masks and biases of their own per batch entry and/or per query head ([B|1,Hq|1,Tq,Tk],
 * attnv_problem.mask_batch ... bias_heads). */
#define ATTNV_CAP_MASK_BIAS_PER_BATCH_HEAD (1u << 15)
/* ALiBi (attnv_problem.has_alibi, attnv_views.alibi), forward and, with ATTNV_CAP_BACKWARD,
 * backward; with ATTNV_CAP_DECODE, decode too (attnv_decode_views.alibi). */
#define ATTNV_CAP_ALIBI (1u << 16)
/* Packed variable-length sequences (attnv_problem.varlen_sequences, attnv_views.cu_seqlens_q/_k),
 * forward and, with ATTNV_CAP_BACKWARD, backward. */
#define ATTNV_CAP_VARLEN (1u << 17)
/* A paged KV cache in decode (attnv_problem.page_size, attnv_decode_views.block_table); needs
 * ATTNV_CAP_DECODE. */
#define ATTNV_CAP_PAGED_KV (1u << 18)
/* Per-sequence key lengths (FlashAttention's seqused_k): with attnv_problem.varlen_sequences = S
 * and has_kv_len, attnv_views.kv_len holds S entries, sequence s using only its first kv_len[s]
 * keys (bottom-right aligned to them). Without this bit a plugin is never sent the two together,
 * whatever else it claims. */
#define ATTNV_CAP_VARLEN_KV_LEN (1u << 19)
/* Chunked local attention (attnv_problem.chunk): forward and, with ATTNV_CAP_BACKWARD and
 * ATTNV_CAP_DECODE, backward and decode. */
#define ATTNV_CAP_CHUNKED (1u << 20)
/* Bits 1u << 21 and up are reserved for later capabilities. */

/* The precision model the error bound is derived for (reference/bound/BOUND.md). */
typedef struct attnv_precision {
  int32_t accum;   /* dtype of dot products, softmax sums and the P.V accumulator */
  int32_t p_dtype; /* dtype P is rounded to before P.V (= accum: no extra rounding) */
  int32_t out;     /* dtype outputs are rounded to (normally the storage dtype) */
  /* Set by attnv before it calls precision() (version 2; reserved and 0 in version 1): the size
   * of the struct it passes. A plugin writes no field past it. */
  uint32_t struct_size;
  int64_t block;   /* online-softmax key block; 0 = one pass over all keys */
  double exp_ulps; /* accuracy of the kernel's exp, in ulps of its stage's dtype */
  /* Version 2, later fields (struct_size covers them): the forward's stages, for kernels that do
   * not compute them all in accum (reference/bound/BOUND.md section 1, "Stages"). attnv sets
   * each to ATTNV_STAGE_AS_ACCUM before it calls precision(); a plugin that leaves one there (or
   * was built before these fields) computes that stage in accum. */
  int32_t dot;     /* the q.k and dO.v dot products' accumulation */
  int32_t score;   /* the logits: scale, softcap, bias, and the value the softmax reads */
  int32_t softmax; /* max subtraction, exp, the running sum and rescale factors, LSE */
  int32_t pv;      /* the P.V accumulator: products, sums, rescales and the final division */
  /* Later (struct_size covers it): 1 when the kernel flushes subnormals, results below a dtype's
   * smallest normal becoming zero (FTZ) and subnormal operands read as zero (DAZ), as MXCSR
   * FTZ|DAZ, vdpbf16ps or AMX do; 0 (what attnv passes in, and what a plugin built before this
   * field leaves) for gradual underflow. Any other value is refused. The bound then prices each
   * underflow at min_normal instead of half a subnormal (reference/bound/BOUND.md section 12). */
  int32_t flush_subnormals;
} attnv_precision;

#define ATTNV_STAGE_AS_ACCUM (-1)

typedef struct attnv_kernel {
  uint32_t abi_version; /* ATTNV_ABI_VERSION */
  uint32_t struct_size; /* sizeof(attnv_kernel) */
  const char* name;     /* short, no spaces: "flash_cpu" */
  const char* version;  /* free text: "1.2.0" */
  uint32_t dtypes;      /* ATTNV_DTYPE_BIT(ATTNV_F32) | ... */
  uint32_t caps;        /* ATTNV_CAP_* */
  /* The precision model for a storage dtype; 0 on success. NULL: the natural model (f64 storage
   * accumulates in f64, the others in f32; P stays in the accumulator; outputs in storage;
   * block 0; exp within 2 ulps). */
  int (*precision)(int32_t storage, attnv_precision* model);
  /* Required. Reads q, k, v (mask, bias, kv_len when present), writes out (and lse). */
  int (*forward)(const attnv_problem* p, const attnv_views* v);
  /* NULL unless ATTNV_CAP_BACKWARD. Reads what forward reads plus dout, out and lse; writes dq,
   * dk, dv (and dsinks when the problem has sinks). */
  int (*backward)(const attnv_problem* p, const attnv_views* v);
  /* NULL unless ATTNV_CAP_DECODE. */
  int (*decode)(const attnv_problem* p, const attnv_decode_views* v);
  /* Optional (may be NULL): a message explaining the last nonzero return. */
  const char* (*last_error)(void);

  /* ABI version 2: read only when abi_version >= 2 (struct_size covers them). */

  /* Optional (NULL: every problem within the claims is computed). Whether the kernel computes
   * problem `p` in operation `op` (ATTNV_OP_*): return 1 if it does; return 0 to decline it and
   * write why into `why` (NUL-terminated, at most why_size bytes with the NUL; why_size >= 256).
   * attnv asks before every call it makes and never calls forward, backward or decode with a
   * problem declined for that operation: such a case is reported as NOT SUPPORTED, counted and
   * listed in the certificate, never a finding. A kernel that claims a feature but declines every
   * case that uses it is not certified for it (docs/semantics.md). A nonzero return from a call
   * supports() accepted stays a refusal: a finding. Must be cheap, and a pure function of its
   * arguments (and of the options): the same problem gets the same answer. */
  int (*supports)(const attnv_problem* p, int32_t op, char* why, uint32_t why_size);
  /* Optional (NULL: the plugin takes no options, and attnv refuses to load it with any). One
   * configuration option from the command line (`--kernel-option key=value`, repeatable), called
   * once per option in command line order, after attnv_kernel_entry and before attnv reads any
   * other field of this struct: an option may change the claims and the precision model. Return
   * 0 to accept it; nonzero rejects it (last_error says why) and the plugin is not loaded. */
  int (*set_option)(const char* key, const char* value);

  /* Later version 2 fields: read only when struct_size covers them (a plugin built before them
   * declares a smaller struct_size, and they read as NULL). */

  /* Optional (NULL: precision() per storage dtype for every problem). The precision model of one
   * problem, for a kernel whose code path, and so its arithmetic, depends on the shape (a
   * decode-sized Tq taking a vector path that accumulates in f16, say). attnv asks it for every
   * case it judges; model as for precision() (struct_size set, stages at ATTNV_STAGE_AS_ACCUM).
   * Return 0 on success. Must be a pure function of the problem (and the options). */
  int (*precision_for)(const attnv_problem* p, attnv_precision* model);
  /* Claims withdrawn in one storage dtype (index ATTNV_F64..ATTNV_BF16): ATTNV_CAP_* bits of
   * problem features (gqa, causal, window, mask, bias, kv_len, softcap, custom scale, sinks,
   * per-batch/per-head mask and bias, ALiBi)
   * that hold for the other dtypes but not this one, a bias exact in f32 but not in f16, say.
   * Each must be declared in caps. 0: nothing withdrawn. */
  uint32_t withdrawn[4];
  /* Optional (NULL or "": nothing does). What, beside the name and the `--kernel-option`s, picks
   * the kernel's code in this process, written as a person sets it: "ATTNV_CORE_ISA=avx512" for
   * an environment variable, "isa=avx2 (cpu dispatch)" for a path chosen from the CPU. Read
   * after the options are set; at most 1023 bytes. attnv records it with every failure and
   * `attnv repro` refuses to judge a saved failure under another configuration: other code is
   * another kernel, whose pass would not mean the failure is fixed. */
  const char* configuration;
} attnv_kernel;

/* The operation supports() is asked about. */
#define ATTNV_OP_FORWARD 1
#define ATTNV_OP_BACKWARD 2
#define ATTNV_OP_DECODE 3

/* The one symbol a plugin exports. Called once per process, before any other call; the
 * returned struct and its strings must stay valid until the library is unloaded. */
typedef const attnv_kernel* (*attnv_kernel_entry_fn)(void);

#if defined(_WIN32)
#define ATTNV_PLUGIN_EXPORT __declspec(dllexport)
#else
#define ATTNV_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* The prototype a plugin's definition must match (a mismatch is a compile error, and C++
 * definitions get C linkage from it). */
ATTNV_PLUGIN_EXPORT const attnv_kernel* attnv_kernel_entry(void);

#ifdef __cplusplus
}
#endif

#endif /* ATTNV_PLUGIN_H */
