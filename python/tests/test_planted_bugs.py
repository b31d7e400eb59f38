"""Planted bugs in the NumPy kernel are caught on the right requirement (the tests can fail)."""
import attnv
import kernels


def test_dropped_scale_fails_r1_and_r20():
    cert = attnv.certify(kernels.numpy_no_scale, claims=kernels.ALL_FORWARD, dtypes=["f32"], only=["R1", "R20"])
    assert not cert.certified
    for rid in ("R1", "R20"):
        r = cert.result(rid, "f32")
        assert r["verdict"] == "FAIL", r["text"]
        assert r["findings"], r
    assert "R1/f32" in cert.verdict_line


def test_tile_instead_of_repeat_interleave_fails_r10():
    cert = attnv.certify(kernels.numpy_tile_gqa, claims=kernels.ALL_FORWARD, dtypes=["f32"], only=["R10"])
    r = cert.result("R10", "f32")
    assert r["verdict"] == "FAIL", r["text"]
    assert "R10/f32" in cert.verdict_line
    # The same kernel without the bug passes the same requirement: the check is what tells them apart.
    ok = attnv.certify(kernels.numpy_attention, claims=kernels.ALL_FORWARD, dtypes=["f32"], only=["R10"])
    assert ok.result("R10", "f32")["verdict"] == "PASS"
