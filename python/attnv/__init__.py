"""attnv in process: certify a Python attention function against the conformance suite.

    import attnv
    cert = attnv.certify(my_attention, claims={...}, precision={...}, dtypes=["f32"], suite="quick")
    print(cert.verdict_line)
    cert.write_json("cert.json"); cert.write_junit("cert.xml"); cert.write_html("cert.html")

`my_attention(q, k, v, *, mask, bias, kv_len, scale, softcap, causal, alignment, window, dtype)`
receives dense NumPy arrays q [B,Hq,Tq,Dk], k [B,Hkv,Tk,Dk], v [B,Hkv,Tk,Dv] in the storage dtype
(f64 -> float64, f32 -> float32, f16 -> float16; bf16 -> float32 holding bf16 values, NumPy has
no bfloat16), mask bool [Tq,Tk] or None, bias [Tq,Tk] or None, kv_len int64 [B] or None, scale
a float (always the effective one), softcap a float or None, causal a bool, alignment
"top_left"/"bottom_right", window (left, right) with -1 unbounded, and dtype the storage dtype's
name; with the claim "sinks" also sinks [Hq] in the storage dtype, with the claim "alibi"
alibi [Hq], the ALiBi slopes, and with the claim "varlen" cu_seqlens_q and cu_seqlens_k, int64
[S+1] each, for a case packing S sequences into its one batch entry (each passed only for a case
that has them); with the claim "varlen_kv_len" too, kv_len of a packed case is int64 [S], the keys
each sequence uses (FlashAttention's seqused_k). Accept **kwargs to stay compatible with parameters added later. It returns out
[B,Hq,Tq,Dv] in the storage dtype's NumPy dtype, or (out, lse) with lse [B,Hq,Tq] in float32
(float64 for f64). The meaning of every parameter: docs/semantics.md.

With "backward": true the kernel also has a backward (attnv.Kernel(forward, backward=...), an
object with forward and backward methods, or attnv.torch.kernel(fn), which derives it through
autograd): backward(q, k, v, dout, *, out, lse, <the forward's keywords>) returns (dq, dk, dv),
and dsinks [Hq] last when the case has sinks. A kernel may decline a problem honestly with
supports(problem, op) -> True, False or a reason: NOT SUPPORTED, counted and listed (a claim
declined wholesale is not certified: docs/semantics.md, "Declined problems").

What the function does wrong is a finding on the certificate, never an error of attnv: an
exception is "crashed" (attnv.Unsupported or NotImplementedError: "refused"), a wrong shape,
dtype or type "missing_output"; each finding of an exception carries its traceback. What cannot
work at all (a function that cannot take the keywords its claims imply, an unknown claim) is a
TypeError or ValueError raised before any case runs.
"""
import json
import os
import tempfile

from . import _attnv
from ._attnv import InputError, requirements
from ._kernel import Kernel, check_claim_keys, check_signatures, parts

__version__ = _attnv.__version__
__all__ = ["certify", "Certificate", "Kernel", "Unsupported", "InputError", "requirements", "pytest_cases"]


class Unsupported(Exception):
    """Raise from the kernel to decline a call (a "refused" finding, not a crash)."""


# Capabilities that cannot be held to in process yet: attnv hands the function dense arrays, so
# it has no layout of its own to check.
_NOT_FROM_PYTHON = {
    "strided": "the function receives dense arrays, so there is no memory layout of its own to check (for now)",
}


def _claims_json(claims, precision):
    if not isinstance(claims, dict):
        raise TypeError(f"claims: expected a dict of capabilities, got {type(claims).__name__}")
    check_claim_keys(claims)
    c = dict(claims)
    for key, why in _NOT_FROM_PYTHON.items():
        if c.get(key) is True:
            raise ValueError(f'claims: "{key}": true cannot be claimed from Python: {why}')
    if precision is not None:
        if "precision" in c:
            raise ValueError("claims: give the precision models either as claims['precision'] or as precision=, not both")
        c["precision"] = precision
    return json.dumps(c)


def _write(path, text):
    """Writes atomically (a temporary file renamed over the target); refuses non-regular files."""
    path = os.fspath(path)
    if os.path.exists(path) and not os.path.isfile(path):
        raise ValueError(f"{path}: not a regular file; attnv writes reports to regular files only")
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".attnv-", dir=folder)
    try:
        # mkstemp makes the file 0600; a report gets what any new file gets (0666 less the umask),
        # as the CLI's do.
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


