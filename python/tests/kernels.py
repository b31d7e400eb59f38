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
