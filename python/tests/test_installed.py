"""The module installed the two ways a user installs it, each imported from another directory and
running the README's snippets: `cmake --install` (the python component) into a scratch prefix, and
`pip install --no-build-isolation` from a clean clone (its committed HEAD) into a virtual
environment that sees Debian's packages (numpy, torch, pytest), offline."""
import os
import subprocess
import sys

from test_readme_snippets import run_readme

BUILD = os.environ.get("ATTNV_BUILD_DIR", "")
SOURCE = os.environ.get("ATTNV_SOURCE_DIR", "")


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env.update(extra)
    return env


def test_cmake_install(tmp_path):
    prefix = tmp_path / "prefix"
    subprocess.run(["cmake", "--install", BUILD, "--prefix", str(prefix), "--component", "python"], check=True,
                   capture_output=True)
    site = prefix / os.environ["ATTNV_PYTHON_INSTALL_DIR"]
    assert (site / "attnv" / "__init__.py").is_file() and list((site / "attnv").glob("_attnv*.so")), site
    out = run_readme(sys.executable, tmp_path / "elsewhere", clean_env(PYTHONPATH=str(site)))
    assert f"attnv from {site}" in out, out


def test_pip_install_from_a_clean_clone(tmp_path):
    clone, venv = tmp_path / "clone", tmp_path / "venv"
    subprocess.run(["git", "clone", "--quiet", SOURCE, str(clone)], check=True)
    # --without-pip: Debian's pip (python3-pip) is seen through the system site packages.
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    p = subprocess.run([python, "-m", "pip", "install", "--no-build-isolation", "--no-index", str(clone)],
                       capture_output=True, text=True, env=clean_env(ATTNV_BUILD_JOBS="2"))
    assert p.returncode == 0, p.stdout[-5000:] + p.stderr[-5000:]
    out = run_readme(python, tmp_path / "elsewhere", clean_env(), readme=str(clone / "README.md"))
    assert f"attnv from {venv}" in out, out
