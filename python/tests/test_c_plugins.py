"""The plugin tests' misbehaving C kernels (plugin/tests/plugins) called from Python through ctypes
(abi_ctypes.py), as a user wraps a C kernel: each is caught through the Python route by the
requirement, and with the finding kind, that catch it through the plugin route
(cli/tests/certify_plugins_test.cpp, plugin/tests/conformance_test.cpp). The correct ones are
certified. Not here: bad_segv, bad_abort and bad_hang; a crash or a hang in process ends or stalls
the Python process itself (python/README.md: the plugin route's worker is what survives them)."""
import os

import pytest

import attnv
from abi_ctypes import CLAIMS, DECODE_CLAIMS, PLAIN, CKernel


def plugin(name):
    path = os.environ.get("ATTNV_PLUGIN_" + name.upper())
    if not path:
        pytest.skip(f"ATTNV_PLUGIN_{name.upper()} is not set (the ctest python_c_plugins sets it)")
    return CKernel(path)


# name, requirement that meets the bug first, finding kind, what the message says
MISBEHAVING = [
    ("bad_oob_write", "R1", "out_of_bounds", "wrote outside its out"),
    ("bad_canary", "R1", "out_of_bounds", "wrote outside its out"),
    ("bad_writes_q", "R14", "input_written", "wrote into its input q"),
    ("bad_nan_out", "R1", "non_finite", "non-finite"),
    ("bad_refuses", "R1", "refused", "returned 7: this kernel only runs on Tuesdays"),
]


def test_the_correct_plugin_is_certified():
    k = plugin("example_minimal")
    # The example claims strided and LSE, nothing else (f32, f64): the same claims here.
    cert = attnv.certify(k, claims=PLAIN, dtypes=["f32", "f64"], only=["R1", "R11", "R14"])
    assert cert.certified, cert.table()
    assert cert.result("R11", "f32")["exercised"] > 0, cert.result("R11", "f32")


@pytest.mark.parametrize("name,requirement,kind,says", MISBEHAVING)
def test_a_misbehaving_plugin_is_caught_by_the_same_requirement(name, requirement, kind, says):
    # The bad plugins compute MHA without options in f32 (bad_common.h), so that is their claim.
    cert = attnv.certify(plugin(name), claims=PLAIN, dtypes=["f32"], only=[requirement, "R3"])
    r = cert.result(requirement, "f32")
    assert r["verdict"] == "FAIL", r["text"]
    f = r["findings"][0]
    assert f["kind"] == kind and says in f["message"], f
    assert not cert.certified


def test_a_failure_that_does_not_recur_is_no_evidence_of_a_fix(tmp_path):
    # bad_nan_once writes NaN on the one call that finds the marker file, then is correct: the
    # finding is real, but the certifier's second look passes, so a later pass proves nothing.
    k = plugin("bad_nan_once")
    marker = tmp_path / "marker"
    marker.write_text("")
    os.environ["ATTNV_TEST_NAN_ONCE_MARKER"] = str(marker)
    try:
        cert = attnv.certify(k, claims=PLAIN, dtypes=["f32"], only=["R1"],
                             report_dir=tmp_path / "report")
    finally:
        del os.environ["ATTNV_TEST_NAN_ONCE_MARKER"]
    f = cert.result("R1", "f32")["findings"][0]
    assert f["kind"] == "non_finite", f
    again = attnv.repro(k, cert.findings[0]["folder"], claims=PLAIN)
    assert again.code == 2 and "this pass is no evidence of a fix" in again.text, again.text


def test_paged_decode_plugins():
    # attnv's naive kernel as a plugin (plugin/plugins/naive_plugin.cpp) is certified; the same
    # kernel writing one slot past the appended positions of a paged cache
    # (plugin/tests/plugins/paged_variants.cpp) fails R21, which names the page and the slot as it
    # does through the worker. Its sibling paged_writes_table writes block_table[0][0] with the
    # value already there: the worker maps the table read-only and names the write; in process the
    # table is unchanged after the call, so nothing can see it (python/README.md).
    ok = attnv.certify(plugin("naive"), claims=DECODE_CLAIMS, dtypes=["f32"], only=["R21"])
    r = ok.result("R21", "f32")
    assert r["verdict"] == "PASS", r["text"]
    bad = attnv.certify(plugin("paged_writes_past_appended"), claims=DECODE_CLAIMS, dtypes=["f32"], only=["R21"])
    r = bad.result("R21", "f32")
    assert r["verdict"] == "FAIL", r["text"]
    message = r["findings"][0]["message"]
    assert "run C (paged cache" in message and "the cache k_cache page " in message, message
    assert ": untouched, past cache_len + n)" in message, message


def test_forward_claims_exercised_through_ctypes():
    # Every option the adapter passes is judged on the correct naive kernel (R1), so a field laid
    # out wrongly in abi_ctypes.py would fail here, not pass unseen.
    cert = attnv.certify(plugin("naive"), claims=CLAIMS, dtypes=["f32", "f64"], only=["R1"])
    assert cert.certified, cert.table()
