"""Python kernels with a decode (contiguous and paged KV caches): judged by R21 like a plugin's,
the correct one certified, planted cache bugs caught, wrong writes named."""
import attnv
import kernels


def r21(kernel, claims=kernels.DECODE_CLAIMS, dtype="f32"):
    return attnv.certify(kernel, claims=claims, dtypes=[dtype], only=["R21"]).result("R21", dtype)


def with_bug(bug):
    return attnv.Kernel(kernels.numpy_attention, name=f"numpy_decode_{bug}",
                        decode=lambda *a, **kw: kernels.numpy_decode(*a, bug=bug, **kw))


def test_numpy_decoder_passes_r21():
    for dtype in ("f32", "f64"):
        r = r21(kernels.NUMPY_DECODER, dtype=dtype)
        assert r["verdict"] == "PASS", r["text"]
        assert r["exercised"] >= r["min_exercised"] > 0, r


def test_planted_cache_bugs_fail_r21():
    r = r21(with_bug("no_append"))
    assert r["verdict"] == "FAIL", r["text"]
    # Block table row 0 for every sequence: only the paged run can see it.
    r = r21(with_bug("table_row0"))
    assert r["verdict"] == "FAIL" and "paged" in r["text"], r["text"]
    assert r21(with_bug("table_row0"), claims=dict(kernels.DECODE_CLAIMS, paged_kv=False))["verdict"] == "PASS"


def test_decode_faults_are_findings():
    def writes_q(q, *args, **kw):
        out = kernels.numpy_decode(q, *args, **kw)
        q[...] = 0
        return out
    f = r21(attnv.Kernel(kernels.numpy_attention, decode=writes_q))["findings"][0]
    assert f["kind"] == "input_written" and "wrote into its input q" in f["message"], f

    def raises(*args, **kw):
        raise IndexError("page out of range")
    f = r21(attnv.Kernel(kernels.numpy_attention, decode=raises))["findings"][0]
    assert f["kind"] == "crashed" and ".decode raised IndexError: page out of range" in f["message"], f


def test_decode_keywords():
    seen = {}

    def records(q, k_new, v_new, k_cache, v_cache, *, cache_len, block_table, **kw):
        seen.setdefault("paged", set()).add(block_table is not None)
        seen.setdefault("cache_len", set()).add(str(cache_len.dtype))
        return kernels.numpy_decode(q, k_new, v_new, k_cache, v_cache, cache_len=cache_len, block_table=block_table,
                                    **kw)
    assert r21(attnv.Kernel(kernels.numpy_attention, decode=records))["verdict"] == "PASS"
    assert seen == {"paged": {False, True}, "cache_len": {"int64"}}, seen


def test_decode_claim_needs_a_decode():
    import pytest
    with pytest.raises(TypeError, match=r'"decode" \(or "paged_kv"\) is claimed, but the kernel has no decode'):
        r21(kernels.numpy_attention)

    def too_few(q, k_new, v_new, **kw):
        raise AssertionError("called")
    with pytest.raises(TypeError, match="decode must take q, k_new, v_new, k_cache, v_cache positionally"):
        r21(attnv.Kernel(kernels.numpy_attention, decode=too_few))


def test_decode_writing_its_output_in_place():
    def forward(q, k, v, *, out, lse, **kw):
        out[...], lse[...] = kernels.numpy_attention(q, k, v, **kw)

    def decode(q, k_new, v_new, k_cache, v_cache, *, out, lse, **kw):
        out[...], lse[...] = kernels.numpy_decode(q, k_new, v_new, k_cache, v_cache, **kw)
    assert r21(attnv.Kernel(forward, decode=decode, writes_outputs=True))["verdict"] == "PASS"
