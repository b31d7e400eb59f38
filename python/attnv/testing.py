"""pytest helpers: one test per requirement x dtype of a certificate.

    import attnv, attnv.testing, pytest

    SUITE = attnv.testing.lazy(my_attention, claims=CLAIMS, dtypes=["f32"])  # runs nothing yet

    @pytest.mark.parametrize("result", attnv.testing.cases(SUITE))
    def test_attention(result):
        attnv.testing.check(result)

lazy() takes certify()'s arguments and certifies on the first test that needs a result, once per
process: collecting (`pytest --collect-only`), or deselecting every test with `-k`, certifies
nothing, and the ids ("R5-no_leakage-f32") come from the requirements and dtypes alone. cases()
also takes a Certificate that has already run.

PASS passes; FAIL and ATTNV ERROR fail with the findings' text, ending with the line that reruns
that one judgement; NOT EXERCISED, NOT SUPPORTED, not claimed, NOTE and NOT JUDGED skip with the
reason (none of them is a pass, none is this requirement's failure).
"""
import pytest

# Verdicts that are neither a pass nor this requirement's failure.
_SKIPPED = ("NOT EXERCISED", "NOT SUPPORTED", "not claimed", "NOTE", "NOT JUDGED")


class LazyCertificate:
    """certify(*args, **kwargs), run the first time a result is asked for."""

    def __init__(self, *args, **kwargs):
        self._args, self._kwargs = args, kwargs
        self._cert = None
        self.runs = 0  # how many times it certified (0 or 1)

    @property
    def certificate(self):
        if self._cert is None:
            from . import certify
            self.runs += 1
            self._cert = certify(*self._args, **self._kwargs)
        return self._cert

    def ids(self):
        """(requirement id, property, dtype) of every result, without certifying."""
        from . import requirements
        dtypes = self._kwargs.get("dtypes")
        if dtypes is None:
            claims = self._kwargs.get("claims", self._args[1] if len(self._args) > 1 else {})
            dtypes = list(claims.get("dtypes", [])) if isinstance(claims, dict) else []
        dtypes = [dtypes] if isinstance(dtypes, str) else list(dtypes)
        only = self._kwargs.get("only")
        only = [only] if isinstance(only, str) else list(only or [])
        reqs = [(rid, prop) for rid, prop in requirements() if not only or rid in only or prop in only]
        return [(rid, prop, d) for rid, prop in reqs for d in dtypes]


def lazy(kernel, claims, **kwargs):
    """A certification run on first use (certify()'s arguments): see the module."""
    return LazyCertificate(kernel, claims, **kwargs)


class LazyResult:
    """One requirement x dtype of a LazyCertificate; resolves to the result dict on first use."""

    def __init__(self, lazy_cert, rid, dtype):
        self.lazy, self.id, self.dtype = lazy_cert, rid, dtype

    def get(self):
        return self.lazy.certificate.result(self.id, self.dtype)

    def __repr__(self):
        return f"<attnv result {self.id} {self.dtype}>"


def cases(cert):
    """pytest.param per result, with ids such as "R5-no_leakage-f32"; `cert` is a Certificate or lazy()."""
    if isinstance(cert, LazyCertificate):
        return [pytest.param(LazyResult(cert, rid, d), id=f"{rid}-{prop}-{d}") for rid, prop, d in cert.ids()]
    return [pytest.param(r, id=f"{r['id']}-{r['property']}-{r['dtype']}") for r in cert.results]


def check(result):
    """Passes, fails or skips as the result's verdict says."""
    if isinstance(result, LazyResult):
        result = result.get()
    v = result["verdict"]
    if v == "PASS":
        return
    if v in _SKIPPED:
        why = result["note"] or result["not_exercised_why"] or ""
        pytest.skip(f"{result['id']} {result['property']} [{result['dtype']}] {v}" + (f": {why}" if why else ""))
    tracebacks = [f["traceback"] for f in result["findings"] if f.get("traceback")]
    text = result["text"] + ("\n\n" + tracebacks[0] if tracebacks else "")
    pytest.fail(text + "\nrerun: " + result["reproduce"], pytrace=False)
