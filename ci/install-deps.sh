#!/usr/bin/env bash
# Installs the Debian packages attnv builds and tests with. Idempotent: installs only what is
# missing. As root it runs apt-get; otherwise it prints the exact command to run.
set -euo pipefail

packages=(
  cmake ninja-build g++ pkg-config
  libboost-dev libmpfr-dev libgmp-dev
  libgtest-dev libgmock-dev librapidcheck-dev libbenchmark-dev
  libcli11-dev nlohmann-json3-dev libfmt-dev libeigen3-dev
  clang libclang-rt-14-dev llvm   # libFuzzer builds (fuzz preset), llvm-symbolizer
  zip                             # fuzz/oss-fuzz/build.sh: seed corpora as OSS-Fuzz wants them
  python3-numpy                   # examples/numpy (the cases_numpy_example test)
  python3-jsonschema chromium      # report tests: the certificate schema, the HTML page rendered headless
)

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
echo "install-deps: installing ${missing[*]}"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
