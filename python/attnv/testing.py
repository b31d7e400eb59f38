"""pytest helpers: one test per requirement x dtype of a certificate.

    import attnv, attnv.testing, pytest
    CERT = attnv.certify(my_attention, claims=..., dtypes=["f32"])

    @pytest.mark.parametrize("result", attnv.testing.cases(CERT))
    def test_attention(result):
        attnv.testing.check(result)

PASS passes; FAIL and ATTNV ERROR fail with the findings' text; NOT EXERCISED, NOT SUPPORTED, not
claimed, NOTE and NOT JUDGED skip with the reason (none of them is a pass, none is this
requirement's failure).
"""
import pytest

# Verdicts that are neither a pass nor this requirement's failure.
_SKIPPED = ("NOT EXERCISED", "NOT SUPPORTED", "not claimed", "NOTE", "NOT JUDGED")


def cases(cert):
    """pytest.param per result, with ids such as "R5-no_leakage-f32"."""
    return [pytest.param(r, id=f"{r['id']}-{r['property']}-{r['dtype']}") for r in cert.results]


def check(result):
    """Passes, fails or skips as the result's verdict says."""
    v = result["verdict"]
    if v == "PASS":
        return
    if v in _SKIPPED:
        why = result["note"] or result["not_exercised_why"] or ""
        pytest.skip(f"{result['id']} {result['property']} [{result['dtype']}] {v}" + (f": {why}" if why else ""))
    pytest.fail(result["text"] + "\nrerun: " + result["reproduce"], pytrace=False)
