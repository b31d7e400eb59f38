"""A C kernel of attnv's plugin ABI (plugin/include/attnv_plugin.h) called from Python through
ctypes, the way a user wraps a C kernel for the in-process route: attnv's arrays are handed over as
pointers with their strides, the kernel writes into the out= and lse= buffers attnv allocates
(writes_outputs). It passes what the claims in CLAIMS let attnv draw: forward (GQA, causal, window,
a [Tq,Tk] mask and bias, kv_len, softcap, scale, LSE) and decode (contiguous or paged cache), in
f32 and f64; no sinks, ALiBi, packed sequences or backward."""
import ctypes

import numpy as np

import attnv

NOTHING = dict.fromkeys(["gqa", "causal_top_left", "causal_bottom_right", "window", "mask", "bias", "kv_len", "softcap",
                         "custom_scale", "lse", "backward"], False)
# What the bad plugins compute (bad_common.h): MHA without options, any strides, with the LSE.
PLAIN = dict(NOTHING, lse=True, strided=True)
CLAIMS = dict(NOTHING, gqa=True, causal_top_left=True, causal_bottom_right=True, window=True, mask=True, bias=True,
              kv_len=True, softcap=True, custom_scale=True, lse=True, strided=True)
DECODE_CLAIMS = dict(CLAIMS, decode=True, paged_kv=True)

F64, F32, U8 = 0, 1, 16
DTYPES = {"f64": F64, "f32": F32}
CAP_LSE, CAP_DECODE, CAP_PAGED_KV = 1 << 9, 1 << 11, 1 << 18
I64P = ctypes.POINTER(ctypes.c_int64)


class Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int32), ("rank", ctypes.c_int32),
                ("shape", ctypes.c_int64 * 4), ("stride", ctypes.c_int64 * 4)]


class Problem(ctypes.Structure):
    _fields_ = [(n, ctypes.c_int64) for n in ("B", "Hq", "Hkv", "Tq", "Tk", "Dk", "Dv")] + \
               [(n, ctypes.c_int32) for n in ("dtype", "causal", "alignment", "has_mask", "has_bias", "has_kv_len")] + \
               [("window_left", ctypes.c_int64), ("window_right", ctypes.c_int64), ("scale", ctypes.c_double),
                ("softcap", ctypes.c_double), ("struct_size", ctypes.c_uint32), ("reserved", ctypes.c_uint32)] + \
               [(n, ctypes.c_int32) for n in ("has_sinks", "reserved_sinks", "mask_batch", "mask_heads", "bias_batch",
                                             "bias_heads", "has_alibi", "reserved_alibi")] + \
               [("varlen_sequences", ctypes.c_int64), ("page_size", ctypes.c_int64)]


class Views(ctypes.Structure):
    _fields_ = [("q", Tensor), ("k", Tensor), ("v", Tensor), ("mask", Tensor), ("bias", Tensor), ("kv_len", I64P),
                ("dout", Tensor), ("out", Tensor), ("lse", Tensor), ("dq", Tensor), ("dk", Tensor), ("dv", Tensor),
                ("struct_size", ctypes.c_uint32), ("reserved", ctypes.c_uint32), ("sinks", Tensor),
                ("dsinks", Tensor), ("alibi", Tensor), ("cu_seqlens_q", I64P), ("cu_seqlens_k", I64P)]


class DecodeViews(ctypes.Structure):
    _fields_ = [("q", Tensor), ("k_new", Tensor), ("v_new", Tensor), ("k_cache", Tensor), ("v_cache", Tensor),
                ("cache_len", I64P), ("out", Tensor), ("lse", Tensor), ("struct_size", ctypes.c_uint32),
                ("reserved", ctypes.c_uint32), ("sinks", Tensor), ("block_table", I64P), ("alibi", Tensor)]


CALL = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(Problem), ctypes.c_void_p)


