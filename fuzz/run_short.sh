#!/usr/bin/env bash
# CI smoke fuzzing: builds every target the way OSS-Fuzz / ClusterFuzzLite would
# (fuzz/oss-fuzz/check_build.sh runs fuzz/oss-fuzz/build.sh: clang, ASan+UBSan, libFuzzer through
# $LIB_FUZZING_ENGINE) and runs each for a short fixed time, starting from its corpus and
# regressions. The numeric target runs on correct kernels and must find nothing. Exits non-zero
# when a target ran no input (libFuzzer reports 0 executed units: no evidence), and
# on any finding; the inputs that crashed are copied to build/oss-fuzz/findings/<target>/ (replay:
# build/oss-fuzz/out/fuzz_<target> <file>; once fixed, copy the file to fuzz/regressions/<target>/
# so ctest replays it forever).
#
#   fuzz/run_short.sh                      # 20 s per parser target, 30 s numeric
#   PARSER_SECONDS=600 NUMERIC_SECONDS=1800 fuzz/run_short.sh   # the long runs (README)
#   NUMERIC_KERNELS="naive naive_tiled" fuzz/run_short.sh
#   FUZZ_JOBS=1 fuzz/run_short.sh          # one target at a time (default 2: libFuzzer uses one
#                                          # core per run, so two runs fill a 2-core machine)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
parser_seconds=${PARSER_SECONDS:-20}
numeric_seconds=${NUMERIC_SECONDS:-30}
numeric_kernels=${NUMERIC_KERNELS:-naive}
jobs=${FUZZ_JOBS:-2}
cd "$root"

bash fuzz/oss-fuzz/check_build.sh

bin=$root/build/oss-fuzz/out
findings=$root/build/oss-fuzz/findings
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
failed=0

# run NAME TARGET SECONDS [ENV=VALUE...]: one libFuzzer run; new inputs go to a scratch folder
# (the first corpus folder), the committed corpus and regressions are only read. Prints its
# summary to $work/NAME/summary and returns 1 on a finding.
run() {
  local name=$1 target=$2 seconds=$3
  shift 3
  local dir=$work/$name
  mkdir -p "$dir/corpus"
  local dict=()
  [[ -f $root/fuzz/dict/$target.dict ]] && dict=(-dict="$root/fuzz/dict/$target.dict")
  local start=$SECONDS status=0
  exec >"$dir/summary" 2>&1
  echo "== $name: $seconds s"
  env "$@" "$bin/fuzz_$target" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=4096 \
    -artifact_prefix="$dir/" -print_final_stats=1 "${dict[@]}" \
    "$dir/corpus" "$root/fuzz/corpus/$target" "$root/fuzz/regressions/$target" >"$dir/log" 2>&1 || status=$?
  grep -E "^stat::number_of_executed_units|^stat::average_exec_per_sec" "$dir/log" | tr '\n' ' ' || true
  echo "($((SECONDS - start)) s wall)"
  if ((status != 0)) || compgen -G "$dir/crash-*" >/dev/null || compgen -G "$dir/leak-*" >/dev/null ||
     compgen -G "$dir/timeout-*" >/dev/null || compgen -G "$dir/oom-*" >/dev/null; then
    echo "FINDING in $name (exit status $status):"
    grep -E "fuzz finding|ERROR:|SUMMARY:|runtime error" "$dir/log" | head -20 || tail -30 "$dir/log"
    mkdir -p "$findings/$name"
    cp "$dir"/crash-* "$dir"/leak-* "$dir"/timeout-* "$dir"/oom-* "$dir/log" "$findings/$name/" 2>/dev/null || true
    echo "inputs and log saved in $findings/$name/"
    return 1
  fi
  # "No finding" needs inputs run: a target that exits at once (a broken init, an engine that
  # never started) must not pass as clean.
  local units
  units=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log" | tail -n 1)
  if [[ -z $units || $units -eq 0 ]]; then
    echo "NOTHING RAN in $name: libFuzzer reported ${units:-no} executed units"
    tail -20 "$dir/log"
    return 1
  fi
}

# The runs, at most $jobs at a time; each one's summary is printed when it ends.
names=()
pids=()
finish_one() {
  local i=$1 status=0
  wait "${pids[$i]}" || status=$?
  cat "$work/${names[$i]}/summary"
  ((status == 0)) || failed=1
}
start() {
  local name=$1
  ( run "$@" ) &
  names+=("$name")
  pids+=($!)
  if ((${#pids[@]} - done_count >= jobs)); then
    finish_one "$done_count"
    done_count=$((done_count + 1))
  fi
}
done_count=0
start npy npy "$parser_seconds"
start manifest manifest "$parser_seconds"
start views views "$parser_seconds"
start plugin_decl plugin_decl "$parser_seconds"
for k in $numeric_kernels; do
  start "numeric_$k" numeric "$numeric_seconds" ATTNV_FUZZ_KERNEL="$k"
done
while ((done_count < ${#pids[@]})); do
  finish_one "$done_count"
  done_count=$((done_count + 1))
done
if ((failed)); then
  echo "fuzz/run_short.sh: findings, or a target that ran nothing (see above)"
  exit 1
fi
echo "fuzz/run_short.sh: no findings"
