"""PyTorch kernels: a forward written in torch ops certified forward and backward, through autograd.

    import attnv, attnv.torch

    def my_attention(q, k, v, *, mask, bias, kv_len, scale, causal, alignment, window, **_):
        ...  # torch ops on torch tensors
        return out            # or (out, lse)

    cert = attnv.certify(attnv.torch.kernel(my_attention), claims={..., "backward": True}, dtypes=["f32"])

The function receives torch tensors where the NumPy route passes arrays, in the storage dtype as
torch has it (bf16 as torch.bfloat16, f16 as torch.float16), on `device` (default "cpu"; any
device torch sees, a GPU included): q, k, v, bias, sinks, alibi in the storage dtype, mask as
torch.bool, kv_len and cu_seqlens_q/k as torch.int64; the other keywords as in the NumPy route. It
returns out (and optionally lse) as tensors; lse is read as float32 (float64 for f64) whatever
dtype it comes in.

The backward runs the function again on inputs that require grad and asks autograd for the
gradients of sum(dout * out) (docs/semantics.md, "Backward"): dq, dk, dv and, with sinks,
dsinks. An input autograd gives no gradient (unused) has gradient 0. The `out` and `lse` attnv
passes to a backward are not used: autograd recomputes the forward.
"""
import numpy as np
import torch

from . import _attnv
from ._kernel import Kernel

_STORAGE = {"f64": torch.float64, "f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
_ARRAY_KEYWORDS = ("bias", *_attnv.head_inputs())                     # in the storage dtype
_INDEX_KEYWORDS = (*_attnv.index_inputs(), "cache_len", "block_table")  # int64


def to_torch(a, dtype, device):
    """A NumPy array attnv passes as a tensor in the storage dtype (bf16 arrives as float32
    holding bf16 values: the conversion to torch.bfloat16 is exact)."""
    return torch.from_numpy(np.ascontiguousarray(a)).to(device=device, dtype=_STORAGE[dtype])


def to_numpy(t, dtype):
    """A returned tensor as the NumPy array attnv reads: bf16 as float32 holding bf16 values."""
    if not isinstance(t, torch.Tensor):
        return t  # attnv reports the wrong type as the kernel's missing_output
    t = t.detach().cpu()
    if t.dtype == torch.bfloat16:
        t = t.to(torch.float32)
    return t.numpy()


def _keywords(kw, dtype, device):
    out = dict(kw)
    for key in _ARRAY_KEYWORDS:
        if out.get(key) is not None:
            out[key] = to_torch(out[key], dtype, device)
    for key in _INDEX_KEYWORDS:
        if out.get(key) is not None:
            out[key] = torch.from_numpy(np.ascontiguousarray(out[key])).to(device)
    if out.get("mask") is not None:
        out["mask"] = torch.from_numpy(np.ascontiguousarray(out["mask"])).to(device)
    return out


def _split(result):
    """(out, lse or None) of what the function returned; anything else is passed on as out."""
    if isinstance(result, (tuple, list)) and len(result) == 2:
        return result[0], result[1]
    return result, None


def kernel(fn, name=None, supports=None, device="cpu", decode=None, backward=None, autograd=True):
    """An attnv kernel (forward and backward) of a forward written in torch ops; see the module.
    `backward`, a backward in torch ops (python/README.md: dout, out and lse come as tensors, it
    returns dq, dk, dv (and dsinks) as tensors), replaces the one autograd derives; autograd=False
    with no backward gives a kernel without one. `decode`, a decode in torch ops, takes the caches
    as tensors and appends into them in place; what it leaves there is copied back for attnv to
    judge."""
    lse_dtype = {"f64": np.float64}

    def forward(q, k, v, *, dtype, **kw):
        with torch.no_grad():
            args = [to_torch(x, dtype, device) for x in (q, k, v)]
            out, lse = _split(fn(*args, dtype=dtype, **_keywords(kw, dtype, device)))
        out = to_numpy(out, dtype)
        if lse is None:
            return out
        lse = to_numpy(lse, dtype)
        if isinstance(lse, np.ndarray):
            lse = lse.astype(lse_dtype.get(dtype, np.float32))
        return out, lse

    def autograd_backward(q, k, v, dout, *, dtype, out=None, lse=None, **kw):
        del out, lse  # autograd recomputes the forward
        tkw = _keywords(kw, dtype, device)
        inputs = [to_torch(x, dtype, device).requires_grad_() for x in (q, k, v)]
        if tkw.get("sinks") is not None:
            tkw["sinks"].requires_grad_()
            inputs.append(tkw["sinks"])
        with torch.enable_grad():
            o, _ = _split(fn(*inputs[:3], dtype=dtype, **tkw))
            if not isinstance(o, torch.Tensor):
                raise TypeError(f"{name or fn.__name__} returned out as {type(o).__name__}, expected a torch.Tensor")
            grads = torch.autograd.grad(o, inputs, grad_outputs=to_torch(dout, dtype, device), allow_unused=True)
        return tuple(to_numpy(torch.zeros_like(x) if g is None else g, dtype) for g, x in zip(grads, inputs))

    def converted_backward(q, k, v, dout, *, dtype, out=None, lse=None, **kw):
        with torch.no_grad():
            args = [to_torch(x, dtype, device) for x in (q, k, v, dout)]
            tkw = _keywords(kw, dtype, device)
            tkw["out"] = to_torch(out, dtype, device) if out is not None else None
            tkw["lse"] = torch.from_numpy(np.ascontiguousarray(lse)).to(device) if lse is not None else None
            grads = backward(*args, dtype=dtype, **tkw)
        if not isinstance(grads, (tuple, list)):
            return grads  # attnv reports the wrong type as the kernel's missing_output
        return tuple(to_numpy(g, dtype) for g in grads)

    def decoder(q, k_new, v_new, k_cache, v_cache, *, dtype, **kw):
        with torch.no_grad():
            caches = [to_torch(x, dtype, device) for x in (k_cache, v_cache)]
            args = [to_torch(x, dtype, device) for x in (q, k_new, v_new)] + caches
            tkw = _keywords(kw, dtype, device)
            out, lse = _split(decode(*args, dtype=dtype, **tkw))
        for cache, t in zip((k_cache, v_cache), caches):
            np.copyto(cache, to_numpy(t, dtype))
        out = to_numpy(out, dtype)
        if lse is None:
            return out
        lse = to_numpy(lse, dtype)
        return out, lse.astype(lse_dtype.get(dtype, np.float32)) if isinstance(lse, np.ndarray) else lse

    label = name or getattr(fn, "__qualname__", None) or getattr(fn, "__name__", "torch_kernel")
    # The usage checks read fn's signature, not these wrappers'.
    forward._attnv_checks = fn
    autograd_backward._attnv_checks = fn
    converted_backward.__wrapped__ = backward  # inspect.signature reads the user's backward
    decoder._attnv_checks_decode = decode
    chosen = converted_backward if backward is not None else autograd_backward if autograd else None
    k = Kernel(forward, backward=chosen, supports=supports, name=label, decode=decoder if decode else None)
    k.__module__ = getattr(fn, "__module__", None) or "?"
    return k