class Entry(ctypes.Structure):  # the version 1 part of attnv_kernel: all this adapter reads
    _fields_ = [("abi_version", ctypes.c_uint32), ("struct_size", ctypes.c_uint32), ("name", ctypes.c_char_p),
                ("version", ctypes.c_char_p), ("dtypes", ctypes.c_uint32), ("caps", ctypes.c_uint32),
                ("precision", ctypes.c_void_p), ("forward", CALL), ("backward", ctypes.c_void_p), ("decode", CALL),
                ("last_error", ctypes.CFUNCTYPE(ctypes.c_char_p))]


def tensor(a, dtype):
    """The ABI view of NumPy array `a` (None: an absent tensor), strides in elements."""
    t = Tensor()
    if a is None:
        return t
    t.data, t.dtype, t.rank = a.ctypes.data, dtype, a.ndim
    for i in range(a.ndim):
        t.shape[i], t.stride[i] = a.shape[i], a.strides[i] // a.itemsize
    return t


def int64_pointer(a):
    return None if a is None else a.ctypes.data_as(I64P)


class CKernel:
    """The plugin at `path` as a Python kernel with writes_outputs: forward always, decode when
    the plugin declares it. A nonzero return is a refusal (attnv.Unsupported with last_error), as
    the plugin route reads it."""

    writes_outputs = True

    def __init__(self, path):
        self.lib = ctypes.CDLL(path)  # kept: the function pointers live in it
        entry = ctypes.CFUNCTYPE(ctypes.POINTER(Entry))(("attnv_kernel_entry", self.lib))
        self.entry = entry().contents
        self.name = "ctypes_" + self.entry.name.decode()
        if self.entry.caps & CAP_DECODE:
            self.decode = self._decode

    def _problem(self, q, k, v, dtype, scale, softcap, window, causal=True, alignment="bottom_right", **_):
        p = Problem()
        p.B, p.Hq, p.Tq, p.Dk = q.shape
        p.Hkv, p.Dv = k.shape[1], v.shape[3]
        p.dtype, p.causal, p.alignment = DTYPES[dtype], int(causal), int(alignment == "bottom_right")
        p.window_left, p.window_right = window
        p.scale, p.softcap = scale, softcap or 0.0
        p.struct_size = ctypes.sizeof(Problem)
        return p

    def _call(self, fn, p, views):
        rc = fn(ctypes.byref(p), ctypes.cast(ctypes.byref(views), ctypes.c_void_p))
        if rc != 0:
            why = self.entry.last_error() if self.entry.last_error else None
            raise attnv.Unsupported(f"returned {rc}" + (f": {why.decode()}" if why else ""))

    def forward(self, q, k, v, *, mask, bias, kv_len, out, lse, dtype, **kw):
        p = self._problem(q, k, v, dtype, **kw)
        p.Tk = k.shape[2]
        p.has_mask, p.has_bias, p.has_kv_len = mask is not None, bias is not None, kv_len is not None
        d = DTYPES[dtype]
        m = None if mask is None else np.ascontiguousarray(mask, dtype=np.uint8)
        views = Views(q=tensor(q, d), k=tensor(k, d), v=tensor(v, d), mask=tensor(m, U8), bias=tensor(bias, d),
                      kv_len=int64_pointer(kv_len), out=tensor(out, d), lse=tensor(lse, d),
                      struct_size=ctypes.sizeof(Views))
        self._call(self.entry.forward, p, views)

    def _decode(self, q, k_new, v_new, k_cache, v_cache, *, cache_len, block_table, out, lse, dtype, **kw):
        p = self._problem(q, k_new, v_new, dtype, **kw)
        if block_table is None:
            p.Tk = k_cache.shape[2]
        else:
            p.page_size = k_cache.shape[2]
            p.Tk = block_table.shape[1] * p.page_size
        d = DTYPES[dtype]
        views = DecodeViews(q=tensor(q, d), k_new=tensor(k_new, d), v_new=tensor(v_new, d),
                            k_cache=tensor(k_cache, d), v_cache=tensor(v_cache, d),
                            cache_len=int64_pointer(cache_len), out=tensor(out, d), lse=tensor(lse, d),
                            struct_size=ctypes.sizeof(DecodeViews), block_table=int64_pointer(block_table))
        self._call(self.entry.decode, p, views)
