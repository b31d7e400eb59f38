"""Attention kernels the Python tests certify in process.

numpy_attention reuses the math of examples/numpy/attention.py (the file route's worked example),
so the two routes certify the same NumPy attention. torch_attention is PyTorch's CPU attention
written with torch ops (Debian's torch 1.13 has no scaled_dot_product_attention).
"""
import os
import sys

import numpy as np

import attnv

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples", "numpy"))
import attention as example  # noqa: E402

# Every forward feature, as the claims of the tests' kernels.
ALL_FORWARD = {
    "gqa": True, "causal_top_left": True, "causal_bottom_right": True, "window": True, "mask": True,
    "bias": True, "kv_len": True, "softcap": True, "custom_scale": True, "lse": True, "backward": False,
}


def _case(q, k, v, scale, softcap, causal, alignment, window):
    B, Hq, Tq, Dk = q.shape
    _, Hkv, Tk, Dv = v.shape
    return {"B": B, "Hq": Hq, "Hkv": Hkv, "Tq": Tq, "Tk": Tk, "Dk": Dk, "Dv": Dv, "scale": scale,
            "softcap": softcap, "causal": causal, "alignment": alignment, "window": list(window)}


def _prepare(q, k, v, mask, bias, kv_len, scale, softcap, causal, alignment, window, bug, sinks, alibi,
             cu_seqlens_q, cu_seqlens_k):
    """The example's case, visibility, bias (ALiBi's term included) and sinks, in float64."""
    case = _case(q, k, v, scale, softcap, causal, alignment, window)
    n = kv_len if kv_len is not None else np.full(case["B"], case["Tk"])
    b = bias.astype(np.float64) if bias is not None else None
    packed = None
    if cu_seqlens_q is not None:  # kv_len is then [S], the keys each sequence uses (seqused_k)
        used = kv_len if kv_len is not None else cu_seqlens_k[1:] - cu_seqlens_k[:-1]
        packed = (cu_seqlens_q, cu_seqlens_k, used)
        n = np.full(case["B"], case["Tk"])
    vis = example.visible(case, n, b, mask, bug, packed)
    q, k, v = (t.astype(np.float64) for t in (q, k, v))
    if bug == "no_scale":
        case["scale"] = 1.0
    if bug == "tile_gqa":  # query head h reads KV head h % Hkv instead of h // G
        G = case["Hq"] // case["Hkv"]
        k, v = np.tile(k, (1, G, 1, 1)), np.tile(v, (1, G, 1, 1))
        case["Hkv"] = case["Hq"]
    z = sinks.astype(np.float64) if sinks is not None else None
    if alibi is not None:  # the example's ALiBi term, added like a bias (it hides no key)
        term = example.alibi_bias(case, n, alibi.astype(np.float64), bug, packed)
        b = term if b is None else example.planes(b) + term
    return case, q, k, v, vis, b, z


def numpy_attention(q, k, v, *, mask, bias, kv_len, scale, softcap, causal, alignment, window, dtype, bug=None,
                    sinks=None, alibi=None, cu_seqlens_q=None, cu_seqlens_k=None, **_):
    case, q, k, v, vis, b, z = _prepare(q, k, v, mask, bias, kv_len, scale, softcap, causal, alignment, window, bug,
                                        sinks, alibi, cu_seqlens_q, cu_seqlens_k)
    out, lse, *_ = example.forward(case, q, k, v, vis, b, bug, z)
    return example.to_storage(out, dtype, bug), lse.astype(np.float64 if dtype == "f64" else np.float32)


def numpy_backward(q, k, v, dout, *, out, lse, mask, bias, kv_len, scale, softcap, causal, alignment, window, dtype,
                   bug=None, sinks=None, alibi=None, cu_seqlens_q=None, cu_seqlens_k=None, **_):
    """dq, dk, dv (and dsinks) of the example's backward, in float64 from the exact inputs (it
    recomputes P rather than reading the forward's out and lse)."""
    case, q, k, v, vis, b, z = _prepare(q, k, v, mask, bias, kv_len, scale, softcap, causal, alignment, window, bug,
                                        sinks, alibi, cu_seqlens_q, cu_seqlens_k)
    o, l, p, raw, s = example.forward(case, q, k, v, vis, b, bug, z)
    d = dout.astype(np.float64)
    dq, dk, dv = example.backward(case, q, k, v, d, vis, p, raw, s)
    if bug == "dk_no_scale":
        dk = dk / s
    grads = [example.to_storage(g, dtype, bug) for g in (dq, dk, dv)]
    if z is not None:  # dsinks_h = -sum over (b, i) of P_sink D_i (docs/semantics.md, "Backward")
        with np.errstate(over="ignore", invalid="ignore"):
            p_sink = np.exp(z[None, :, None] - l)
        sign = 1.0 if bug == "dsink_sign_flipped" else -1.0
        grads.append(example.to_storage(sign * (p_sink * (d * o).sum(axis=-1)).sum(axis=(0, 2)), dtype, bug))
    return tuple(grads)


