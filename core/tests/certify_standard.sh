#!/usr/bin/env bash
# `attnv certify --kernel builtin:core --suite standard` on one ISA path of the core, as a user
# runs it (ctest core_certified_standard_*; docs: core/README.md). Exit 77, which ctest reports
# as a skip, when this CPU lacks the path: the output names the missing features.
# Usage: certify_standard.sh ATTNV ISA|default [certify options...]
set -u
attnv=$1 isa=$2
shift 2
if [ "$isa" = default ]; then
  out=$("$attnv" certify --kernel builtin:core --suite standard "$@" 2>&1)
else
  out=$(ATTNV_CORE_ISA=$isa "$attnv" certify --kernel builtin:core --suite standard "$@" 2>&1)
fi
rc=$?
if [ $rc -ne 0 ] && grep -q "this CPU lacks" <<<"$out"; then
  grep "this CPU lacks" <<<"$out"
  exit 77
fi
printf '%s\n' "$out"
exit $rc
