"""attnv in process: certify a Python attention function against the conformance suite.

    import attnv
    cert = attnv.certify(my_attention, claims={...}, precision={...}, dtypes=["f32"], suite="quick")
    print(cert.verdict_line)
    cert.write_json("cert.json"); cert.write_junit("cert.xml"); cert.write_html("cert.html")

`my_attention(q, k, v, *, mask, bias, kv_len, scale, softcap, causal, alignment, window, dtype)`
receives NumPy arrays q [B,Hq,Tq,Dk], k [B,Hkv,Tk,Dk], v [B,Hkv,Tk,Dv] (dense unless "strided" is
claimed) in the storage dtype
(f64 -> float64, f32 -> float32, f16 -> float16; bf16 -> float32 holding bf16 values, NumPy has
no bfloat16), mask bool [Tq,Tk] or None, bias [Tq,Tk] or None, kv_len int64 [B] or None, scale
a float (always the effective one), softcap a float or None, causal a bool, alignment
"top_left"/"bottom_right", window (left, right) with -1 unbounded, and dtype the storage dtype's
name; with the claim "sinks" also sinks [Hq] in the storage dtype, with the claim "alibi"
alibi [Hq], the ALiBi slopes, and with the claim "varlen" cu_seqlens_q and cu_seqlens_k, int64
[S+1] each, for a case packing S sequences into its one batch entry (each passed only for a case
that has them); with the claim "varlen_kv_len" too, kv_len of a packed case is int64 [S], the keys
each sequence uses (FlashAttention's seqused_k); with the claim "chunked", chunk (an int, the
chunk size of chunked local attention) for a case that has one. Accept **kwargs to stay compatible with parameters added later. It returns out
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
import shutil
import tempfile
import weakref

from . import _attnv
from ._attnv import InputError, requirements
from ._kernel import Kernel, check_claim_keys, check_signatures, parts

__version__ = _attnv.__version__
__all__ = ["certify", "Certificate", "Kernel", "Unsupported", "InputError", "requirements", "pytest_cases", "evidence",
           "repro", "Repro", "fuzz", "FuzzResult"]


class Unsupported(Exception):
    """Raise from the kernel to decline a call (a "refused" finding, not a crash)."""


# Capabilities that cannot be held to in process (none left: a kernel claiming "strided" gets
# q, k, v and dout as strided NumPy views, R11 judges it).
_NOT_FROM_PYTHON = {}


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

    def __init__(self, native, raised=(), evidence_dir=None, temporary=False):
        self._native = native
        self._raised = list(raised)  # (line, traceback) of each exception the kernel raised
        # Where the findings' evidence folders are: report_dir/failures, or a temporary folder
        # removed with the certificate.
        self.evidence_dir = evidence_dir
        if temporary and evidence_dir:
            weakref.finalize(self, shutil.rmtree, evidence_dir, True)

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

    @property
    def findings(self):
        """Every finding, each a dict with its result's "id", "property" and "dtype" added;
        attnv.evidence(f["folder"]) gives its arrays, attnv.repro(kernel, f["folder"], claims)
        judges it again."""
        return [dict(f, id=r["id"], property=r["property"], dtype=r["dtype"]) for r in self.results for f in r["findings"]]

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
            name=None, progress=False, jobs=None, report_dir=None, arrays="numpy", device=None):
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
    arrays: "numpy" (default) or "torch": every function of the kernel gets torch tensors (bf16 as
      torch.bfloat16, on `device`, default the CPU) and may return tensors (attnv.torch).
    report_dir: a folder for the whole certificate, as `attnv certify --report`: certificate.json,
      certificate.junit.xml, certificate.html and failures/ (one evidence folder per finding; a
      failures/ left there by an earlier run is replaced). Without it the evidence folders go to a
      temporary folder that lives as long as the certificate.
    """
    kernel = _framework(kernel, arrays, device)
    forward, backward, decode, supports, in_place = parts(kernel)
    if dtypes is None:
        dtypes = list(claims.get("dtypes", [])) if isinstance(claims, dict) else []
        if not dtypes:
            raise ValueError('certify: say which dtypes to run: dtypes=["f32"] or claims["dtypes"]')
    if isinstance(dtypes, str):
        dtypes = [dtypes]
    only = [only] if isinstance(only, str) else list(only or [])
    name, spec = _identity(kernel, name)
    args = [name, "claims"] + (["precision"] if precision is not None else [])
    args += [f"dtypes={list(dtypes)!r}", f"suite={suite!r}", f"seed={seed}"] + ([f"only={only!r}"] if only else [])
    command = f"attnv.certify({', '.join(args)})"
    claims_json = _claims_json(claims, precision)
    check_signatures(forward, backward, decode, claims, name, in_place)
    if report_dir is not None:
        report_dir = os.fspath(report_dir)
        os.makedirs(report_dir, exist_ok=True)
        failures = os.path.join(report_dir, "failures")
        if os.path.isdir(failures):  # attnv's own folder: findings of another run must not stay beside this one
            shutil.rmtree(failures)
    else:
        failures = tempfile.mkdtemp(prefix="attnv-evidence-")
    try:
        native, raised = _attnv._certify(forward, backward, decode, supports, in_place, name, spec,
                                         claims_json, list(dtypes), suite, int(seed), only, int(max_findings),
                                         (Unsupported, NotImplementedError), command, bool(progress), int(jobs or 0),
                                         failures)
    except BaseException:
        if report_dir is None:
            shutil.rmtree(failures, True)
        raise
    cert = Certificate(native, raised, failures, temporary=report_dir is None)
    if report_dir is not None:
        cert.write_json(os.path.join(report_dir, "certificate.json"))
        cert.write_junit(os.path.join(report_dir, "certificate.junit.xml"))
        cert.write_html(os.path.join(report_dir, "certificate.html"))
    return cert


