#!/bin/bash -eu
# OSS-Fuzz / ClusterFuzzLite build script (also run by fuzz/oss-fuzz/check_build.sh here).
# The builder sets CC, CXX, CFLAGS, CXXFLAGS (sanitizer and -fsanitize=fuzzer-no-link),
# LIB_FUZZING_ENGINE (the engine to link: libFuzzer, AFL++, honggfuzz, centipede), SRC and OUT.
# fuzz/CMakeLists.txt links every target with $LIB_FUZZING_ENGINE when it is set, never with a
# hard-coded -fsanitize=fuzzer. Per target this puts into $OUT: the binary, <name>_seed_corpus.zip
# (corpus + regressions), <name>.dict when there is one, and <name>.options.
src=${ATTNV_SRC:-$SRC/attnv}
build=${ATTNV_FUZZ_BUILD_DIR:-$WORK/attnv-build}
targets="npy manifest views plugin_decl numeric"

# -ffp-contract=off: the compensated (double-double) reference must not get fused multiply-adds.
cmake -S "$src" -B "$build" -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_FLAGS="$CFLAGS -ffp-contract=off" \
  -DCMAKE_CXX_FLAGS="$CXXFLAGS -ffp-contract=off" \
  -DATTNV_FUZZ_LIBFUZZER=ON -DATTNV_BUILD_TESTS=OFF -DATTNV_BUILD_BENCH=OFF
cmake --build "$build" -j"$(nproc)" --target $(for t in $targets; do printf 'fuzz_%s ' "$t"; done)

for t in $targets; do
  name=fuzz_$t
  cp "$build/fuzz/$name" "$OUT/"
  rm -f "$OUT/${name}_seed_corpus.zip"
  (cd "$src/fuzz" && find "corpus/$t" "regressions/$t" -type f ! -name .keep -print0 |
     xargs -0 --no-run-if-empty zip -q -j "$OUT/${name}_seed_corpus.zip")
  if [ -f "$src/fuzz/dict/$t.dict" ]; then cp "$src/fuzz/dict/$t.dict" "$OUT/$name.dict"; fi
  cp "$src/fuzz/oss-fuzz/options/$t.options" "$OUT/$name.options"
done
