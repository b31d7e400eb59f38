"""supports(problem, op): a Python kernel declines a problem honestly, with the plugin ABI's rules
(docs/semantics.md, "Declined problems")."""
import attnv
import kernels

ONLY = ["R1"]


def certify(kernel, only=ONLY, claims=kernels.ALL_FORWARD):
    return attnv.certify(kernel, claims=claims, dtypes=["f32"], only=only)


def test_declined_cases_are_counted_and_listed():
    asked = []

    def small_heads(problem, op):
        asked.append((op, problem["Dk"]))
        return True if problem["Dk"] <= 64 else f"Dk = {problem['Dk']}: only up to 64 is compiled"
    cert = certify(attnv.Kernel(kernels.numpy_attention, supports=small_heads))
    r = cert.result("R1", "f32")
    assert r["cases_not_supported"] > 0 and "only up to 64 is compiled" in r["note"], r
    assert r["verdict"] == "PASS", r["text"]  # the judged cases still give the tier's evidence
    assert {op for op, _ in asked} == {"forward"}
    # Declined problems are never called.
    calls = []

    def counting(q, k, v, **kw):
        calls.append(q.shape[-1])
        return kernels.numpy_attention(q, k, v, **kw)
    certify(attnv.Kernel(counting, supports=small_heads))
    assert calls and max(calls) <= 64


def test_declining_a_claim_wholesale_is_not_certified():
    def no_window(problem, op):
        return "no sliding window" if problem["window"] != (-1, -1) else True
    cert = certify(attnv.Kernel(kernels.numpy_attention, supports=no_window), only=["R1", "R5"])
    assert not cert.certified, cert.table()
    assert "window" in cert.table()
    # The same kernel not claiming the window is certified on the same requirements.
    ok = certify(attnv.Kernel(kernels.numpy_attention, supports=no_window), only=["R1", "R5"],
                 claims=dict(kernels.ALL_FORWARD, window=False))
    assert ok.certified, ok.table()


def test_everything_declined_is_not_supported():
    cert = certify(attnv.Kernel(kernels.numpy_attention, supports=lambda p, op: False))
    r = cert.result("R1", "f32")
    assert r["verdict"] == "NOT SUPPORTED" and "supports() gave no reason" in r["note"], r
    assert not cert.certified


def test_a_bad_answer_or_an_exception_is_the_kernels_failure():
    f = certify(attnv.Kernel(kernels.numpy_attention, supports=lambda p, op: 1)).result("R1", "f32")
    assert f["verdict"] == "FAIL" and "expected True, False or a reason" in f["findings"][0]["message"], f["text"]

    def broken(problem, op):
        return problem["no_such_key"]
    f = certify(attnv.Kernel(kernels.numpy_attention, supports=broken)).result("R1", "f32")
    assert f["verdict"] == "FAIL" and "supports raised KeyError" in f["findings"][0]["message"], f["text"]
    assert "in broken" in f["findings"][0]["traceback"]


def test_the_backward_is_asked_about_too():
    ops = set()

    def no_backward_past_32(problem, op):
        ops.add(op)
        return op != "backward" or problem["Tk"] <= 32 or "backward: Tk > 32 not compiled"
    claims = dict(kernels.ALL_FORWARD, backward=True)
    cert = certify(attnv.Kernel(kernels.numpy_attention, backward=kernels.numpy_backward, supports=no_backward_past_32),
                   only=["R2"], claims=claims)
    r = cert.result("R2", "f32")
    assert ops == {"forward", "backward"}, ops
    assert r["cases_not_supported"] > 0 and "Tk > 32" in r["note"], r
