#!/usr/bin/env bash
# Installs the Debian packages attnv needs. Idempotent: installs only what is missing. As root it
# runs apt-get (quietly: one line per phase, the apt log only on failure); otherwise it prints
# the exact command to run.
#   ci/install-deps.sh          what the main job needs: build the `attnv` program and certify
#   ci/install-deps.sh --tests  that, plus what the test suite needs (ci/test.sh)
#   --list                      print the package names and install nothing
set -euo pipefail

tests=0
list=0
for arg in "$@"; do
  case $arg in
    --tests) tests=1 ;;
    --list) list=1 ;;
    *) echo "usage: ci/install-deps.sh [--tests] [--list]" >&2; exit 2 ;;
  esac
done

# The main job: configure and build the release preset (every library the `attnv` program links,
# and the headers CMake's find_package() looks for at configure time).
packages=(
  cmake ninja-build g++ pkg-config
  libboost-dev libmpfr-dev libgmp-dev
  libgtest-dev libgmock-dev librapidcheck-dev libbenchmark-dev
  libcli11-dev nlohmann-json3-dev libfmt-dev libeigen3-dev
)
if [ $tests -eq 1 ]; then
  packages+=(
    clang libclang-rt-14-dev llvm   # libFuzzer builds (fuzz preset), llvm-symbolizer
    zip                             # fuzz/oss-fuzz/build.sh: seed corpora as OSS-Fuzz wants them
    python3-numpy                   # examples/numpy (the cases_numpy_example test)
    python3-jsonschema chromium      # report tests: the certificate schema, the HTML page rendered headless
    pybind11-dev python3-dev         # the Python module (python/): built only when both are present
    python3-pytest python3-torch     # its tests: pytest in process, PyTorch's CPU attention certified
    python3-pip python3-setuptools python3-wheel git  # pip install --no-build-isolation . from a clone (python_installed)
  )
fi

if [ $list -eq 1 ]; then
  printf '%s\n' "${packages[@]}"
  exit 0
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

cmd="apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing packages: ${missing[*]}" >&2
  echo "install-deps: run as root:  $cmd" >&2
  exit 1
fi
echo "install-deps: installing ${#missing[@]} packages: ${missing[*]}"
# apt prints hundreds of lines per install; keep them in a log and show it only when apt fails.
log=$(mktemp "${TMPDIR:-/tmp}/attnv-install-deps.XXXXXX.log")
if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"; } > "$log" 2>&1; then
  cat "$log" >&2
  echo "install-deps: apt-get failed (log above, also in $log)" >&2
  exit 1
fi
rm -f "$log"
echo "install-deps: done"
