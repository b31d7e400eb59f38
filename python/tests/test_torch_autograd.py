"""attnv.torch.kernel: PyTorch's SDPA (math path, Debian's torch 1.13) certified forward and
backward, f32 and f64, quick tier, its backward derived through autograd. Every finding must be a
real deviation of torch, shown here by hand in float64."""
import numpy as np
import pytest
import torch

import attnv
import attnv.torch
import kernels

SDPA = attnv.torch.kernel(kernels.torch_sdpa)


@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_sdpa_forward_and_backward(dtype):
    cert = attnv.certify(SDPA, claims=kernels.SDPA_CLAIMS, dtypes=[dtype], suite="quick", max_findings=3)
    print(cert.table())
    verdicts = {r["id"]: r for r in cert.results}
    # The backward ran, and judged thousands of gradient elements.
    assert verdicts["R2"]["cases"] > 0 and verdicts["R2"]["exercised"] > 10000, verdicts["R2"]
    # Every finding is the NaN of a row with no visible key (torch's softmax of an all -inf row),
    # in O (R1, R3, R7, R17) and in the gradients (R2): nothing else.
    failed = {rid for rid, r in verdicts.items() if r["verdict"] == "FAIL"}
    assert failed == {"R1", "R2", "R3", "R7", "R17"}, cert.table()
    for rid in failed:
        for f in verdicts[rid]["findings"]:
            assert f["kind"] == "non_finite", f
    # What torch gets right is certified as such, the backward's metamorphic checks included.
    for rid in ("R4", "R5", "R8", "R9", "R10", "R12", "R13", "R14", "R16", "R22"):
        assert verdicts[rid]["verdict"] == "PASS", verdicts[rid]["text"]


def test_the_deviation_by_hand_in_float64():
    # One row of three keys, all hidden: docs/semantics.md says O = 0 (and dQ = dK = dV = 0);
    # torch's SDPA math path gives NaN in O and in every gradient.
    q = torch.ones(1, 1, 2, 4, dtype=torch.float64, requires_grad=True)
    k = torch.ones(1, 1, 3, 4, dtype=torch.float64, requires_grad=True)
    v = torch.ones(1, 1, 3, 4, dtype=torch.float64, requires_grad=True)
    hidden = torch.tensor([[0.0, 0.0, 0.0], [0.0, -np.inf, -np.inf]], dtype=torch.float64)
    hidden[0] = -np.inf  # row 0 sees nothing, row 1 sees key 0
    out, _ = torch._scaled_dot_product_attention_math(q, k, v, hidden[None, None], 0.0, False)
    assert torch.isnan(out[0, 0, 0]).all()           # exact value 0
    assert torch.equal(out[0, 0, 1], v[0, 0, 0])       # the visible row is right
    out.sum().backward()
    assert torch.isnan(q.grad[0, 0, 0]).all() and torch.isnan(k.grad).any() and torch.isnan(v.grad).any()


def test_bf16_reaches_torch_as_bfloat16():
    seen = set()

    def records(q, k, v, **kw):
        seen.add(q.dtype)
        return kernels.torch_sdpa(q, k, v, **kw)
    cert = attnv.certify(attnv.torch.kernel(records), claims=kernels.SDPA_CLAIMS, dtypes=["bf16", "f16"], only=["R8"])
    assert seen == {torch.bfloat16, torch.float16}, seen
    assert cert.result("R8", "bf16")["verdict"] == "PASS", cert.table()


