"""Python kernels with a backward: judged by R2 (and every requirement that runs the backward) like
a plugin's, correct ones certified, planted backward bugs caught, wrong answers named."""
import numpy as np
import pytest

import attnv
import kernels

CLAIMS = dict(kernels.ALL_FORWARD, backward=True, sinks=True)


def r2(kernel, dtype="f32", claims=CLAIMS):
    return attnv.certify(kernel, claims=claims, dtypes=[dtype], only=["R2"]).result("R2", dtype)


@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_numpy_backward_passes_r2(dtype):
    r = r2(kernels.NUMPY_KERNEL, dtype)
    assert r["verdict"] == "PASS", r["text"]
    assert r["exercised"] >= r["min_exercised"] > 0, r


def test_planted_backward_bugs_fail_r2():
    # dK without its scale, and the sinks' gradient with the wrong sign: each caught by R2, while
    # the forward they share with the correct kernel is untouched.
    for bad in (kernels.NUMPY_DK_NO_SCALE, kernels.NUMPY_DSINK_SIGN):
        r = r2(bad)
        assert r["verdict"] == "FAIL", (bad, r["text"])
        assert r["findings"][0]["kind"] == "outside_bound", r["text"]
    assert "dsinks" in r2(kernels.NUMPY_DSINK_SIGN)["findings"][0]["message"]


def test_an_object_with_forward_and_backward_methods():
    class Attention:
        def forward(self, q, k, v, **kw):
            return kernels.numpy_attention(q, k, v, **kw)

        def backward(self, q, k, v, dout, **kw):
            return kernels.numpy_backward(q, k, v, dout, **kw)

    assert r2(Attention())["verdict"] == "PASS"


def test_backward_faults_are_findings():
    def raises(q, k, v, dout, **_):
        raise RuntimeError("no grad for you")
    f = r2(attnv.Kernel(kernels.numpy_attention, backward=raises))["findings"][0]
    assert f["kind"] == "crashed" and ".backward raised RuntimeError: no grad for you" in f["message"], f
    assert "in raises" in f["traceback"], f

    def two_grads(q, k, v, dout, **kw):
        return kernels.numpy_backward(q, k, v, dout, **kw)[:2]
    f = r2(attnv.Kernel(kernels.numpy_attention, backward=two_grads))["findings"][0]
    assert f["kind"] == "missing_output" and "returned 2 items, expected (dq, dk, dv" in f["message"], f

    def dk_float64(q, k, v, dout, **kw):
        dq, dk, dv, *rest = kernels.numpy_backward(q, k, v, dout, **kw)
        return (dq, dk.astype(np.float64), dv, *rest)
    f = r2(attnv.Kernel(kernels.numpy_attention, backward=dk_float64))["findings"][0]
    assert f["kind"] == "missing_output" and "returned dk as float64, expected float32" in f["message"], f

    def scribbles_dout(q, k, v, dout, **kw):
        grads = kernels.numpy_backward(q, k, v, dout, **kw)
        dout[...] = 0
        return grads
    f = r2(attnv.Kernel(kernels.numpy_attention, backward=scribbles_dout))["findings"][0]
    assert f["kind"] == "input_written" and "wrote into its input dout" in f["message"], f


def test_backward_receives_the_forwards_out_and_lse():
    # out and lse are the forward's own answers (the bound models a backward that reads them).
    seen = []

    def checks(q, k, v, dout, *, out, lse, **kw):
        o, l = kernels.numpy_attention(q, k, v, **kw)
        seen.append(np.array_equal(out, o, equal_nan=True) and np.array_equal(lse, l, equal_nan=True))
        return kernels.numpy_backward(q, k, v, dout, out=out, lse=lse, **kw)
    assert r2(attnv.Kernel(kernels.numpy_attention, backward=checks))["verdict"] == "PASS"
    assert seen and all(seen), seen

    # Without the lse claim the backward gets lse=None, and the forward is not asked for one.
    nones = []

    def no_lse(q, k, v, dout, *, lse, **kw):
        nones.append(lse is None)
        return kernels.numpy_backward(q, k, v, dout, lse=lse, **kw)
    claims = dict(CLAIMS, lse=False)
    forward_only_out = lambda q, k, v, **kw: kernels.numpy_attention(q, k, v, **kw)[0]  # noqa: E731
    assert r2(attnv.Kernel(forward_only_out, backward=no_lse), claims=claims)["verdict"] == "PASS"
    assert nones and all(nones)


def test_jobs_do_not_change_the_certificate():
    # Requirement x dtype jobs on two threads (the functions still called one at a time) give the
    # results of one thread, findings included.
    def key(cert):
        return [(r["id"], r["dtype"], r["verdict"], r["cases"], r["exercised"], r["worst_ratio"],
                 [f["message"] for f in r["findings"]]) for r in cert.results]
    for kernel in (kernels.NUMPY_KERNEL, kernels.NUMPY_DK_NO_SCALE):
        one, two = (attnv.certify(kernel, claims=CLAIMS, dtypes=["f32", "f64"], only=["R1", "R2", "R8"], jobs=j)
                    for j in (1, 2))
        assert key(one) == key(two)


def test_backward_writing_its_gradients_in_place():
    def forward(q, k, v, *, out, lse, **kw):
        out[...], lse[...] = kernels.numpy_attention(q, k, v, **kw)

    def backward(q, k, v, dout, *, dq, dk, dv, dsinks=None, **kw):
        grads = kernels.numpy_backward(q, k, v, dout, **kw)
        for buf, g in zip((dq, dk, dv, dsinks), grads):
            buf[...] = g
    r = r2(attnv.Kernel(forward, backward=backward, writes_outputs=True))
    assert r["verdict"] == "PASS", r["text"]

    def forgets_dv(q, k, v, dout, *, dq, dk, dv, dsinks=None, **kw):
        grads = kernels.numpy_backward(q, k, v, dout, **kw)
        dq[...], dk[...] = grads[0], grads[1]
        if dsinks is not None:
            dsinks[...] = grads[3]
    f = r2(attnv.Kernel(forward, backward=forgets_dv, writes_outputs=True))["findings"][0]
    assert f["kind"] == "missing_output" and "of its dv buffer unwritten" in f["message"], f
