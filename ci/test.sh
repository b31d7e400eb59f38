#!/usr/bin/env bash
# Sets up what is missing, builds, and runs the whole test suite with ctest:
#   1. release build, every test;
#   2. ASan + UBSan build, every test not labelled 'slow' or 'install' (sanitizers cost ~4x; the
#      slow ones re-run code that faster tests cover, see their CMakeLists comments).
# Usage: ci/test.sh [--no-asan]
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/install-deps.sh

asan=1
[ "${1:-}" = "--no-asan" ] && asan=0

run_preset() {
  local preset=$1; shift
  local t0=$SECONDS
  mkdir -p build
  cmake --preset "$preset" > "build/configure-$preset.log" 2>&1 || { cat "build/configure-$preset.log"; exit 1; }
  cmake --build --preset "$preset" -j 2 2>&1 | tail -n 3
  ctest --preset "$preset" "$@"
  echo "ci/test.sh: preset $preset took $((SECONDS - t0)) s"
}

run_preset release
if [ $asan -eq 1 ]; then
  run_preset asan -LE "slow|install"
fi
