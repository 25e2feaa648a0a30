#!/usr/bin/env bash
# bench/labs/2026-12-03-round6.sh: variant lab round 6 (docs/perf.md, 2026-12-03): the
# persistent held-chunk norm (CGR_HOLD_PERSIST: a CTA loads its next chunk before waiting
# for its current row) against the generator's first variant, on InstanceNorm (level-1 34,
# rows of 1 MiB) and GroupNorm (35, rows of 8 MiB). OUT default .deps/lab6.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-.deps/lab6}
F=tests/data/recipe
b() { # DIR TASK SPEC VARIANT NAME [EDIT...]
  local d=$OUT/$1 t=$2 spec=$3 v=$4 name=$5; shift 5
  mkdir -p "$d"; echo "$t" >"$d/task"
  bench/lab_build.sh "$d" "$spec" "$v" "$name" "$@" >/dev/null || echo "FAILED $t $name"
}
def() { echo "s/^#define CGR_$1 [0-9]*\$/#define CGR_$1 $2/"; }
shape() { def THREADS "$1"; def ROW_THREADS "$1"; def VECS "$2"; def SPLIT "$3"; }
P="CGR_HOLD_PERSIST 1"
for spec in "a34 level1/34 $F/instancenorm.json 32 64" "b35 level1/35 $F/groupnorm.json 256 512"; do
  set -- $spec
  d=$1 t=$2 j=$3 s8=$4 s4=$5
  mapfile -t S4 < <(shape 256 4 "$s4")
  mapfile -t S128 < <(shape 128 8 "$s4")
  b "$d" "$t" "$j" 0 v0
  b "$d" "$t" "$j" 0 persist-256x8 "$P"
  b "$d" "$t" "$j" 0 persist-256x8-mb3 "$P" "$(def MIN_BLOCKS 3)"
  b "$d" "$t" "$j" 0 persist-256x4 "$P" "${S4[@]}"
  b "$d" "$t" "$j" 0 persist-256x4-mb4 "$P" "${S4[@]}" "$(def MIN_BLOCKS 4)"
  b "$d" "$t" "$j" 0 persist-128x8-mb6 "$P" "${S128[@]}" "$(def MIN_BLOCKS 6)"
done
