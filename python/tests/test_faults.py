"""What a Python kernel does wrong is a finding, never a crash of attnv."""
import numpy as np
import pytest

import attnv
import kernels

ONLY = ["R1"]


def certify(fn, **kw):
    return attnv.certify(fn, claims=kernels.ALL_FORWARD, dtypes=["f32"], only=ONLY, **kw)


def finding(cert):
    r = cert.result("R1", "f32")
    assert r["verdict"] == "FAIL", r["text"]
    return r["findings"][0]


def test_exception_is_crashed():
    def raises(q, k, v, **_):
        raise ValueError("shapes do not broadcast")
    f = finding(certify(raises))
    assert f["kind"] == "crashed"
    assert "raised ValueError: shapes do not broadcast" in f["message"], f
    # The finding carries the whole traceback, down to the line that raised.
    tb = f["traceback"]
    assert tb.startswith("Traceback (most recent call last):") and 'in raises' in tb, tb
    assert 'raise ValueError("shapes do not broadcast")' in tb and tb.rstrip().endswith("shapes do not broadcast"), tb


def test_unsupported_is_refused():
    def declines(q, k, v, **_):
        raise attnv.Unsupported("no window support")
    f = finding(certify(declines))
    assert f["kind"] == "refused" and "Unsupported: no window support" in f["message"], f

    def not_impl(q, k, v, **_):
        raise NotImplementedError
    assert finding(certify(not_impl))["kind"] == "refused"


def test_wrong_shape_dtype_type_are_missing_output():
    def transposed(q, k, v, **kw):
        out, lse = kernels.numpy_attention(q, k, v, **kw)
        return out.transpose(0, 2, 1, 3), lse
    f = finding(certify(transposed))
    assert f["kind"] == "missing_output"
    assert "returned out of shape [" in f["message"] and ", expected [" in f["message"], f

    def float64(q, k, v, **kw):
        out, lse = kernels.numpy_attention(q, k, v, **kw)
        return out.astype(np.float64), lse
    f = finding(certify(float64))
    assert f["kind"] == "missing_output" and "as float64, expected float32" in f["message"], f

    def no_lse(q, k, v, **kw):
        return kernels.numpy_attention(q, k, v, **kw)[0]
    f = finding(certify(no_lse))
    assert f["kind"] == "missing_output" and "no lse" in f["message"], f

    def a_string(q, k, v, **_):
        return "out"
    f = finding(certify(a_string))
    assert f["kind"] == "missing_output" and "returned out as str" in f["message"], f

    # A signature that cannot take the call is a usage error before any case (test_usage.py).
    def wrong_signature(q, k):
        return q
    with pytest.raises(TypeError, match="must take q, k, v positionally"):
        certify(wrong_signature)


def test_bad_arguments_are_python_errors():
    with pytest.raises(TypeError):
        attnv.certify(42, claims=kernels.ALL_FORWARD, dtypes=["f32"])
    with pytest.raises(ValueError, match="not a dtype"):
        attnv.certify(kernels.numpy_attention, claims=kernels.ALL_FORWARD, dtypes=["f8"])
    with pytest.raises(ValueError, match="which dtypes"):
        attnv.certify(kernels.numpy_attention, claims=kernels.ALL_FORWARD)


def test_storage_dtypes_reach_the_function():
    # f16 as float16; bf16 as float32 holding bf16 values (NumPy has no bfloat16), answered in float32.
    seen = {}

    def records(q, k, v, *, dtype, **kw):
        seen.setdefault(dtype, set()).add(str(q.dtype))
        if dtype == "bf16":
            assert np.all(q.astype(np.float32).view(np.uint32) & 0xFFFF == 0), "bf16 values must be exact"
        return kernels.numpy_attention(q, k, v, dtype=dtype, **kw)

    cert = attnv.certify(records, claims=kernels.ALL_FORWARD, dtypes=["f16", "bf16"], only=["R8"])
    assert cert.certified, cert.table()
    assert seen == {"f16": {"float16"}, "bf16": {"float32"}}, seen


def test_write_into_input_is_input_written():
    def scribbles(q, k, v, **kw):
        out = kernels.numpy_attention(q, k, v, **kw)
        k[...] = 0  # after computing: the answer is right, the input is not
        return out
    cert = certify(scribbles)
    r = cert.result("R14", "f32") if any(x["id"] == "R14" for x in cert.results) else None
    assert r is None  # only R1 ran: the write is R1's finding there
    f = finding(cert)
    assert f["kind"] == "input_written" and "wrote into its input k" in f["message"], f
    r14 = attnv.certify(scribbles, claims=kernels.ALL_FORWARD, dtypes=["f32"], only=["R14"]).result("R14", "f32")
    assert r14["verdict"] == "FAIL" and r14["findings"][0]["kind"] == "input_written", r14["text"]


def test_keyboard_interrupt_stops_the_run():
    # Ctrl-C inside the function is the user stopping attnv, not a finding against the kernel.
    calls = []

    def interrupted(q, k, v, **_):
        calls.append(1)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        certify(interrupted)
    assert len(calls) == 1


