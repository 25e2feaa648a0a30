#!/usr/bin/env bash
# bench/labs/2026-12-02-round4.sh: the builds of variant lab round 4 (docs/perf.md,
# 2026-12-02 21:26 UTC): variant 0 of the generator of that time, and copies with plain
# stores. SPECS and OUT as in round 3 (OUT default .deps/lab4). For pooling (41, 42, 44)
# the lab measured the staged variant 0 against the two cheapest direct ones, which the
# generator of that moment listed as 1 and 2; since then (stride 1) they are the last two.
set -uo pipefail
cd "$(dirname "$0")/../.."
SPECS=${SPECS:-/work/kb-specs} OUT=${OUT:-.deps/lab4}
NOST='s/^#define CGR_STORE_STREAM 1$/#define CGR_STORE_STREAM 0/'
b() { # DIR LEVEL/NUM VARIANT NAME [EDIT...]
  local d=$OUT/$1 t=$2 v=$3 name=$4; shift 4
  mkdir -p "$d"; echo "$t" >"$d/task"
  bench/lab_build.sh "$d" "$(ls "$SPECS"/${t%%/*}/${t##*/}_*.json)" "$v" "$name" "$@" >/dev/null || echo "FAILED $t $name"
}
b a9 level1/9 0 v0; b b7 level1/7 0 v0
b c1 level1/1 0 v0; b c1 level1/1 0 v0-nostream "$NOST"
b d12 level2/12 0 v0; b d12 level2/12 0 v0-nostream "$NOST"
b e29 level1/29 0 v0; b f29 level2/29 0 v0; b g38 level1/38 0 v0; b g39 level1/39 0 v0
for p in 41 42 44; do
  n=$(build/cutegen recipe --spec "$(ls "$SPECS"/level1/${p}_*.json)" --list | grep -c '^variant')
  b h$p level1/$p 0 v0; b h$p level1/$p $((n - 2)) direct-a; b h$p level1/$p $((n - 1)) direct-b
done
