#!/bin/sh
# End to end through examples/numpy/attention.py: export a representative part of the quick
# suite (f32 and bf16), answer it with NumPy, `attnv cases check` exits 0; a planted bug makes it
# exit 1 naming the requirement; a deleted out.npy is a finding naming the case.
# Usage: numpy_example.sh ATTNV PYTHON ATTENTION_PY WORK_DIR
set -eu
ATTNV=$1 PY=$2 PROG=$3 WORK=$4
# R5 hidden keys overwritten, R7 empty rows, R19 own-built cases at three temperatures (V = identity):
# derived calls of three kinds, few cases, so the test takes seconds (the full quick tier: cases/README.md).
ONLY=R5,R7,R19
DIR=$WORK/cases
rm -rf "$WORK"
mkdir -p "$WORK"

fail() { echo "FAILED: $*"; exit 1; }
check() {  # check LOG: runs attnv cases check, leaves its exit status in $rc
  set +e
  "$ATTNV" cases check "$DIR" --json "$WORK/check.json" > "$WORK/$1" 2>&1
  rc=$?
  set -e
}

"$ATTNV" cases export --suite quick --dtype f32,bf16 --only $ONLY --out "$DIR" > "$WORK/export.log" 2>&1 ||
  { cat "$WORK/export.log"; fail "export"; }
cat "$WORK/export.log"

"$PY" "$PROG" "$DIR"
check correct.log
[ "$rc" -eq 0 ] || { cat "$WORK/correct.log"; fail "correct NumPy answers: exit $rc, expected 0"; }
grep -q "R19 entropy_temperature \[bf16\] PASS" "$WORK/correct.log" || { cat "$WORK/correct.log"; fail "no R19 bf16 PASS line"; }
echo "correct answers: exit 0"

"$PY" "$PROG" "$DIR" --bug causal_off_by_one
check bug.log
[ "$rc" -eq 1 ] || { cat "$WORK/bug.log"; fail "planted causal_off_by_one: exit $rc, expected 1"; }
grep -q "R5 no_leakage \[f32\] FAIL" "$WORK/bug.log" || { cat "$WORK/bug.log"; fail "R5 did not fail on causal_off_by_one"; }
echo "causal_off_by_one: exit 1, R5 FAIL"

# Correct answers again, then one out.npy deleted: the finding names that case.
"$PY" "$PROG" "$DIR"
set -- $("$PY" -c 'import json, sys; c = json.load(open(sys.argv[1]))["cases"][0]; print(c["dir"], c["id"])' "$DIR/manifest.json")
rm "$DIR/$1/out.npy"
check missing.log
[ "$rc" -eq 1 ] || { cat "$WORK/missing.log"; fail "deleted out.npy: exit $rc, expected 1"; }
grep -q "no answer for case $2" "$WORK/missing.log" || { cat "$WORK/missing.log"; fail "the finding does not name case $2"; }
grep -q "out.npy missing" "$WORK/missing.log" || { cat "$WORK/missing.log"; fail "the finding does not name out.npy"; }
echo "deleted $1/out.npy: exit 1, finding names case $2"

# Masks and biases per batch and per head ([B|1,Hq|1,Tq,Tk] files): claimed, they are exported
# (the manifest names their extents) and the NumPy answers pass.
cat > "$WORK/planes.json" <<'JSON'
{"gqa": true, "causal_top_left": true, "causal_bottom_right": true, "window": true, "mask": true,
 "bias": true, "kv_len": true, "softcap": true, "custom_scale": true, "lse": true, "backward": false,
 "mask_bias_per_batch_head": true}
JSON
rm -rf "$DIR"
"$ATTNV" cases export --suite quick --dtype f32 --only R5,R7 --claims "$WORK/planes.json" --out "$DIR" > "$WORK/export_planes.log" 2>&1 ||
  { cat "$WORK/export_planes.log"; fail "export with planes"; }