def evidence(folder):
    """The arrays of a finding's evidence folder (docs/certificate.md): {"case": {name: array},
    "runs": [{"inputs": {...}, "outputs": {...}, "exact": {...}, "bound": {...}}, ...] (one per
    kernel call the check made, in order; exact and bound where the check judged that call against
    the reference), "finding": the finding's text}. Arrays are float64 (exact values), int64 or
    bool, as saved."""
    import numpy as np

    folder = os.fspath(folder)
    if not os.path.isdir(os.path.join(folder, "case")):
        raise ValueError(f"{folder}: not a finding's evidence folder (no case/)")

    def arrays(d):
        return {f[:-4]: np.load(os.path.join(d, f)) for f in sorted(os.listdir(d)) if f.endswith(".npy")}

    outputs = {"out", "lse", "dq", "dk", "dv", "dsinks"}
    runs = []
    n = 1
    while os.path.isdir(os.path.join(folder, f"run{n}")):
        a = arrays(os.path.join(folder, f"run{n}"))
        run = {"inputs": {}, "outputs": {}, "exact": {}, "bound": {}}
        for key, x in a.items():
            if key.startswith("ref_"):
                run["exact"][key[4:]] = x
            elif key.startswith("bound_"):
                run["bound"][key[6:]] = x
            else:
                run["outputs" if key in outputs else "inputs"][key] = x
        runs.append(run)
        n += 1
    text = ""
    if os.path.isfile(os.path.join(folder, "finding.txt")):
        with open(os.path.join(folder, "finding.txt"), encoding="utf-8") as f:
            text = f.read()
    return {"case": arrays(os.path.join(folder, "case")), "runs": runs, "finding": text}


class Repro:
    """What attnv.repro found, with `attnv repro`'s exit meanings as `code`: 0 passes (fixed), 1
    still fails, 2 neither (the case cannot be judged with this kernel, or a pass that shows
    nothing), 3 attnv could not judge it (its own error). True only when fixed."""

    MEANING = {0: "fixed", 1: "fails", 2: "neither", 3: "attnv error"}

    def __init__(self, code, text):
        self.code, self.text = code, text

    verdict = property(lambda self: self.MEANING[self.code])

    def __bool__(self):
        return self.code == 0

    def __repr__(self):
        return f"<attnv.Repro {self.verdict} (code {self.code})>"

    def __str__(self):
        return self.text


def _framework(kernel, arrays, device):
    """The kernel as certify() calls it: NumPy arrays as they are, or, with arrays="torch", every
    function of it behind attnv.torch's conversions (no autograd: a backward is the kernel's own)."""
    if arrays in (None, "numpy"):
        if device is not None:
            raise ValueError('device= goes with arrays="torch"')
        return kernel
    if arrays != "torch":
        raise ValueError(f'arrays: "numpy" or "torch", not {arrays!r}')
    from . import torch as attnv_torch
    forward, backward, decode, supports, in_place = parts(kernel)
    if in_place:
        raise ValueError('writes_outputs=True takes NumPy buffers: not with arrays="torch"')
    name = getattr(kernel, "__qualname__", None) or type(kernel).__name__
    k = attnv_torch.kernel(forward, name=name, supports=supports, device=device or "cpu", decode=decode,
                           backward=backward, autograd=False)
    k.__module__ = getattr(kernel, "__module__", None) or "?"
    return k


