"""claims= and precision= as the claims file reads them: the same models, the same clear errors."""
import json

import attnv
import kernels


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


def test_sinks_are_passed_when_claimed():
    # With "sinks": true a case may carry sinks=[Hq]; the NumPy kernel puts them in the softmax
    # and passes R1, and the same kernel ignoring them fails it.
    claims = dict(kernels.ALL_FORWARD, sinks=True)
    cert = attnv.certify(kernels.numpy_attention, claims=claims, dtypes=["f32"], only=["R1"])
    assert cert.result("R1", "f32")["verdict"] == "PASS"

    def ignores_sinks(q, k, v, *, sinks=None, **kw):
        return kernels.numpy_attention(q, k, v, **kw)

    cert = attnv.certify(ignores_sinks, claims=claims, dtypes=["f32"], only=["R1"])
    assert cert.result("R1", "f32")["verdict"] == "FAIL"


def test_alibi_is_passed_when_claimed():
    # With "alibi": true a case may carry alibi=[Hq]; the NumPy kernel adds -m_h |j - p_i| and
    # passes R1, and the same kernel ignoring the slopes fails it.
    claims = dict(kernels.ALL_FORWARD, alibi=True)
    cert = attnv.certify(kernels.numpy_attention, claims=claims, dtypes=["f32"], only=["R1"])
    assert cert.result("R1", "f32")["verdict"] == "PASS"

    def ignores_alibi(q, k, v, *, alibi=None, **kw):
        return kernels.numpy_attention(q, k, v, **kw)

    cert = attnv.certify(ignores_alibi, claims=claims, dtypes=["f32"], only=["R1"])
    assert cert.result("R1", "f32")["verdict"] == "FAIL"
