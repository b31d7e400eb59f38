#!/usr/bin/env bash
# Time for fuzz_numeric to find a planted bug: runs the target on one mutant RUNS times (libFuzzer
# seeds 1..RUNS, a fresh corpus folder each, one worker), prints each time and the median.
# A run that finds nothing within LIMIT seconds counts as LIMIT (and is marked "not found").
#   fuzz/tools/time_to_find.sh BINARY MUTANT [RUNS=3] [LIMIT=300] [SEEDS_DIR] [extra libFuzzer flags...]
# Example (no sanitizers, as the README's figures):
#   fuzz/tools/time_to_find.sh build/fuzz-nosan/fuzz/fuzz_numeric no_max_subtraction 3 300
set -euo pipefail
bin=$1 mutant=$2 runs=${3:-3} limit=${4:-300} seeds=${5:-}
shift $(( $# < 5 ? $# : 5 ))
times=()
for ((i = 1; i <= runs; ++i)); do
  work=$(mktemp -d)
  start=$(date +%s.%N)
  set +e
  ATTNV_FUZZ_KERNEL=$mutant "$bin" -seed="$i" -max_total_time="$limit" -artifact_prefix="$work/" \
    -print_final_stats=0 "$@" "$work" ${seeds:+"$seeds"} >"$work/log" 2>&1
  set -e
  end=$(date +%s.%N)
  t=$(echo "$end - $start" | bc)
  if ls "$work"/crash-* >/dev/null 2>&1; then
    echo "$mutant run $i: found in $t s ($(grep -m1 -o 'fuzz finding.*\|ERROR: [A-Za-z]*: [A-Za-z-]*.*' "$work/log" | head -1))"
  else
    echo "$mutant run $i: not found in $limit s"
    t=$limit
  fi
  times+=("$t")
  rm -rf "$work"
done
median=$(printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}')
echo "$mutant: median $median s over $runs runs"
