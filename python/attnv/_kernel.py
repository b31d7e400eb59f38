"""What certify() accepts as a kernel, and the usage checks made before any case runs.

A kernel is a function (its forward), or an object with a `forward` method, with optional
`backward` and `supports` attributes; `attnv.Kernel(forward, backward=..., supports=...)` puts
three functions together. Everything here raises at once (TypeError, ValueError): a kernel that
cannot take the arguments its claims imply is a usage error, not a finding.
"""
import difflib
import inspect

from . import _attnv

# What every forward call passes besides q, k, v (python/README.md), and the keywords a claim adds.
FORWARD_KEYWORDS = ("mask", "bias", "kv_len", "scale", "softcap", "causal", "alignment", "window", "dtype")
CLAIM_KEYWORDS = _attnv.claim_keywords()  # {"sinks": ("sinks",), "varlen": ("cu_seqlens_q", "cu_seqlens_k"), ...}
# The backward's positional inputs after q, k, v, and its keywords beyond the forward's.
BACKWARD_POSITIONAL = ("dout",)
BACKWARD_KEYWORDS = ("out", "lse")
# A decode call: its positional inputs, its keywords, and the claims that add keywords to it.
DECODE_POSITIONAL = ("q", "k_new", "v_new", "k_cache", "v_cache")
DECODE_KEYWORDS = ("cache_len", "block_table", "scale", "softcap", "window", "dtype")
DECODE_CLAIM_KEYWORDS = _attnv.claim_keywords(decode=True)  # the per-head inputs only
# Keys of a claims object that are not capabilities.
CLAIM_FILE_KEYS = ("dtypes", "precision", "withdrawn")


class Kernel:
    """A kernel put together from functions: forward (required), backward, decode and supports
    (optional).

    forward(q, k, v, *, mask, bias, kv_len, scale, softcap, causal, alignment, window, dtype, ...)
      returns out, or (out, lse).
    backward(q, k, v, dout, *, out, lse, <the forward's keywords>) returns (dq, dk, dv), with
      dsinks last when the case has sinks; `out` and `lse` are what the forward returned (lse is
      None unless "lse" is claimed).
    decode(q, k_new, v_new, k_cache, v_cache, *, cache_len, block_table, scale, softcap, window,
      dtype) appends k_new and v_new into the caches in place and returns out, or (out, lse).
    supports(problem, op) returns True, False or a reason (a str) that declines the call; op is
      "forward", "backward" or "decode"; problem is a dict (python/README.md).
    writes_outputs=True: the functions write into buffers attnv passes instead of returning
      arrays: the forward and decode into out= and lse= (None unless "lse" is claimed), the backward
      into dq=, dk=, dv= (and dsinks=); every element is checked written, and a write past a
      buffer's end is out_of_bounds (as the plugin route's guard pages see it).
    """

    def __init__(self, forward, backward=None, supports=None, name=None, decode=None, writes_outputs=False):
        for what, f in (("forward", forward), ("backward", backward), ("decode", decode), ("supports", supports)):
            if f is not None and not callable(f):
                raise TypeError(f"attnv.Kernel: {what} must be callable, got {type(f).__name__}")
        if forward is None:
            raise TypeError("attnv.Kernel: a forward is required")
        self.forward, self.backward, self.decode, self.supports = forward, backward, decode, supports
        self.writes_outputs = bool(writes_outputs)
        self.__name__ = name or getattr(forward, "__name__", type(forward).__name__)
        self.__qualname__ = name or getattr(forward, "__qualname__", self.__name__)
        self.__module__ = getattr(forward, "__module__", None) or "?"

    def __repr__(self):
        parts = [p for p in ("backward", "decode", "supports") if getattr(self, p) is not None]
        return f"<attnv.Kernel {self.__qualname__}" + (f" with {', '.join(parts)}" if parts else "") + ">"


def parts(kernel):
    """(forward, backward, decode, supports, writes_outputs) of what certify() was given; None
    where there is none."""
    if isinstance(kernel, Kernel):
        return kernel.forward, kernel.backward, kernel.decode, kernel.supports, kernel.writes_outputs
    forward = getattr(kernel, "forward", None)
    if not callable(forward):
        if not callable(kernel):
            raise TypeError(f"certify: expected a callable kernel or an object with a forward method, "
                            f"got {type(kernel).__name__}")
        forward = kernel
    found = []
    for what in ("backward", "decode", "supports"):
        f = getattr(kernel, what, None)
        if f is not None and not callable(f):
            raise TypeError(f"certify: the kernel's {what} must be callable, got {type(f).__name__}")
        found.append(f)
    return (forward, *found, bool(getattr(kernel, "writes_outputs", False)))


