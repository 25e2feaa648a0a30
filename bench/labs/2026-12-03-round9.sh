#!/usr/bin/env bash
# bench/labs/2026-12-03-round9.sh: variant lab round 9 (prepared 2026-12-03, session 6; NOT
# yet run: that session's device time was spent). Two ideas against the held-chunk norms'
# row wait (docs/perf.md, rounds 5, 7, 8), on InstanceNorm (level-1 34) and GroupNorm (35):
# - CGR_HOLD_DIRECT 1: every CTA of a row waits for the row's count of published partials
#   and combines them itself, instead of the last CTA combining them and flagging the row
#   (one hop, an atomic round trip and a fence shorter on the row's critical path);
# - GroupNorm's two-kernel variants (statistics split 4 and 2 ways, then the output: x read
#   twice, as torch.compile's GroupNorm, 5.5 ms against the held chunks' 6.0 ms).
# Names sort in the order they run (the baseline first). OUT default .deps/lab9. Run with
#   LAB=.deps/lab9 tests/gpu/evidence.sh lab
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-.deps/lab9}
F=tests/data/recipe
. bench/labs/lib.sh  # b, def
D="CGR_HOLD_DIRECT 1"
for spec in "a34 level1/34 $F/instancenorm.json" "b35 level1/35 $F/groupnorm.json"; do
  set -- $spec
  d=$1 t=$2 j=$3
  b "$d" "$t" "$j" 0 a-v0
  b "$d" "$t" "$j" 0 b-v0-direct "$D"
  b "$d" "$t" "$j" 1 c-v1-persist
  b "$d" "$t" "$j" 1 d-v1-persist-direct "$D"
done
b b35 level1/35 $F/groupnorm.json 3 e-v3-split4
b b35 level1/35 $F/groupnorm.json 4 f-v4-split2
