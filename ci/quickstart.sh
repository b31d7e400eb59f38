#!/usr/bin/env bash
# The main job for a newcomer: install what is missing, build the release preset, and run the
# reference self-check (fast double-double reference against the multiprecision oracle on
# adversarial case families), printing its summary. Extra arguments go to `attnv selfcheck`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/install-deps.sh
cmake --preset release > /dev/null
cmake --build --preset release -j 2 --target attnv
./build/release/cli/attnv selfcheck "$@"
