#!/usr/bin/env bash
# Sets up what is missing, builds, and runs the whole test suite with ctest:
#   1. release build, every test;
#   2. ASan + UBSan build (-O1 -g1, half of each conformance tier's cases: CMakePresets.json,
#      properties/conformance/requirement.h), every test not labelled 'slow' or 'install'
#      (sanitizers cost ~3x; the slow ones re-run code that faster tests cover, see their
#      CMakeLists comments).
#   3. ThreadSanitizer on the threaded tests (ci/tsan.sh: the core, the fast reference, the
#      conformance runner's jobs);
#   4. the fuzz preset (clang, libFuzzer, ASan+UBSan): every fuzz target for a short fixed time
#      (fuzz/run_short.sh: 20 s per parser, 30 s numeric on the naive and core kernels).
# Usage: ci/test.sh [--no-asan] [--no-tsan] [--no-fuzz]
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/install-deps.sh --tests

asan=1
tsan=1
fuzz=1
for arg in "$@"; do
  case $arg in
    --no-asan) asan=0 ;;
    --no-tsan) tsan=0 ;;
    --no-fuzz) fuzz=0 ;;
    *) echo "usage: ci/test.sh [--no-asan] [--no-tsan] [--no-fuzz]" >&2; exit 2 ;;
  esac
done

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
if [ $tsan -eq 1 ]; then
  t0=$SECONDS
  bash ci/tsan.sh
  echo "ci/test.sh: ThreadSanitizer took $((SECONDS - t0)) s"
fi
if [ $fuzz -eq 1 ]; then
  t0=$SECONDS
  NUMERIC_KERNELS="naive core" bash fuzz/run_short.sh
  echo "ci/test.sh: short fuzzing took $((SECONDS - t0)) s"
fi
