#!/usr/bin/env bash
# bench/labs/2026-12-03-round8.sh: variant lab round 8 (docs/perf.md, 2026-12-03): the ring
# held-chunk norm (CGR_HOLD_RING = S: persistent CTAs, all resident through a cooperative
# launch, each holding S chunks in shared memory loaded by cp.async) against the
# generator's first variant, on InstanceNorm (level-1 34, rows of 1 MiB), GroupNorm (35,
# rows of 8 MiB) and LayerNorm (40, rows of 16 MiB, made a held-chunk variant from its
# split one). Names sort in the order they run (the baseline first). OUT default .deps/lab8.
# The ring kernel is in commit 180acef only (removed after this round: slower, docs/perf.md).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-.deps/lab8}
F=tests/data/recipe
. bench/labs/lib.sh  # b, def
# ring THREADS VECS STAGES ROWVECS: the edits of a ring variant
ring() { def MODE 4; def THREADS "$1"; def ROW_THREADS "$1"; def VECS "$2"; def SPLIT $(( $4 / ($1 * $2) )); echo "CGR_HOLD_RING $3"; }
for spec in "a34 level1/34 $F/instancenorm.json 65536" "b35 level1/35 $F/groupnorm.json 524288" \
            "c40 level1/40 $F/layernorm.json 1048576"; do
  set -- $spec
  d=$1 t=$2 j=$3 rv=$4
  b "$d" "$t" "$j" 0 a-v0
  for cfg in "256 4 12" "256 8 6" "512 4 6" "128 8 12" "256 4 6" "256 8 3"; do
    set -- $cfg
    mapfile -t E < <(ring "$1" "$2" "$3" "$rv")
    b "$d" "$t" "$j" 0 "r-$1x$2-s$3" "${E[@]}"
  done
done