def _identity(kernel, name):
    """(name, spec) of a kernel as certificates and reproducers record it."""
    name = name or getattr(kernel, "__qualname__", None) or type(kernel).__name__
    return name, f"python:{getattr(kernel, '__module__', None) or '?'}.{name}"


def repro(kernel, folder, claims, precision=None, name=None, arrays="numpy", device=None):
    """Judges a saved failure again with `kernel` (its claims as certify takes them): a certify
    finding's evidence folder by the same requirement on the same case, in the same layout; an
    attnv.fuzz reproducer by the fuzz oracle. Returns a Repro."""
    kernel = _framework(kernel, arrays, device)
    forward, backward, decode, supports, in_place = parts(kernel)
    name, spec = _identity(kernel, name)
    claims_json = _claims_json(claims, precision)
    check_signatures(forward, backward, decode, claims, name, in_place)
    code, text = _attnv._repro(forward, backward, decode, supports, in_place, name, spec, claims_json, os.fspath(folder),
                               (Unsupported, NotImplementedError))
    return Repro(code, text)


class FuzzResult:
    """What attnv.fuzz found, with `attnv fuzz`'s exit meanings as `code`: 0 no finding in the
    time, 1 a finding (shrunk, its reproducer in `folder`), 2 nothing judged (every input skipped,
    or none run), 3 attnv's own error on an input (its case in `folder`; no verdict on the kernel)."""

    MEANING = {0: "no finding", 1: "finding", 2: "nothing judged", 3: "attnv error"}

    def __init__(self, code, text, log, folder, raised):
        self.code, self.text, self.log = code, text, log
        self.folder = folder if code in (1, 3) else None
        self.tracebacks = [tb for _, tb in raised]  # of the exceptions the kernel raised

    verdict = property(lambda self: self.MEANING[self.code])
    found = property(lambda self: self.code == 1)

    def __repr__(self):
        return f"<attnv.FuzzResult {self.verdict} (code {self.code})>"

    def __str__(self):
        return self.text or self.log


def fuzz(kernel, claims, dtype=None, max_time=30.0, jobs=1, out="attnv-fuzz-out", seed=1, backward=True,
         shrink_time=20.0, corpus=None, precision=None, name=None, progress=False, arrays="numpy", device=None):
    """Guided numeric fuzzing of a Python kernel in process, as `attnv fuzz`: mutates cases (tile
    edges, huge and tiny values, near-ties, masks, hidden NaN keys, ...), judges each against the
    exact reference under the bound of the declared precision (the backward too where claimed),
    keeps the inputs that reach new headroom or error levels, shrinks the first finding and writes
    its reproducer to `out` (attnv.repro judges it again). dtype: one storage dtype (default every
    claimed one); jobs: independent searchers; corpus: a folder of seed inputs (libFuzzer's), False
    for none, or None (default) for the seeds built into attnv (fuzz/corpus/numeric at build time).
    arrays, device: as certify's. Returns a FuzzResult."""
    kernel = _framework(kernel, arrays, device)
    forward, backward_fn, decode, supports, in_place = parts(kernel)
    name, spec = _identity(kernel, name)
    claims_json = _claims_json(claims, precision)
    check_signatures(forward, backward_fn, decode, claims, name, in_place)
    out = os.fspath(out)
    if os.path.exists(out) and not os.path.isdir(out):
        raise ValueError(f"out: {out} exists and is not a folder")
    if corpus is None:  # the seeds built into attnv: what `attnv fuzz` starts from too
        seeds = list(_attnv._builtin_seed_corpus())
    elif corpus is False:
        seeds = []
    else:
        seeds = []
        corpus = os.fspath(corpus)
        if not os.path.isdir(corpus):
            raise ValueError(f"corpus: {corpus} is not a folder")
        for f in sorted(os.listdir(corpus)):  # the same order every run: seed reproduces
            p = os.path.join(corpus, f)
            if os.path.isfile(p):
                with open(p, "rb") as fh:
                    seeds.append(fh.read())
    if int(jobs) < 1:
        raise ValueError("jobs: at least 1")
    rerun = f"  reproduce:  attnv.repro({name}, {out!r}, claims)\n"
    code, text, log, raised = _attnv._fuzz(forward, backward_fn, decode, supports, in_place, name, spec, claims_json, dtype,
                                           float(max_time), int(jobs), int(seed), bool(backward), float(shrink_time),
                                           out, seeds, rerun, bool(progress), (Unsupported, NotImplementedError))
    return FuzzResult(code, text, log, out, raised)


def pytest_cases(cert):
    """One pytest parameter per requirement x dtype, for @pytest.mark.parametrize (attnv.testing)."""
    from .testing import cases
    return cases(cert)
