"""What cannot work at all is a Python error before any case runs, not a finding."""
import pytest

import attnv
import kernels


def certify(kernel, claims=kernels.ALL_FORWARD):
    return attnv.certify(kernel, claims=claims, dtypes=["f32"], only=["R1"])


def never_called(*a, **kw):
    raise AssertionError("called")


def test_signature_that_cannot_take_the_claims():
    def positional_only_two(q, k):
        return q
    with pytest.raises(TypeError, match="must take q, k, v positionally"):
        certify(positional_only_two)

    def no_kwargs(q, k, v, *, mask, bias, kv_len, scale, softcap, causal, alignment, window, dtype):
        raise AssertionError("called")
    certify_fn = no_kwargs  # takes every forward keyword: fine without the sinks claim
    with pytest.raises(TypeError, match=r"does not accept the keyword\(s\) sinks"):
        certify(certify_fn, claims=dict(kernels.ALL_FORWARD, sinks=True))
    with pytest.raises(TypeError, match=r"cu_seqlens_q, cu_seqlens_k"):
        certify(certify_fn, claims=dict(kernels.ALL_FORWARD, varlen=True))

    def needs_more(q, k, v, extra, **kw):
        raise AssertionError("called")
    with pytest.raises(TypeError, match="requires extra, which attnv never passes"):
        certify(needs_more)


def test_backward_claimed_without_a_backward():
    with pytest.raises(TypeError, match=r'"backward": true is claimed, but the kernel has no backward'):
        certify(kernels.numpy_attention, claims=dict(kernels.ALL_FORWARD, backward=True))

    def bad_backward(q, k, v):
        raise AssertionError("called")
    with pytest.raises(TypeError, match=r"\.backward must take q, k, v, dout positionally"):
        certify(attnv.Kernel(kernels.numpy_attention, backward=bad_backward),
                claims=dict(kernels.ALL_FORWARD, backward=True))


def test_unknown_claim_keys_get_a_suggestion():
    with pytest.raises(ValueError, match=r'"causal_topleft" is not a claim; did you mean "causal_top_left"\?'):
        certify(never_called, claims=dict(kernels.ALL_FORWARD, causal_topleft=True))
    with pytest.raises(ValueError, match=r'"wibble" is not a claim \(known: gqa, '):
        certify(never_called, claims=dict(kernels.ALL_FORWARD, wibble=True))


def test_kernel_parts():
    with pytest.raises(TypeError, match="backward must be callable"):
        attnv.Kernel(kernels.numpy_attention, backward=3)

    class NoForward:
        backward = staticmethod(kernels.numpy_backward)
    with pytest.raises(TypeError, match="expected a callable kernel or an object with a forward method"):
        certify(NoForward())
    assert "with backward" in repr(kernels.NUMPY_KERNEL)
