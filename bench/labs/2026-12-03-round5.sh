#!/usr/bin/env bash
# bench/labs/2026-12-03-round5.sh: variant lab round 5 (docs/perf.md, 2026-12-03): where
# the held-chunk norm (HOLD mode) loses time on rows of 1 MiB (InstanceNorm, level-1 34),
# 8 MiB (GroupNorm, 35) and 16 MiB (LayerNorm, 40). Builds from the recipe fixtures (the
# real specs of those problems) with sed edits: chunk shape (threads x vectors), the CTAs
# an SM that __launch_bounds__ asks for, the poll interval, and HOLD forced on LayerNorm
# (which the generator gives the 3-kernel split). OUT default .deps/lab5.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-.deps/lab5}
F=tests/data/recipe
b() { # DIR TASK SPEC VARIANT NAME [EDIT...]
  local d=$OUT/$1 t=$2 spec=$3 v=$4 name=$5; shift 5
  mkdir -p "$d"; echo "$t" >"$d/task"
  bench/lab_build.sh "$d" "$spec" "$v" "$name" "$@" >/dev/null || echo "FAILED $t $name"
}
def() { echo "s/^#define CGR_$1 [0-9]*\$/#define CGR_$1 $2/"; }
minb() { echo "s|kHoldMinBlocks = kThreads >= 1024 ? 1 : 1024 / kThreads;|kHoldMinBlocks = $1;|"; }
MODE4="s/^#define CGR_MODE 3  \/\/ split$/#define CGR_MODE 4  \/\/ hold/"
SLEEP32='s/__nanosleep(128)/__nanosleep(32)/'
# shape THREADS VECS SPLIT: a hold chunk of THREADS x VECS vectors, SPLIT chunks a row
shape() { echo "$(def THREADS "$1")"; echo "$(def ROW_THREADS "$1")"; echo "$(def VECS "$2")"; echo "$(def SPLIT "$3")"; }
mapfile -t S128x8_34 < <(shape 128 8 64)
mapfile -t S256x4_34 < <(shape 256 4 64)
mapfile -t S512x4_34 < <(shape 512 4 32)
b a34 level1/34 $F/instancenorm.json 0 v0
b a34 level1/34 $F/instancenorm.json 0 v0-sleep32 "$SLEEP32"
b a34 level1/34 $F/instancenorm.json 0 v0-minb5 "$(minb 5)"
b a34 level1/34 $F/instancenorm.json 0 c128x8 "${S128x8_34[@]}"
b a34 level1/34 $F/instancenorm.json 0 c128x8-minb12 "${S128x8_34[@]}" "$(minb 12)"
b a34 level1/34 $F/instancenorm.json 0 c256x4-minb6 "${S256x4_34[@]}" "$(minb 6)"
b a34 level1/34 $F/instancenorm.json 0 c256x4-minb8 "${S256x4_34[@]}" "$(minb 8)"
b a34 level1/34 $F/instancenorm.json 0 c512x4-minb3 "${S512x4_34[@]}" "$(minb 3)"
mapfile -t S128x8_35 < <(shape 128 8 512)
mapfile -t S256x4_35 < <(shape 256 4 512)
b b35 level1/35 $F/groupnorm.json 0 v0
b b35 level1/35 $F/groupnorm.json 0 v0-sleep32 "$SLEEP32"
b b35 level1/35 $F/groupnorm.json 0 v0-minb5 "$(minb 5)"
b b35 level1/35 $F/groupnorm.json 0 c128x8 "${S128x8_35[@]}"
b b35 level1/35 $F/groupnorm.json 0 c128x8-minb12 "${S128x8_35[@]}" "$(minb 12)"
b b35 level1/35 $F/groupnorm.json 0 c256x4-minb6 "${S256x4_35[@]}" "$(minb 6)"
mapfile -t H40 < <(echo "$MODE4"; def UNROLL 1; shape 256 8 512)
mapfile -t H40b < <(echo "$MODE4"; def UNROLL 1; shape 128 8 1024)
b c40 level1/40 $F/layernorm.json 0 v0
b c40 level1/40 $F/layernorm.json 0 hold256x8 "${H40[@]}"
b c40 level1/40 $F/layernorm.json 0 hold128x8 "${H40b[@]}"
b c40 level1/40 $F/layernorm.json 0 hold128x8-minb12 "${H40b[@]}" "$(minb 12)"
