#!/usr/bin/env bash
# Sets up what bench/peers/peers.py needs: Debian's python3-onnx (to write the models), Node.js
# and onnxruntime-node from npm (onnxruntime's CPU kernels). Optional for users; not part of
# ci/test.sh. Usage: bash bench/peers/setup.sh [PREFIX]   (PREFIX default: build/peers)
#
# onnxruntime-node's postinstall script downloads GPU providers from api.nuget.org; the CPU
# library ships in the npm tarball itself, so the script is skipped (--ignore-scripts).
set -euo pipefail
cd "$(dirname "$0")/../.."
prefix="${1:-build/peers}"
ort_version="1.30.0"

need=()
/usr/bin/python3 -c 'import onnx' 2>/dev/null || need+=(python3-onnx)
command -v node >/dev/null || need+=(nodejs)
command -v npm >/dev/null || need+=(npm)
if ((${#need[@]})); then
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo="sudo"
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq "${need[@]}"
fi
mkdir -p "$prefix"
npm install --prefix "$prefix" --ignore-scripts --no-audit --no-fund "onnxruntime-node@$ort_version" >/dev/null
node -e "const o = require('$(realpath "$prefix")/node_modules/onnxruntime-node'); console.log('onnxruntime-node', o.env.versions.node, 'in $prefix')"