# The NumPy kernel with its backward, and two planted backward bugs.
NUMPY_KERNEL = attnv.Kernel(numpy_attention, backward=numpy_backward, name="numpy_attention")
NUMPY_DK_NO_SCALE = attnv.Kernel(numpy_attention, backward=lambda *a, **kw: numpy_backward(*a, bug="dk_no_scale", **kw),
                                 name="numpy_dk_no_scale")
NUMPY_DSINK_SIGN = attnv.Kernel(numpy_attention,
                                backward=lambda *a, **kw: numpy_backward(*a, bug="dsink_sign_flipped", **kw),
                                name="numpy_dsink_sign_flipped")


def numpy_no_scale(q, k, v, **kw):
    """Planted bug: the scale is dropped (scores are q.k)."""
    return numpy_attention(q, k, v, bug="no_scale", **kw)


def numpy_tile_gqa(q, k, v, **kw):
    """Planted bug: GQA heads grouped with tile instead of repeat_interleave."""
    return numpy_attention(q, k, v, bug="tile_gqa", **kw)


def torch_attention(q, k, v, *, mask, bias, kv_len, scale, softcap, causal, alignment, window, dtype, **_):
    """softmax(q k^T * scale + visibility) v with torch ops, in the storage dtype (f32 stays f32)."""
    import torch

    q, k, v = (torch.from_numpy(np.ascontiguousarray(t)) for t in (q, k, v))
    B, Hq, Tq, _ = q.shape
    Hkv, Tk = k.shape[1], k.shape[2]
    G = Hq // Hkv
    k = k.repeat_interleave(G, dim=1)
    v = v.repeat_interleave(G, dim=1)
    s = torch.matmul(q, k.transpose(-1, -2)) * scale
    if softcap is not None:
        s = softcap * torch.tanh(s / softcap)
    if bias is not None:
        s = s + torch.from_numpy(bias)
    as_torch = (lambda x: None if x is None else torch.from_numpy(x))  # noqa: E731
    vis = torch_visibility(B, Tq, Tk, as_torch(mask), as_torch(kv_len), causal, alignment, window)
    s = s.masked_fill(~vis, float("-inf"))
    lse = torch.logsumexp(s, dim=-1)
    out = torch.matmul(torch.softmax(s, dim=-1), v)
    return out.numpy(), lse.numpy()


def torch_visibility(B, Tq, Tk, mask, kv_len, causal, alignment, window):
    """[B, 1|Hq, Tq, Tk] bool: which keys each query sees (docs/semantics.md), from torch tensors."""
    import torch

    i = torch.arange(Tq)[None, :, None]
    j = torch.arange(Tk)[None, None, :]
    n = kv_len[:, None, None] if kv_len is not None else torch.full((B, 1, 1), Tk)
    vis = j < n
    p = i if alignment == "top_left" else i + n - Tq
    if causal:
        vis = vis & (j <= p)
    if window[0] >= 0:
        vis = vis & (p - j <= window[0])
    if window[1] >= 0:
        vis = vis & (j - p <= window[1])
    vis = vis[:, None]
    if mask is not None:
        vis = vis & (mask if mask.dim() == 4 else mask[None, None])
    return vis


def torch_sdpa(q, k, v, *, mask, bias, kv_len, causal, alignment, window, fixed=False, **_):
    """PyTorch's scaled_dot_product_attention, math path (torch._scaled_dot_product_attention_math,
    Debian's torch 1.13, which has no public SDPA): torch tensors in, out as a tensor. GQA by
    repeat_interleave; the causal rule, window, kv_len, mask and bias folded into one additive
    float mask (SDPA's own is_causal is top-left only and excludes a mask). The scale is SDPA's
    fixed 1/sqrt(Dk) (1.13 takes no scale), so custom_scale is not claimed."""
    import torch

    B, Hq, Tq, _ = q.shape
    Tk = k.shape[2]
    G = Hq // k.shape[1]
    k, v = k.repeat_interleave(G, dim=1), v.repeat_interleave(G, dim=1)
    vis = torch_visibility(B, Tq, Tk, mask, kv_len, causal, alignment, window)
    add = torch.zeros(vis.shape, dtype=q.dtype).masked_fill(~vis, float("-inf"))
    if bias is not None:
        add = add + (bias if bias.dim() == 4 else bias[None, None])
    if fixed:  # a row with no visible key: softmax of a finite row, then O = 0 (no NaN forward or back)
        seen = (add != float("-inf")).any(dim=-1, keepdim=True)  # a bias of -inf hides a key too
        add = torch.where(seen, add, torch.zeros((), dtype=q.dtype))
    out, _ = torch._scaled_dot_product_attention_math(q, k, v, add.expand(B, Hq, Tq, Tk), 0.0, False)
    return torch.where(seen, out, torch.zeros((), dtype=q.dtype)) if fixed else out


