"""attnv's own kernels through the Python route: every mutant of the zoo (kernels/mutants.h), its
C++ code called from Python with NumPy arrays (attnv._attnv.native_kernel), is caught by the
requirement the C route catches it with (docs/kill-table.md), and the correct naive kernel is
certified, forward, backward and decode (contiguous and paged)."""
import pytest

import attnv
import kernels

@pytest.mark.parametrize("name", attnv._attnv.mutant_names())
def test_mutant_caught_by_its_requirement(name):
    kernel, claims, nk = kernels.native(name)
    cert = attnv.certify(kernel, claims=claims, dtypes=[nk.meant_dtype], only=[nk.meant_for])
    r = cert.result(nk.meant_for, nk.meant_dtype)
    assert r["verdict"] == "FAIL", f"{name} survived {nk.meant_for} through Python:\n{r['text']}"
    assert r["findings"] and r["findings"][0]["kind"] not in ("crashed", "missing_output"), r["text"]


def test_naive_kernel_certified_through_python():
    kernel, claims, _ = kernels.native("naive")
    cert = attnv.certify(kernel, claims=claims, dtypes=["f32", "bf16"], suite="quick")
    assert cert.certified, cert.table()
    for rid in ("R1", "R2", "R21"):
        for dtype in ("f32", "bf16"):
            assert cert.result(rid, dtype)["verdict"] == "PASS", cert.table()
