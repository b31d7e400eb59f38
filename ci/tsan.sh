#!/usr/bin/env bash
# ThreadSanitizer on the tests that run code on several threads: parallel_for itself, every core test (forward,
# backward, decode with split-KV, the layer's attention; bitwise determinism across 1, 2 and 3
# threads), the fast reference's thread-count test and the conformance runner's jobs test.
# ATTNV_THREADS=3 so a default thread count means real sharing even on a 2-core machine. The
# core's portable- and avx2-path instances are left out: the ISA path changes the tile kernels,
# not the threading, which the avx512 instances and every test on the default path (the widest
# the machine has: avx2 on an AVX2-only one) exercise identically; the portable kernels are ten
# times slower under TSan, and core_tests took 195 s here with the avx2 ones. Exits non-zero on
# any report, and when a target's filter ran no test.
set -euo pipefail
cd "$(dirname "$0")/.."
targets=(util_tests core_tests fast_reference_tests conformance_runner_tests)
declare -A filter=([util_tests]='*' [core_tests]='*-*portable*:*avx2*' [fast_reference_tests]='FastPaths.*'
                   [conformance_runner_tests]='ConformanceRunner.SameSeedSameReportWhateverTheThreads')
cmake --preset tsan > build/configure-tsan.log 2>&1 || { cat build/configure-tsan.log; exit 1; }
# The command line is built too, not run: the release and asan presets compile it in unity
# batches (CMakePresets.json), where a file missing an #include can borrow it from the file before
# it; a plain `cmake -B build` (no unity) would then fail. This preset compiles file by file.
cmake --build --preset tsan -j 2 --target "${targets[@]}" attnv 2>&1 | tail -n 2
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:history_size=4"
export ATTNV_THREADS=3
status=0
for t in "${targets[@]}"; do
  bin=$(find build/tsan -type f -name "$t" -perm -u+x | head -n 1)
  t0=$SECONDS
  if "$bin" --gtest_brief=1 --gtest_filter="${filter[$t]}" > "build/tsan-$t.log" 2>&1; then
    ran=$(grep -Eo '[0-9]+ tests? from [0-9]+ test suites? ran' "build/tsan-$t.log" | head -1 || true)
    if [[ -z $ran || ${ran%% *} -eq 0 ]]; then
      # A filter that matches nothing (a renamed test) runs nothing and exits 0: no evidence.
      echo "ci/tsan.sh: $t ran no test (filter '${filter[$t]}'; log: build/tsan-$t.log)"
      status=1
      continue
    fi
    echo "ci/tsan.sh: $t clean ($ran, $((SECONDS - t0)) s)"
  else
    echo "ci/tsan.sh: $t FAILED (log: build/tsan-$t.log)"
    grep -E "WARNING: ThreadSanitizer|SUMMARY|FAILED" "build/tsan-$t.log" | head -20
    status=1
  fi
done
exit $status