def test_a_returned_nan_is_never_taken_for_unwritten():
    # NaN with the bits of attnv's "never written" marker (f32 0x7FC0A77E) where the exact O is
    # 0 (rows with no visible key): the kernel returned it, so it is a non-finite answer, judged
    # as such, never "left elements unwritten".
    marker = np.array([0x7FC0A77E], dtype=np.uint32).view(np.float32)[0]

    def marker_nan(q, k, v, **kw):
        out, lse = kernels.numpy_attention(q, k, v, **kw)
        out[~np.isfinite(lse)] = marker
        return out, lse
    r = attnv.certify(marker_nan, claims=kernels.ALL_FORWARD, dtypes=["f32"], only=["R7"]).result("R7", "f32")
    assert r["verdict"] == "FAIL", r["text"]
    f = r["findings"][0]
    assert f["kind"] == "non_finite" and "unwritten" not in f["message"], f


def test_reading_or_writing_past_an_input_is_seen():
    # The inputs sit between guards of NaN: a kernel that reads one key row past the end of k (as
    # a C kernel handed k.ctypes.data with an off-by-one would) reads NaN, every run, and its
    # answer shows it as non-finite; one that writes past the end of v is out_of_bounds.
    def reads_past_k(q, k, v, **kw):
        B, H, T, D = k.shape
        shifted = np.lib.stride_tricks.as_strided(k, shape=(B, H, T + 1, D), strides=k.strides)
        if B * H == 1:  # one [T, D] block: the row after the last is the guard
            k = shifted[:, :, 1:]
        return kernels.numpy_attention(q, k, v, **kw)
    first = attnv.certify(reads_past_k, claims=kernels.ALL_FORWARD, dtypes=["f32"], only=["R1"])
    again = attnv.certify(reads_past_k, claims=kernels.ALL_FORWARD, dtypes=["f32"], only=["R1"])
    f = first.result("R1", "f32")["findings"][0]
    assert f["kind"] == "non_finite", f
    assert [x["message"] for x in first.findings] == [x["message"] for x in again.findings]

    def writes_past_v(q, k, v, **kw):
        out = kernels.numpy_attention(q, k, v, **kw)
        flat = np.lib.stride_tricks.as_strided(v, shape=(v.size + 1,), strides=(v.itemsize,))
        flat[-1] = 0.0  # the element after v
        return out
    f = finding(certify(writes_past_v))
    assert f["kind"] == "out_of_bounds" and "wrote outside its v" in f["message"], f


def test_outputs_written_in_place():
    # writes_outputs=True: the function fills out= and lse= that attnv allocates (between guards,
    # every element attnv's "never written" NaN), as a C kernel called through ctypes would.
    def into(q, k, v, *, out, lse, **kw):
        o, l = kernels.numpy_attention(q, k, v, **kw)
        out[...] = o
        lse[...] = l
    ok = attnv.certify(attnv.Kernel(into, writes_outputs=True), claims=kernels.ALL_FORWARD, dtypes=["f32", "bf16"],
                       only=["R1", "R7"])
    assert ok.certified, ok.table()

    def skips_empty_rows(q, k, v, *, out, lse, **kw):
        o, l = kernels.numpy_attention(q, k, v, **kw)
        seen = np.isfinite(l)
        out[seen] = o[seen]  # rows with no visible key left as they were
        lse[...] = l
    f = attnv.certify(attnv.Kernel(skips_empty_rows, writes_outputs=True), claims=kernels.ALL_FORWARD, dtypes=["f32"],
                      only=["R7"]).result("R7", "f32")["findings"][0]
    assert f["kind"] == "missing_output" and "of its out buffer unwritten (the first: out[" in f["message"], f

    def past_out(q, k, v, *, out, lse, **kw):
        into(q, k, v, out=out, lse=lse, **kw)
        flat = np.lib.stride_tricks.as_strided(out, shape=(out.size + 1,), strides=(out.itemsize,))
        flat[-1] = 1.0
    f = finding(certify(attnv.Kernel(past_out, writes_outputs=True)))
    assert f["kind"] == "out_of_bounds" and "wrote outside its out" in f["message"], f

    # Without the LSE claim the function still gets lse=, as None.
    def out_only(q, k, v, *, out, lse, **kw):
        assert lse is None
        out[...] = kernels.numpy_attention(q, k, v, **kw)[0]
    plain = attnv.certify(attnv.Kernel(out_only, writes_outputs=True), claims=dict(kernels.ALL_FORWARD, lse=False),
                          dtypes=["f32"], only=["R1"])
    assert plain.certified, plain.table()

    # A function that cannot take the buffers is a usage error before the run.
    with pytest.raises(TypeError, match=r"keyword\(s\) out, lse"):
        certify(attnv.Kernel(lambda q, k, v, *, mask, bias, kv_len, scale, softcap, causal, alignment, window, dtype: None,
                             writes_outputs=True))