grep -q '"mask_heads": true' "$DIR/manifest.json" || fail "no case with a mask per head in the export"
grep -q '"bias_batch": true' "$DIR/manifest.json" || fail "no case with a bias per batch in the export"
"$PY" "$PROG" "$DIR"
check planes.log
[ "$rc" -eq 0 ] || { cat "$WORK/planes.log"; fail "correct NumPy answers with planes: exit $rc, expected 0"; }
echo "mask and bias planes: exit 0"

# ALiBi and packed variable-length sequences, forward and backward, in one export (R1 and R2
# draw them alone and together): cases carry alibi.npy, cu_seqlens_q.npy and cu_seqlens_k.npy,
# and the NumPy answers pass R1 and R2. Each planted bug fails R1: ALiBi's distances taken from
# the other corner, and the causal rule, window and ALiBi aligned by the packed corner instead of
# per sequence. Per-sequence key lengths (varlen_kv_len: kv_len.npy [S]) are claimed too; the
# bottom-right alignment to the stored keys instead of the used ones fails R1 as well.
cat > "$WORK/alibi_varlen.json" <<'JSON'
{"gqa": true, "causal_top_left": true, "causal_bottom_right": true, "window": true, "mask": true,
 "bias": true, "kv_len": true, "softcap": true, "custom_scale": true, "lse": true, "backward": true,
 "alibi": true, "varlen": true, "varlen_kv_len": true}
JSON
rm -rf "$DIR"
"$ATTNV" cases export --suite quick --dtype f32 --only R1,R2 --claims "$WORK/alibi_varlen.json" --out "$DIR" > "$WORK/export_alibi_varlen.log" 2>&1 ||
  { cat "$WORK/export_alibi_varlen.log"; fail "export with ALiBi and packed sequences"; }
grep -q '"alibi": true' "$DIR/manifest.json" || fail "no case with ALiBi in the export"
grep -q '"varlen_sequences": [1-9]' "$DIR/manifest.json" || fail "no packed case in the export"
packed=$(grep -c '"varlen_sequences": [1-9]' "$DIR/manifest.json" || true)
seqused=$("$PY" -c 'import json, sys; print(sum(1 for c in json.load(open(sys.argv[1]))["cases"] if c.get("varlen_sequences", 0) > 0 and c["kv_len"]))' "$DIR/manifest.json")
[ "$seqused" -gt 0 ] || fail "no packed case with kv_len [S] in the export"
"$PY" "$PROG" "$DIR"
check alibi_varlen.log
[ "$rc" -eq 0 ] || { cat "$WORK/alibi_varlen.log"; fail "correct NumPy answers with ALiBi and packed sequences: exit $rc, expected 0"; }
for bug in alibi_wrong_corner varlen_global_alignment seqused_aligned_to_stored_keys; do
  "$PY" "$PROG" "$DIR" --bug $bug
  check $bug.log
  [ "$rc" -eq 1 ] || { cat "$WORK/$bug.log"; fail "planted $bug: exit $rc, expected 1"; }
  grep -q "R1 matches_reference \[f32\] FAIL" "$WORK/$bug.log" || { cat "$WORK/$bug.log"; fail "R1 did not fail on $bug"; }
done
echo "ALiBi and packed sequences ($packed packed cases, $seqused with kv_len [S]): exit 0; alibi_wrong_corner, varlen_global_alignment and seqused_aligned_to_stored_keys: exit 1, R1 FAIL"

# Not an export folder: a usage/input error (exit 2), not a finding.
set +e
"$ATTNV" cases check "$WORK" > "$WORK/bad.log" 2>&1
rc=$?
set -e
[ "$rc" -eq 2 ] || { cat "$WORK/bad.log"; fail "a folder without attnv-export.json: exit $rc, expected 2"; }
echo "no attnv-export.json: exit 2"
rm -rf "$DIR"
echo "cases_numpy_example: OK"
