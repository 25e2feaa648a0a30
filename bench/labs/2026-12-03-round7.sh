#!/usr/bin/env bash
# bench/labs/2026-12-03-round7.sh: variant lab round 7 (docs/perf.md, 2026-12-03): the
# persistent held-chunk norm as rewritten in session 6 (a CTA takes, loads and PUBLISHES
# its next chunk before it waits for its current row; round 6's version waited with an
# unpublished chunk and could deadlock) against the generator's first variant (held
# chunks, one a CTA), on InstanceNorm (level-1 34, rows of 1 MiB) and GroupNorm (35, rows
# of 8 MiB). Names sort in the order they run (the baseline first). OUT default .deps/lab7.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-.deps/lab7}
F=tests/data/recipe
. bench/labs/lib.sh  # b, def
shape() { def THREADS "$1"; def ROW_THREADS "$1"; def VECS "$2"; def SPLIT "$3"; }
P="CGR_HOLD_PERSIST 1"
# DIR TASK SPEC: then the split for chunks of 256x8, 256x4 (=128x8) and 512x8 vectors
for spec in "a34 level1/34 $F/instancenorm.json 32 64 16" "b35 level1/35 $F/groupnorm.json 256 512 128"; do
  set -- $spec
  d=$1 t=$2 j=$3 s8=$4 s4=$5 s16=$6
  mapfile -t S4 < <(shape 256 4 "$s4")
  mapfile -t S128 < <(shape 128 8 "$s4")
  mapfile -t S512 < <(shape 512 8 "$s16")
  b "$d" "$t" "$j" 0 a-v0
  b "$d" "$t" "$j" 0 b-persist-256x8 "$P" "$(shape 256 8 "$s8" | head -1)"
  b "$d" "$t" "$j" 0 c-persist-256x8-mb3 "$P" "$(def MIN_BLOCKS 3)"
  b "$d" "$t" "$j" 0 d-persist-256x4-mb4 "$P" "${S4[@]}" "$(def MIN_BLOCKS 4)"
  b "$d" "$t" "$j" 0 e-persist-128x8-mb4 "$P" "${S128[@]}" "$(def MIN_BLOCKS 4)"
  b "$d" "$t" "$j" 0 f-persist-512x8 "$P" "${S512[@]}"
done
