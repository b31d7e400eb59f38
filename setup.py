"""Builds the attnv Python package: setuptools drives CMake for the native part (attnv._attnv).

    pip install --no-build-isolation .            # from a clone, offline (pyproject.toml)

The extension is CMake's `attnv_python` target, built in release mode (unity build, no tests or
benchmarks) for the interpreter pip runs, then copied where setuptools packs it. ATTNV_BUILD_JOBS
sets the parallel jobs (default: the CPU count).
"""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


def version():
    m = re.search(r"project\(attnv VERSION ([0-9.]+)", (ROOT / "CMakeLists.txt").read_text())
    return m.group(1)


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        target = Path(self.get_ext_fullpath(ext.name)).resolve()
        build = Path(self.build_temp).resolve() / "cmake"
        configure = ["cmake", "-S", str(ROOT), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_UNITY_BUILD=ON",
                     "-DATTNV_BUILD_TESTS=OFF", "-DATTNV_BUILD_BENCH=OFF", f"-DPython3_EXECUTABLE={sys.executable}"]
        if shutil.which("ninja"):
            configure += ["-G", "Ninja"]
        subprocess.run(configure, check=True)
        jobs = os.environ.get("ATTNV_BUILD_JOBS", str(os.cpu_count() or 1))
        subprocess.run(["cmake", "--build", str(build), "--target", "attnv_python", "-j", jobs], check=True)
        built = sorted((build / "python" / "attnv").glob("_attnv*.so"))
        if len(built) != 1:
            raise RuntimeError(f"expected one _attnv module in {build / 'python' / 'attnv'}, found {built}")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built[0], target)


setup(
    version=version(),
    packages=["attnv"],
    package_dir={"attnv": "python/attnv"},
    ext_modules=[Extension("attnv._attnv", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    zip_safe=False,
)
