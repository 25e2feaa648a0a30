#!/usr/bin/env bash
# bench/labs/2026-12-04-round24.sh: variant lab round 24 (2026-12-03, session 11): the ring
# storing y by bulk copies (recipes/norm.cu CGR_RING_STORE: y computed into the stage in
# place of x, one cp.async.bulk a piece to global). Round 23: polling the counter less
# often changed nothing (GroupNorm group of 128 with lookahead 6.25-6.33 ms, group of 64
# 4.75-4.80), so the ~3 us each row costs beyond its bytes is not the polls. Guess: the
# __threadfence before a CTA counts itself in waits for that thread's own y stores of the
# row before to drain; with bulk stores no thread has any in flight.
# Predictions: group of 128 with lookahead and bulk stores 4.2-4.6 ms; group of 64 4.5.
# OUT default .deps/lab24.   LAB=.deps/lab24 tests/gpu/evidence.sh lab
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab24}
F=tests/data/recipe
. bench/labs/lib.sh  # b, def
g128() { b g35 level1/35 $F/groupnorm.json 1 "$1" "$(def GROUP 128)" "$(def VECS 8)" "${@:2}"; }
b g35 level1/35 $F/groupnorm.json 1 ring-g64-6x4 "CGR_RING 6" "CGR_RING_PIECES 4"
b g35 level1/35 $F/groupnorm.json 1 ring-g64-6x4-store "CGR_RING 6" "CGR_RING_PIECES 4" "CGR_RING_STORE 1"
g128 ring-g128-6x2-ahead-store "CGR_RING 6" "CGR_RING_PIECES 2" "CGR_RING_AHEAD 1" "CGR_RING_STORE 1"
g128 ring-g128-3-ahead-store "CGR_RING 3" "CGR_RING_AHEAD 1" "CGR_RING_STORE 1"
g128 ring-g128-12x4-ahead-store "CGR_RING 12" "CGR_RING_PIECES 4" "CGR_RING_AHEAD 1" "CGR_RING_STORE 1"
b i34 level1/34 $F/instancenorm.json 0 v0-prefetch-cluster
b i34 level1/34 $F/instancenorm.json 0 ring-g16-6x2-ahead-store "$(def CLUSTER 1)" "$(def VECS 8)" "CGR_GROUP 16" "CGR_RING 6" "CGR_RING_PIECES 2" "CGR_RING_AHEAD 1" "CGR_RING_STORE 1"
b i34 level1/34 $F/instancenorm.json 0 ring-g8-6x4-store "$(def CLUSTER 1)" "CGR_GROUP 8" "CGR_RING 6" "CGR_RING_PIECES 4" "CGR_RING_STORE 1"
b n40 level1/40 $F/layernorm.json 4 ring-g128-6x4-store "CGR_RING 6" "CGR_RING_PIECES 4" "CGR_RING_STORE 1"
