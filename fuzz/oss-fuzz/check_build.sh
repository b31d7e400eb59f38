#!/usr/bin/env bash
# Runs fuzz/oss-fuzz/build.sh here the way the OSS-Fuzz / ClusterFuzzLite builder does (clang,
# ASan+UBSan, libFuzzer through $LIB_FUZZING_ENGINE), into build/oss-fuzz/{work,out}, and checks
# that $OUT holds every target with its seed corpus, options and dictionary.
# fuzz/run_short.sh (CI) builds through this, so the scale-out build script cannot rot.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
top=$root/build/oss-fuzz
mkdir -p "$top/src" "$top/work" "$top/out"
ln -sfn "$root" "$top/src/attnv"
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
export SRC=$top/src WORK=$top/work OUT=$top/out CC=clang CXX=clang++
export CFLAGS="-O1 -gline-tables-only $san -fsanitize=fuzzer-no-link" CXXFLAGS="-O1 -gline-tables-only $san -fsanitize=fuzzer-no-link"
export LIB_FUZZING_ENGINE="-fsanitize=fuzzer $san"
bash "$root/fuzz/oss-fuzz/build.sh" > "$top/build.log" 2>&1 || { tail -40 "$top/build.log"; exit 1; }
for t in npy manifest views plugin_decl numeric; do
  for f in "fuzz_$t" "fuzz_${t}_seed_corpus.zip" "fuzz_$t.options"; do
    [[ -s $OUT/$f ]] || { echo "check_build: $OUT/$f is missing" >&2; exit 1; }
  done
done
echo "check_build: $OUT holds every target, seed corpus and options file"