def torch_sdpa_fixed(q, k, v, **kw):
    """torch_sdpa with rows that see no key set to O = 0 as docs/semantics.md says."""
    return torch_sdpa(q, k, v, fixed=True, **kw)


# The claims SDPA's math path can keep: every forward feature but softcap, a custom scale and LSE
# (it returns none), with the backward through autograd.
SDPA_CLAIMS = dict(ALL_FORWARD, softcap=False, custom_scale=False, lse=False, backward=True)


def numpy_decode(q, k_new, v_new, k_cache, v_cache, *, cache_len, block_table, scale, softcap, window, dtype,
                 sinks=None, alibi=None, bug=None, **_):
    """Decode with a KV cache (problem/kernel.h, Kernel::decode): append k_new, v_new at cache_len
    (through the block table when paged), then the forward on the cache, bottom-right causal with
    kv_len = cache_len + n. Planted bugs: "no_append" (the cache is never written), "table_row0"
    (every sequence reads and writes through block table row 0)."""
    B, Hkv, n, _ = k_new.shape
    lengths = cache_len + n

    def row(b):
        return block_table[0 if bug == "table_row0" else b]

    if block_table is None:
        if bug != "no_append":
            for b in range(B):
                k_cache[b, :, cache_len[b]:cache_len[b] + n] = k_new[b]
                v_cache[b, :, cache_len[b]:cache_len[b] + n] = v_new[b]
        keys, values = k_cache, v_cache
    else:
        ps = k_cache.shape[2]
        for b in range(B):
            for t in range(n):
                pos = cache_len[b] + t
                page = row(b)[pos // ps]
                k_cache[page, :, pos % ps] = k_new[b, :, t]
                v_cache[page, :, pos % ps] = v_new[b, :, t]
        capacity = block_table.shape[1] * ps
        keys = np.zeros((B, Hkv, capacity, k_cache.shape[3]), k_cache.dtype)
        values = np.zeros((B, Hkv, capacity, v_cache.shape[3]), v_cache.dtype)
        for b in range(B):
            for blk in range(-(-lengths[b] // ps)):  # only the blocks in use: the others may hold anything
                keys[b, :, blk * ps:(blk + 1) * ps] = k_cache[row(b)[blk]]
                values[b, :, blk * ps:(blk + 1) * ps] = v_cache[row(b)[blk]]
    return numpy_attention(q, keys, values, mask=None, bias=None, kv_len=lengths, scale=scale, softcap=softcap,
                           causal=True, alignment="bottom_right", window=window, dtype=dtype, sinks=sinks, alibi=alibi)


DECODE_CLAIMS = dict(ALL_FORWARD, decode=True, paged_kv=True, sinks=True, alibi=True)
NUMPY_DECODER = attnv.Kernel(numpy_attention, decode=numpy_decode, name="numpy_decoder")


def torch_decode(q, k_new, v_new, k_cache, v_cache, *, cache_len, block_table, window, **_):
    """numpy_decode in torch ops, attending with torch_sdpa_fixed (so SDPA's fixed scale, no softcap)."""
    B, Hkv, n, _ = k_new.shape
    if block_table is None:
        for b in range(B):
            c = int(cache_len[b])
            k_cache[b, :, c:c + n] = k_new[b]
            v_cache[b, :, c:c + n] = v_new[b]
        keys, values = k_cache, v_cache
    else:
        ps = k_cache.shape[2]
        for b in range(B):
            for t in range(n):
                pos = int(cache_len[b]) + t
                page = int(block_table[b, pos // ps])
                k_cache[page, :, pos % ps] = k_new[b, :, t]
                v_cache[page, :, pos % ps] = v_new[b, :, t]
        # Blocks past the ones in use may hold anything: clamped to a page, then hidden by kv_len.
        table = block_table.clamp(0, k_cache.shape[0] - 1)

        def gather(pool):
            g = pool[table]  # [B, blocks, Hkv, ps, D]
            return g.permute(0, 2, 1, 3, 4).reshape(B, Hkv, -1, pool.shape[3])
        keys, values = gather(k_cache), gather(v_cache)
    return torch_sdpa_fixed(q, keys, values, mask=None, bias=None, kv_len=cache_len + n, causal=True,
                            alignment="bottom_right", window=window)


def native(name):
    """attnv's own C++ kernel `name` ("naive" or a mutant of the zoo) as a Python kernel taking
    NumPy arrays, with the claims it makes (attnv._attnv.native_kernel)."""
    import json

    nk = attnv._attnv.native_kernel(name)
    dtypes = [nk.meant_dtype] if nk.meant_dtype else ["f64", "f32", "f16", "bf16"]
    claims = json.loads(nk.claims_json(dtypes))
    return attnv.Kernel(nk.forward, backward=nk.backward, decode=nk.decode, name=name), claims, nk