class Certificate:
    """The result of certify(): the verdicts and the same JSON/JUnit/HTML as `attnv certify`."""

    def __init__(self, native, raised=()):
        self._native = native
        self._raised = list(raised)  # (line, traceback) of each exception the kernel raised

    certified = property(lambda self: self._native.certified, doc="no FAIL, no ATTNV ERROR, at least one PASS")
    verdict_line = property(lambda self: self._native.verdict_line)

    @property
    def results(self):
        """One dict per requirement x dtype: id, property, dtype, verdict, cases, findings, ...; a
        finding of an exception carries its "traceback" (else None)."""
        results = self._native.results
        for r in results:
            for f in r["findings"]:
                f["traceback"] = next((tb for line, tb in self._raised if line in f["message"]), None)
        return results
    summary = property(lambda self: self._native.summary)
    kernel = property(lambda self: self._native.kernel)
    command = property(lambda self: self._native.command)

    def result(self, requirement, dtype):
        """The result of one requirement (id or property name) on one dtype."""
        for r in self.results:
            if requirement in (r["id"], r["property"]) and r["dtype"] == dtype:
                return r
        raise KeyError(f"no result for {requirement} on {dtype}")

    def table(self, color=False):
        return self._native.table(color)

    def to_json(self):
        return self._native.to_json()

    def to_junit(self):
        return self._native.to_junit()

    def to_html(self):
        return self._native.to_html()

    def write_json(self, path):
        _write(path, self.to_json())

    def write_junit(self, path):
        _write(path, self.to_junit())

    def write_html(self, path):
        _write(path, self.to_html())

    def __bool__(self):
        return self.certified

    def __repr__(self):
        return f"<attnv.Certificate {self.kernel}: {self.verdict_line}>"

    def __str__(self):
        return self.table()


def certify(kernel, claims, precision=None, dtypes=None, suite="quick", seed=20261121, only=None, max_findings=1,
            name=None, progress=False, jobs=None):
    """Runs the conformance suite on `kernel` in process and returns its Certificate.

    kernel: the forward function, or an object with forward (and optionally backward, supports)
      methods or attributes, such as attnv.Kernel(...) or attnv.torch.kernel(fn).
    claims: the claims file's object (cases/README.md): every capability true or false (gqa,
      causal_top_left, causal_bottom_right, window, mask, bias, kv_len, softcap, custom_scale,
      lse; hidden_nonfinite optional), "dtypes" optional.
    precision: per dtype {"accum", "p_dtype", "out", "block", "exp_ulps", the stages "dot", "score",
      "softmax", "pv", "flush_subnormals": True for a kernel that flushes subnormals (FTZ and DAZ)}
      (default: natural; cases/README.md).
    dtypes: the dtypes to run (default: claims["dtypes"]).
    only: requirement ids or names to run (default: all).
    jobs: requirement x dtype jobs run at once (default: the CPU count, as `attnv certify`); the
      kernel's functions are still called one at a time (under the GIL), attnv's own work for the
      other jobs goes on meanwhile. jobs=1 runs everything on the calling thread's schedule.
    """
    forward, backward, decode, supports = parts(kernel)
    fn = kernel
    if dtypes is None:
        dtypes = list(claims.get("dtypes", [])) if isinstance(claims, dict) else []
        if not dtypes:
            raise ValueError('certify: say which dtypes to run: dtypes=["f32"] or claims["dtypes"]')
    if isinstance(dtypes, str):
        dtypes = [dtypes]
    only = [only] if isinstance(only, str) else list(only or [])
    name = name or getattr(fn, "__qualname__", None) or type(fn).__name__
    module = getattr(fn, "__module__", None) or "?"
    args = [name, "claims"] + (["precision"] if precision is not None else [])
    args += [f"dtypes={list(dtypes)!r}", f"suite={suite!r}", f"seed={seed}"] + ([f"only={only!r}"] if only else [])
    command = f"attnv.certify({', '.join(args)})"
    claims_json = _claims_json(claims, precision)
    check_signatures(forward, backward, decode, claims, name)
    native, raised = _attnv._certify(forward, backward, decode, supports, name, f"python:{module}.{name}", claims_json,
                                     list(dtypes), suite, int(seed), only, int(max_findings),
                                     (Unsupported, NotImplementedError), command, bool(progress), int(jobs or 0))
    return Certificate(native, raised)


def pytest_cases(cert):
    """One pytest parameter per requirement x dtype, for @pytest.mark.parametrize (attnv.testing)."""
    from .testing import cases
    return cases(cert)
