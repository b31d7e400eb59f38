"""Findings you can debug in Python: evidence folders (report_dir= as `attnv certify --report`),
the failing case's arrays (attnv.evidence), and attnv.repro judging a finding again with the
exit meanings of `attnv repro`."""
import gc
import json
import os

import numpy as np

import attnv
import kernels

CLAIMS = dict(kernels.ALL_FORWARD, backward=True)


def over_bound(run):
    """The tensors of a judged call with an element further from its exact value than its bound."""
    with np.errstate(invalid="ignore"):  # -inf - -inf: an LSE of a row with no visible key
        return [k for k, x in run["exact"].items() if np.any(np.abs(run["outputs"][k] - x) > run["bound"][k])]


def test_report_dir_holds_the_certificate_and_the_evidence(tmp_path):
    cert = attnv.certify(kernels.numpy_no_scale, claims=kernels.ALL_FORWARD, dtypes=["f32"], only=["R1"],
                         report_dir=tmp_path)
    for name in ("certificate.json", "certificate.junit.xml", "certificate.html"):
        assert (tmp_path / name).is_file(), name
    assert json.loads((tmp_path / "certificate.json").read_text())["verdict"]["certified"] is False
    (f,) = cert.findings
    assert f["id"] == "R1" and f["dtype"] == "f32" and f["folder"].startswith(str(tmp_path / "failures")), f

    # The arrays: the kernel's O, the exact O and the allowance of the call R1 judged, and the
    # inputs the kernel got; the finding is visible in them.
    ev = attnv.evidence(f["folder"])
    run = ev["runs"][0]
    out, exact, bound = run["outputs"]["out"], run["exact"]["out"], run["bound"]["out"]
    assert out.shape == exact.shape == bound.shape == run["inputs"]["q"].shape[:3] + (run["inputs"]["v"].shape[3],)
    assert over_bound(run), "the evidence does not show the failure"
    assert "R1" in ev["finding"] and set(ev["case"]) >= {"q", "k", "v"}

    # Judged again: still failing with the buggy function, fixed with the correct one.
    still = attnv.repro(kernels.numpy_no_scale, f["folder"], claims=kernels.ALL_FORWARD)
    assert still.code == 1 and not still and "FAILS" in still.text, still.text
    fixed = attnv.repro(kernels.numpy_attention, f["folder"], claims=kernels.ALL_FORWARD)
    assert fixed.code == 0 and fixed and fixed.verdict == "fixed", fixed.text

    # The same folder for a correct kernel: the old failures do not stay beside a CERTIFIED one.
    ok = attnv.certify(kernels.numpy_attention, claims=kernels.ALL_FORWARD, dtypes=["f32"], only=["R1"],
                       report_dir=tmp_path)
    assert ok.certified and not (tmp_path / "failures").exists()


def test_backward_finding_and_its_fix(tmp_path):
    cert = attnv.certify(kernels.NUMPY_DK_NO_SCALE, claims=CLAIMS, dtypes=["f64"], only=["R2"])
    (f,) = cert.findings
    ev = attnv.evidence(f["folder"])
    run = next(r for r in ev["runs"] if "dk" in r["exact"])
    assert "dk" in over_bound(run), over_bound(run)
    assert attnv.repro(kernels.NUMPY_DK_NO_SCALE, f["folder"], claims=CLAIMS).code == 1
    assert attnv.repro(kernels.NUMPY_KERNEL, f["folder"], claims=CLAIMS).code == 0
    # A kernel that no longer claims the backward cannot judge it: neither fixed nor failing.
    forward_only = dict(CLAIMS, backward=False)
    assert attnv.repro(kernels.numpy_attention, f["folder"], claims=forward_only).code == 2


def test_temporary_evidence_lives_with_the_certificate():
    cert = attnv.certify(kernels.numpy_no_scale, claims=kernels.ALL_FORWARD, dtypes=["f32"], only=["R1"])
    folder = cert.findings[0]["folder"]
    assert os.path.isdir(folder)
    del cert
    gc.collect()
    assert not os.path.exists(folder)


def test_repro_refuses_what_is_not_evidence(tmp_path):
    import pytest
    with pytest.raises(ValueError, match="not the evidence folder of a certify finding|manifest"):
        attnv.repro(kernels.numpy_attention, tmp_path, claims=kernels.ALL_FORWARD)
    with pytest.raises(ValueError, match="not a finding's evidence folder"):
        attnv.evidence(tmp_path)