def test_autograd_catches_a_planted_backward_bug():
    # A forward whose backward is wrong: v enters through a custom function whose gradient is
    # doubled. The forward passes R1; the backward fails R2.
    class DoubleGrad(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            return 2 * g

    def bad(q, k, v, **kw):
        return kernels.torch_sdpa_fixed(q, k, DoubleGrad.apply(v), **kw)
    cert = attnv.certify(attnv.torch.kernel(bad), claims=kernels.SDPA_CLAIMS, dtypes=["f64"], only=["R1", "R2"])
    assert cert.result("R1", "f64")["verdict"] == "PASS"
    r2 = cert.result("R2", "f64")
    assert r2["verdict"] == "FAIL" and r2["findings"][0]["kind"] == "outside_bound", r2["text"]
    assert "dv" in r2["findings"][0]["message"], r2["text"]


def test_sdpa_with_fully_masked_rows_fixed_is_certified():
    # The same SDPA with the deviation mended (rows with no visible key give O = 0, and zero
    # gradients) is certified forward and backward: the findings above were that one deviation.
    cert = attnv.certify(attnv.torch.kernel(kernels.torch_sdpa_fixed), claims=kernels.SDPA_CLAIMS, dtypes=["f64"],
                         suite="quick")
    assert cert.certified, cert.table()
    assert cert.result("R2", "f64")["verdict"] == "PASS"


def test_torch_decode_contiguous_and_paged():
    # A decode in torch ops: the caches come as tensors, appended in place, copied back for R21.
    # (Not bf16: torch 1.13's math path divides q and k by Dk^(1/4) in the storage dtype, a
    # rounding of the inputs no precision model declares, which R1 and R21 catch in bf16.)
    claims = dict(kernels.SDPA_CLAIMS, decode=True, paged_kv=True)
    kernel = attnv.torch.kernel(kernels.torch_sdpa_fixed, decode=kernels.torch_decode)
    cert = attnv.certify(kernel, claims=claims, dtypes=["f32", "f64"], only=["R21"])
    for dtype in ("f32", "f64"):
        assert cert.result("R21", dtype)["verdict"] == "PASS", cert.table()

    def forgets_v(q, k_new, v_new, k_cache, v_cache, **kw):
        return kernels.torch_decode(q, k_new, v_new, k_cache, v_cache.clone(), **kw)
    bad = attnv.torch.kernel(kernels.torch_sdpa_fixed, decode=forgets_v)
    r = attnv.certify(bad, claims=claims, dtypes=["f32"], only=["R21"]).result("R21", "f32")
    assert r["verdict"] == "FAIL", r["text"]


def test_arrays_torch_for_a_kernel_with_its_own_backward():
    # arrays="torch": a plain kernel written for torch tensors (no adapter), its own backward
    # called with tensors (here autograd by hand, with a planted factor on dk in the buggy one).
    def backward(q, k, v, dout, *, out, lse, factor=1.0, **kw):
        assert isinstance(dout, torch.Tensor) and isinstance(out, torch.Tensor) and lse is None
        q, k, v = (x.detach().requires_grad_() for x in (q, k, v))
        with torch.enable_grad():
            o = kernels.torch_sdpa_fixed(q, k, v, **kw)
            dq, dk, dv = torch.autograd.grad(o, (q, k, v), grad_outputs=dout)
        return dq, dk * factor, dv

    kernel = attnv.Kernel(kernels.torch_sdpa_fixed, backward=backward)
    cert = attnv.certify(kernel, claims=kernels.SDPA_CLAIMS, dtypes=["f64"], only=["R1", "R2"], arrays="torch")
    assert cert.certified, cert.table()
    bad = attnv.Kernel(kernels.torch_sdpa_fixed, backward=lambda *a, **kw: backward(*a, factor=2.0, **kw))
    r2 = attnv.certify(bad, claims=kernels.SDPA_CLAIMS, dtypes=["f64"], only=["R2"], arrays="torch").result("R2", "f64")
    assert r2["verdict"] == "FAIL" and "dk" in r2["findings"][0]["message"], r2["text"]
    with pytest.raises(ValueError, match='"numpy" or "torch"'):
        attnv.certify(kernel, claims=kernels.SDPA_CLAIMS, dtypes=["f64"], arrays="jax")


def test_a_plain_function_may_return_bf16_tensors():
    # NumPy arrays in, a torch bfloat16 tensor out: read as the bf16 values it holds.
    def returns_tensor(q, k, v, **kw):
        t = [torch.from_numpy(x).to(torch.bfloat16) for x in (q, k, v)]
        return kernels.torch_sdpa_fixed(*t, **{**kw, "kv_len": None if kw["kv_len"] is None
                                              else torch.from_numpy(kw["kv_len"]),
                                              "mask": None if kw["mask"] is None else torch.from_numpy(kw["mask"]),
                                              "bias": None if kw["bias"] is None
                                              else torch.from_numpy(kw["bias"]).to(torch.bfloat16)})
    claims = dict(kernels.SDPA_CLAIMS, backward=False)
    r = attnv.certify(returns_tensor, claims=claims, dtypes=["bf16"], only=["R8"]).result("R8", "bf16")
    assert r["verdict"] == "PASS", r["text"]
