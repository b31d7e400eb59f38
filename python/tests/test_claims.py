"""claims= and precision= as the claims file reads them: the same models, the same clear errors."""
import json

import attnv
import numpy as np
import kernels


def test_precision_and_bad_claims():
    # A precision model is taken from precision= (here a blocked one; the kernel still passes).
    cert = attnv.certify(kernels.numpy_attention, claims=kernels.ALL_FORWARD, dtypes=["f32"],
                         precision={"f32": {"accum": "f32", "block": 64}}, only=["R1"])
    assert cert.result("R1", "f32")["verdict"] == "PASS"
    json.loads(cert.to_json())
    # flush_subnormals (reference/bound/BOUND.md section 12) reaches the certificate's model.
    flushed = attnv.certify(kernels.numpy_attention, claims=kernels.ALL_FORWARD, dtypes=["f32"],
                            precision={"f32": {"flush_subnormals": True}}, only=["R1"])
    assert flushed.result("R1", "f32")["verdict"] == "PASS"
    models = json.loads(flushed.to_json())["kernel"]["precision"]
    assert [m["flush_subnormals"] for m in models] == [True], models
    assert json.loads(cert.to_json())["kernel"]["precision"][0]["flush_subnormals"] is False
    # Claims with a capability left out: the claims file's error, naming what is missing.
    partial = dict(kernels.ALL_FORWARD)
    del partial["softcap"]
    try:
        attnv.certify(kernels.numpy_attention, claims=partial, dtypes=["f32"], only=["R1"])
    except ValueError as e:
        assert "missing: softcap" in str(e), e
    else:
        raise AssertionError("claims without softcap were accepted")
    for bad, words in [({**kernels.ALL_FORWARD, "gqa": "yes"}, "expected true or false")]:
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

    # The per-head inputs are inputs like q: a kernel scaling the slopes in place (after using
    # them) is input_written, named, though its outputs are right.
    def scales_slopes_in_place(q, k, v, *, alibi=None, **kw):
        out = kernels.numpy_attention(q, k, v, alibi=alibi, **kw)
        if alibi is not None:
            alibi *= 2
        return out

    r = attnv.certify(scales_slopes_in_place, claims=claims, dtypes=["f32"], only=["R1"]).result("R1", "f32")
    assert r["verdict"] == "FAIL" and r["findings"][0]["kind"] == "input_written", r["text"]
    assert "wrote into its input alibi" in r["findings"][0]["message"], r["text"]


def test_packed_sequences_are_passed_when_claimed():
    # With "varlen": true a case may be packed (B = 1): cu_seqlens_q and cu_seqlens_k, int64
    # [S+1], come with it. The NumPy kernel keeps each query to its own sequence, aligned per
    # sequence, and passes R1 with packed cases judged; aligned by the packed corner instead, or
    # ignoring the bounds (one long sequence), it fails R1.
    claims = dict(kernels.ALL_FORWARD, varlen=True, alibi=True)
    seen = []

    def recording(q, k, v, *, cu_seqlens_q=None, cu_seqlens_k=None, **kw):
        if cu_seqlens_q is not None:
            assert cu_seqlens_q.dtype == np.int64 and cu_seqlens_k.dtype == np.int64
            assert cu_seqlens_q[0] == 0 and cu_seqlens_q[-1] == q.shape[2] and cu_seqlens_k[-1] == k.shape[2]
            assert q.shape[0] == 1 and len(cu_seqlens_q) == len(cu_seqlens_k)
            seen.append(len(cu_seqlens_q) - 1)
        return kernels.numpy_attention(q, k, v, cu_seqlens_q=cu_seqlens_q, cu_seqlens_k=cu_seqlens_k, **kw)

    cert = attnv.certify(recording, claims=claims, dtypes=["f32"], only=["R1"])
    assert cert.result("R1", "f32")["verdict"] == "PASS"
    assert len(seen) > 10, seen

    def global_alignment(q, k, v, **kw):
        return kernels.numpy_attention(q, k, v, bug="varlen_global_alignment", **kw)

    cert = attnv.certify(global_alignment, claims=claims, dtypes=["f32"], only=["R1"])
    assert cert.result("R1", "f32")["verdict"] == "FAIL"

    def ignores_bounds(q, k, v, *, cu_seqlens_q=None, cu_seqlens_k=None, **kw):
        return kernels.numpy_attention(q, k, v, **kw)

    cert = attnv.certify(ignores_bounds, claims=claims, dtypes=["f32"], only=["R1"])
    assert cert.result("R1", "f32")["verdict"] == "FAIL"

    # The bounds are inputs like kv_len: writing into them is input_written, named.
    def scribbles_bounds(q, k, v, *, cu_seqlens_q=None, **kw):
        out = kernels.numpy_attention(q, k, v, cu_seqlens_q=cu_seqlens_q, **kw)
        if cu_seqlens_q is not None:
            cu_seqlens_q[-1] += 1
        return out

    r = attnv.certify(scribbles_bounds, claims=claims, dtypes=["f32"], only=["R1"]).result("R1", "f32")
    assert r["verdict"] == "FAIL" and r["findings"][0]["kind"] == "input_written", r["text"]
    assert "wrote into its input cu_seqlens_q" in r["findings"][0]["message"], r["text"]


def test_per_sequence_key_lengths_are_passed_only_when_claimed():
    # With "varlen_kv_len": true a packed case may carry kv_len [S] (FlashAttention's seqused_k):
    # sequence s uses its first kv_len[s] keys. The NumPy kernel passes R1 with such cases
    # judged; aligning bottom-right to the sequence's stored keys instead fails it. A function
    # claiming "varlen" and "kv_len" but not the two together is never given kv_len with bounds.
    claims = dict(kernels.ALL_FORWARD, varlen=True, varlen_kv_len=True)
    seen = []

    def recording(q, k, v, *, kv_len=None, cu_seqlens_q=None, cu_seqlens_k=None, **kw):
        if cu_seqlens_q is not None and kv_len is not None:
            S = len(cu_seqlens_q) - 1
            assert kv_len.dtype == np.int64 and kv_len.shape == (S,), kv_len.shape
            assert all(0 <= kv_len[s] <= cu_seqlens_k[s + 1] - cu_seqlens_k[s] for s in range(S))
            seen.append(S)
        return kernels.numpy_attention(q, k, v, kv_len=kv_len, cu_seqlens_q=cu_seqlens_q,
                                       cu_seqlens_k=cu_seqlens_k, **kw)

    cert = attnv.certify(recording, claims=claims, dtypes=["f32"], only=["R1"])
    assert cert.result("R1", "f32")["verdict"] == "PASS"
    assert len(seen) > 5, seen

    def stored_keys(q, k, v, **kw):
        return kernels.numpy_attention(q, k, v, bug="seqused_aligned_to_stored_keys", **kw)

    cert = attnv.certify(stored_keys, claims=claims, dtypes=["f32"], only=["R1"])
    assert cert.result("R1", "f32")["verdict"] == "FAIL"

    older = dict(kernels.ALL_FORWARD, varlen=True)
    both = []

    def never_both(q, k, v, *, kv_len=None, cu_seqlens_q=None, **kw):
        both.append(kv_len is not None and cu_seqlens_q is not None)
        return kernels.numpy_attention(q, k, v, kv_len=kv_len, cu_seqlens_q=cu_seqlens_q, **kw)

    cert = attnv.certify(never_both, claims=older, dtypes=["f32"], only=["R1"])
    assert cert.result("R1", "f32")["verdict"] == "PASS"
    assert len(both) > 50 and not any(both)
