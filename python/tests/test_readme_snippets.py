"""Every Python snippet of the top-level README runs as written: in order, as one file, from a
directory outside the repository, under pytest (so the pytest snippet's tests run too)."""
import os
import re
import subprocess
import sys

README = os.path.join(os.path.dirname(__file__), "..", "..", "README.md")


def snippets(readme=README):
    with open(readme, encoding="utf-8") as f:
        return re.findall(r"^```python\n(.*?)^```", f.read(), flags=re.S | re.M)


def run_readme(python, folder, env, readme=README):
    """Runs the README's snippets with `python` in `folder`; returns what it printed."""
    code = snippets(readme)
    assert len(code) >= 3, "the README's Python snippets went missing"
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "test_readme.py"), "w", encoding="utf-8") as f:
        f.write("\n".join(code))
        # Which attnv ran: the one the caller meant to test.
        f.write("\nprint('attnv from', attnv.__file__)\n")
    p = subprocess.run([python, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", "test_readme.py"],
                       cwd=folder, capture_output=True, text=True, env=env)
    out = p.stdout + p.stderr
    print(out)
    assert p.returncode == 0, out
    # The README says what each certify prints; hold it to that.
    assert out.count("CERTIFIED: ") >= 2 and "NOT CERTIFIED" not in out, out
    assert re.search(r"\d+ passed", out), out
    return out


def test_readme_python_snippets_run(tmp_path):
    # Only the module on the path (no tests/ helpers), run from the temporary directory.
    env = dict(os.environ, PYTHONPATH=os.environ["ATTNV_MODULE_DIR"])
    out = run_readme(sys.executable, tmp_path, env)
    assert "attnv from " + os.environ["ATTNV_MODULE_DIR"] in out, out
