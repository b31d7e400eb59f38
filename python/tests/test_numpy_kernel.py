"""A correct NumPy attention certified in process on f32 and f64; its reports are the CLI's."""
import json
import os
import subprocess
import sys

import attnv
import kernels


def test_numpy_attention_certified(tmp_path):
    cert = attnv.certify(kernels.numpy_attention, claims=kernels.ALL_FORWARD, dtypes=["f32", "f64"], suite="quick")
    print(cert.table())
    assert cert.certified, cert.table()
    assert cert.verdict_line.startswith("CERTIFIED")
    verdicts = {(r["id"], r["dtype"]): r["verdict"] for r in cert.results}
    assert verdicts[("R1", "f32")] == "PASS" and verdicts[("R1", "f64")] == "PASS"
    assert verdicts[("R2", "f32")] == "not claimed"  # no backward from Python
    assert verdicts[("R11", "f64")] == "not claimed"  # dense arrays only

    # The same three reports as `attnv certify`.
    cert.write_json(tmp_path / "cert.json")
    cert.write_junit(tmp_path / "cert.xml")
    cert.write_html(tmp_path / "cert.html")
    j = json.loads((tmp_path / "cert.json").read_text())
    assert j["kernel"]["spec"] == "python:kernels.numpy_attention"
    assert len(j["results"]) == len(cert.results)
    assert "<testsuites" in (tmp_path / "cert.xml").read_text()
    assert "CERTIFIED" in (tmp_path / "cert.html").read_text()
    # The JSON follows the certificate schema, as the CLI's does.
    report = os.path.join(os.path.dirname(__file__), "..", "..", "report")
    p = subprocess.run([sys.executable, os.path.join(report, "tests", "validate_certificate.py"),
                        os.path.join(report, "certificate.schema.json"), str(tmp_path / "cert.json")],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr


def test_precision_and_bad_claims():
    # A precision model is taken from precision= (here a blocked one; the kernel still passes).
    cert = attnv.certify(kernels.numpy_attention, claims=kernels.ALL_FORWARD, dtypes=["f32"],
                         precision={"f32": {"accum": "f32", "block": 64}}, only=["R1"])
    assert cert.result("R1", "f32")["verdict"] == "PASS"
    json.loads(cert.to_json())
    # Claims with a capability left out: the claims file's error, naming what is missing.
    partial = dict(kernels.ALL_FORWARD)
    del partial["softcap"]
    try:
        attnv.certify(kernels.numpy_attention, claims=partial, dtypes=["f32"], only=["R1"])
    except ValueError as e:
        assert "missing: softcap" in str(e), e
    else:
        raise AssertionError("claims without softcap were accepted")
    for bad, words in [({**kernels.ALL_FORWARD, "strided": True}, "strided"),
                       ({**kernels.ALL_FORWARD, "gqa": "yes"}, "expected true or false")]:
        try:
            attnv.certify(kernels.numpy_attention, claims=bad, dtypes=["f32"], only=["R1"])
        except ValueError as e:
            assert words in str(e), e
        else:
            raise AssertionError(f"{bad} accepted")
    try:
        attnv.certify(kernels.numpy_attention, claims=kernels.ALL_FORWARD, dtypes=["f32"], only=["R99"])
    except ValueError as e:
        assert "R99" in str(e), e
    else:
        raise AssertionError("only=['R99'] accepted")
