"""Attention kernels the Python tests certify in process.

numpy_attention reuses the math of examples/numpy/attention.py (the file route's worked example),
so the two routes certify the same NumPy attention. torch_attention is PyTorch's CPU attention
written with torch ops (Debian's torch 1.13 has no scaled_dot_product_attention).
"""
import os
import sys

import numpy as np

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


def numpy_attention(q, k, v, *, mask, bias, kv_len, scale, softcap, causal, alignment, window, dtype, bug=None,
                    sinks=None, alibi=None, cu_seqlens_q=None, cu_seqlens_k=None, **_):
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
    out, lse, *_ = example.forward(case, q, k, v, vis, b, bug, z)
    return example.to_storage(out, dtype, bug), lse.astype(np.float64 if dtype == "f64" else np.float32)


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
    i = torch.arange(Tq)[None, :, None]
    j = torch.arange(Tk)[None, None, :]
    n = torch.from_numpy(kv_len)[:, None, None] if kv_len is not None else torch.full((B, 1, 1), Tk)
    vis = j < n
    p = i if alignment == "top_left" else i + n - Tq
    if causal:
        vis = vis & (j <= p)
    if window[0] >= 0:
        vis = vis & (p - j <= window[0])
    if window[1] >= 0:
        vis = vis & (j - p <= window[1])
    if mask is not None:
        vis = vis & torch.from_numpy(mask)[None]
    s = s.masked_fill(~vis[:, None], float("-inf"))
    lse = torch.logsumexp(s, dim=-1)
    out = torch.matmul(torch.softmax(s, dim=-1), v)
    return out.numpy(), lse.numpy()
