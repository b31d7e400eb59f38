"""A Python kernel that claims "strided" gets q, k, v (and dout) as NumPy views with the case's
layout (BHTD, BTHD, gapped with NaN in the gaps), and R11 judges it: a kernel that reads the
memory as if it were dense (as a C kernel handed .ctypes.data would) is caught."""
import numpy as np

import attnv
import kernels

CLAIMS = dict(kernels.ALL_FORWARD, strided=True)


def as_dense(a):
    """The array's memory read as a dense C-ordered array of its shape: the bug of a kernel that
    takes a pointer and assumes contiguity."""
    dense = np.empty(a.shape, a.dtype).strides
    return np.lib.stride_tricks.as_strided(a, shape=a.shape, strides=dense)


def test_strided_views_reach_the_function_and_r11_passes():
    seen = set()

    def records(q, k, v, **kw):
        seen.add((q.flags.c_contiguous, k.flags.c_contiguous))
        return kernels.numpy_attention(q, k, v, **kw)
    cert = attnv.certify(records, claims=CLAIMS, dtypes=["f32"], only=["R11", "R1"])
    r11 = cert.result("R11", "f32")
    assert r11["verdict"] == "PASS" and r11["exercised"] > 0, r11["text"]
    assert cert.result("R1", "f32")["verdict"] == "PASS"
    assert (True, True) in seen and (False, False) in seen, seen


def test_a_kernel_assuming_dense_memory_fails_r11():
    def assumes_dense(q, k, v, **kw):
        return kernels.numpy_attention(as_dense(q), as_dense(k), as_dense(v), **kw)
    r = attnv.certify(assumes_dense, claims=CLAIMS, dtypes=["f32"], only=["R11"]).result("R11", "f32")
    assert r["verdict"] == "FAIL", r["text"]
    # Not claiming strided, the same kernel gets dense arrays: R11 is not claimed, R1 passes.
    plain = attnv.certify(assumes_dense, claims=kernels.ALL_FORWARD, dtypes=["f32"], only=["R11", "R1"])
    assert plain.result("R11", "f32")["verdict"] == "not claimed"
    assert plain.result("R1", "f32")["verdict"] == "PASS"


def test_backward_gets_strided_dout():
    seen = set()

    def backward(q, k, v, dout, **kw):
        seen.add(dout.flags.c_contiguous)
        return kernels.numpy_backward(q, k, v, dout, **kw)
    claims = dict(CLAIMS, backward=True)
    cert = attnv.certify(attnv.Kernel(kernels.numpy_attention, backward=backward), claims=claims, dtypes=["f64"],
                         only=["R11", "R2"])
    assert cert.result("R2", "f64")["verdict"] == "PASS" and cert.result("R11", "f64")["verdict"] == "PASS", cert.table()
    assert seen == {True, False}, seen
