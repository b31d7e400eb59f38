#!/usr/bin/env bash
# The main job for a newcomer: install what is missing, build the release preset, and certify
# the built-in optimized core with the quick suite, printing the certificate summary. The whole
# certificate (JSON, JUnit XML, HTML) goes to build/certificate/. Extra arguments go to
# `attnv certify` (for example --suite standard, --dtype f32).
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/install-deps.sh
cmake --preset release > /dev/null
cmake --build --preset release -j 2 --target attnv
./build/release/cli/attnv certify --kernel builtin:core --suite quick --report build/certificate "$@"
