#!/usr/bin/env bash
# The main job for a newcomer: install what is missing, build the release preset, and certify
# the built-in optimized core with the quick suite, printing the certificate summary. The whole
# certificate (JSON, JUnit XML, HTML) goes to build/certificate/. Extra arguments go to
# `attnv certify` (for example --suite standard, --dtype f32).
set -euo pipefail
cd "$(dirname "$0")/.."

phase() { printf '\n== %s\n' "$*"; }
t0=$SECONDS

phase "1/3 installing what is missing (Debian packages for the build)"
bash ci/install-deps.sh

phase "2/3 building attnv (release preset, 2 jobs; a few minutes from a fresh clone)"
# The compiler's output goes to a log: a newcomer sees it only when the build fails.
mkdir -p build
log=build/quickstart-build.log
t=$SECONDS
if ! { cmake --preset release && cmake --build --preset release -j 2 --target attnv; } > "$log" 2>&1; then
  tail -n 40 "$log" >&2
  echo "quickstart: the build failed (the last 40 lines above; all of it in $log)" >&2
  exit 1
fi
echo "built build/release/cli/attnv in $((SECONDS - t)) s (compiler output in $log)"

phase "3/3 certifying the built-in core (quick suite, every dtype it claims)"
t=$SECONDS
status=0
./build/release/cli/attnv certify --kernel builtin:core --suite quick --report build/certificate "$@" || status=$?
echo
echo "quickstart: certification took $((SECONDS - t)) s; the whole quickstart $((SECONDS - t0)) s"
exit $status
