"""A correct NumPy attention certified in process on f32 and f64; its reports are the CLI's."""
import json
import os
import subprocess
import sys

import pytest

import attnv
import kernels


@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_numpy_attention_certified(tmp_path, dtype):
    cert = attnv.certify(kernels.numpy_attention, claims=kernels.ALL_FORWARD, dtypes=[dtype], suite="quick")
    print(cert.table())
    assert cert.certified, cert.table()
    assert cert.verdict_line.startswith("CERTIFIED")
    verdicts = {(r["id"], r["dtype"]): r["verdict"] for r in cert.results}
    assert verdicts[("R1", dtype)] == "PASS"
    assert verdicts[("R2", dtype)] == "not claimed"  # no backward from Python
    assert verdicts[("R11", dtype)] == "not claimed"  # dense arrays only

    # The same three reports as `attnv certify`.
    cert.write_json(tmp_path / "cert.json")
    cert.write_junit(tmp_path / "cert.xml")
    cert.write_html(tmp_path / "cert.html")
    # Reports get what any new file gets (0666 less the umask), as the CLI's do, not mkstemp's 0600.
    umask = os.umask(0)
    os.umask(umask)
    for name in ("cert.json", "cert.xml", "cert.html"):
        assert (tmp_path / name).stat().st_mode & 0o777 == 0o666 & ~umask, name
    j = json.loads((tmp_path / "cert.json").read_text())
    assert j["kernel"]["spec"] == "python:kernels.numpy_attention"
    assert len(j["results"]) == len(cert.results)
    assert "<testsuites" in (tmp_path / "cert.xml").read_text()
    assert "CERTIFIED" in (tmp_path / "cert.html").read_text()
    # The JSON follows the certificate schema, as the CLI's does.
    report = os.path.join(os.path.dirname(__file__), "..", "..", "report")
    p = subprocess.run([sys.executable, os.path.join(report, "tests", "validate_certificate.py"),
                        os.path.join(os.environ["ATTNV_SCHEMA_DIR"], "certificate.schema.json"), str(tmp_path / "cert.json")],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