def known_claim_keys():
    return list(_attnv.claim_keys()) + list(CLAIM_FILE_KEYS)


def check_claim_keys(claims):
    """ValueError for a key that is no claim, with the nearest one when a typo is likely."""
    known = known_claim_keys()
    for key in claims:
        if key not in known:
            near = difflib.get_close_matches(str(key), known, n=1, cutoff=0.6)
            hint = f'; did you mean "{near[0]}"?' if near else f" (known: {', '.join(known)})"
            raise ValueError(f'claims: "{key}" is not a claim{hint}')


def _accepts(fn, positional, keywords):
    """The names among `keywords` that fn cannot take, and whether it takes `positional` inputs
    positionally. A function whose signature Python cannot read (some builtins) is assumed to take them."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return [], True, []
    params = list(sig.parameters.values())
    var_kw = any(p.kind is p.VAR_KEYWORD for p in params)
    var_pos = any(p.kind is p.VAR_POSITIONAL for p in params)
    by_position = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    positional_ok = var_pos or len(by_position) >= positional
    taken = {p.name for p in by_position[positional:] if p.kind is p.POSITIONAL_OR_KEYWORD}
    taken |= {p.name for p in params if p.kind is p.KEYWORD_ONLY}
    missing = [] if var_kw else [k for k in keywords if k not in taken]
    # Parameters attnv never passes and that have no default: every call would be a TypeError.
    given = set(keywords)
    never = [p.name for p in by_position[positional:] + [p for p in params if p.kind is p.KEYWORD_ONLY]
             if p.default is p.empty and p.name not in given]
    return missing, positional_ok, never


def _keywords_for(claims, base=FORWARD_KEYWORDS, by_claim=None):
    kw = list(base)
    for claim, names in (CLAIM_KEYWORDS if by_claim is None else by_claim).items():
        if claims.get(claim) is True:
            kw += names
    return kw


def _check(fn, where, positional, keywords):
    missing, positional_ok, never = _accepts(fn, len(positional), keywords)
    if not positional_ok:
        raise TypeError(f"{where} must take {', '.join(positional)} positionally")
    if missing:
        raise TypeError(f"{where} does not accept the keyword(s) {', '.join(missing)} that its claims imply; "
                        f"add them, or **kwargs to take the ones it does not use")
    if never:
        raise TypeError(f"{where} requires {', '.join(never)}, which attnv never passes; give them defaults")


def check_signatures(forward, backward, decode, claims, name, writes_outputs=False):
    """TypeError naming what a function cannot accept, before any case runs. An adapter
    (attnv.torch.kernel) names the function it calls in _attnv_checks (a forward's signature) or
    _attnv_checks_decode: that one is read instead."""
    def check(fn, role, positional, keywords):
        target = getattr(fn, "_attnv_checks", None)
        if target is not None:
            fn, keywords, positional = target, [k for k in keywords if k in _keywords_for(claims)], ("q", "k", "v")
        _check(fn, name + ("" if role == "forward" else f".{role}"), positional, keywords)

    outputs = ["out", "lse"] if writes_outputs else []  # lse=None in a call without an LSE
    check(forward, "forward", ("q", "k", "v"), _keywords_for(claims) + outputs)
    if claims.get("backward") is True:
        if backward is None:
            raise TypeError(f'{name}: "backward": true is claimed, but the kernel has no backward '
                            f"(attnv.Kernel(forward, backward=...), a backward attribute, or attnv.torch.kernel)")
        grads = ["dq", "dk", "dv"] + (["dsinks"] if claims.get("sinks") is True else []) if writes_outputs else []
        check(backward, "backward", ("q", "k", "v") + BACKWARD_POSITIONAL,
              _keywords_for(claims) + list(BACKWARD_KEYWORDS) + grads)
    if claims.get("decode") is True or claims.get("paged_kv") is True:
        if decode is None:
            raise TypeError(f'{name}: "decode" (or "paged_kv") is claimed, but the kernel has no decode '
                            f"(attnv.Kernel(forward, decode=...) or a decode attribute)")
        _check(getattr(decode, "_attnv_checks_decode", None) or decode, f"{name}.decode", DECODE_POSITIONAL,
               _keywords_for(claims, DECODE_KEYWORDS, DECODE_CLAIM_KEYWORDS) + outputs)
