"""attnv.testing: one pytest test per requirement x dtype; skips for what is not a pass or a fail.

Runs an inner pytest session on a generated test file and checks its outcome counts, so the
helper is shown to pass, fail and skip as the verdicts say.
"""
import subprocess
import sys
import textwrap

INNER = textwrap.dedent('''
    import pytest
    import attnv, attnv.testing
    import kernels

    CLAIMS = dict(kernels.ALL_FORWARD, gqa=False)  # R10 not claimed: a skip
    GOOD = attnv.certify(kernels.numpy_attention, claims=CLAIMS, dtypes=["f32"], only=["R1", "R10", "R2"])
    BAD = attnv.certify(kernels.numpy_no_scale, claims=CLAIMS, dtypes=["f32"], only=["R1"])

    @pytest.mark.parametrize("result", attnv.testing.cases(GOOD))
    def test_good(result):
        attnv.testing.check(result)

    @pytest.mark.parametrize("result", attnv.pytest_cases(BAD))
    def test_bad(result):
        attnv.testing.check(result)
''')


def test_helper_outcomes(tmp_path):
    (tmp_path / "test_inner.py").write_text(INNER)
    p = subprocess.run([sys.executable, "-m", "pytest", "-rA", "-p", "no:cacheprovider", str(tmp_path / "test_inner.py")],
                       capture_output=True, text=True)
    print(p.stdout, p.stderr)
    out = p.stdout
    assert "1 failed, 1 passed, 2 skipped" in out, out
    assert "PASSED" in out and "test_good[R1-matches_reference-f32]" in out
    assert "SKIPPED" in out and "R10 gqa_repeat_interleave [f32] not claimed" in out
    assert "FAILED" in out and "test_bad[R1-matches_reference-f32]" in out
    assert "attnv.certify(numpy_no_scale, claims, suite='quick', dtypes=['f32'], seed=20261121, only=['R1'])" in out


LAZY = textwrap.dedent('''
    import os
    import pytest
    import attnv, attnv.testing
    import kernels

    def marked(q, k, v, **kw):
        open(os.environ["ATTNV_MARK"], "a").write("called\\n")
        return kernels.numpy_attention(q, k, v, **kw)

    SUITE = attnv.testing.lazy(marked, claims=kernels.ALL_FORWARD, dtypes=["f32"], only=["R1", "R8", "R10"])

    @pytest.mark.parametrize("result", attnv.testing.cases(SUITE))
    def test_attention(result):
        attnv.testing.check(result)

    def test_certified_once():
        assert SUITE.runs == 1
''')


def test_lazy_certifies_on_first_use_once(tmp_path):
    (tmp_path / "test_lazy.py").write_text(LAZY)
    mark = tmp_path / "mark"
    env = dict(__import__("os").environ, ATTNV_MARK=str(mark))

    def pytest_run(*args):
        p = subprocess.run([sys.executable, "-m", "pytest", "-rA", "-p", "no:cacheprovider", str(tmp_path / "test_lazy.py"),
                            *args], capture_output=True, text=True, env=env)
        return p.stdout + p.stderr

    # Collection names every requirement x dtype and calls nothing.
    out = pytest_run("--collect-only", "-q")
    for rid in ("R1-matches_reference-f32", "R8-query_permutation-f32", "R10-gqa_repeat_interleave-f32"):
        assert f"test_attention[{rid}]" in out, out
    assert not mark.exists(), "collection certified"
    # -k that selects none of the parametrized tests calls nothing either.
    out = pytest_run("-k", "nothing_matches")
    assert not mark.exists() and "deselected" in out, out
    # A run certifies once for all of them.
    out = pytest_run()
    assert "4 passed" in out, out
    assert mark.exists()
