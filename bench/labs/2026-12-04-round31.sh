#!/usr/bin/env bash
# bench/labs/2026-12-04-round31.sh: variant lab round 31 (prepared in session 11, not yet
# run): the ring's exchange by a release add and acquire loads (recipes/norm.cu
# CGR_RING_RELACQ) instead of __threadfence + atomicAdd and volatile polls + a fence. Round
# 25 (ncu, wrong results without the wait) put the exchange's wait at ~10% of the ring's
# time and rounds 21-28 a fixed ~5.7 us a row a CTA under ncu; each fence is a round trip
# that the CTA's 512 threads wait on at the next barrier.
# Predictions: GroupNorm ring 2-5% faster (4.45-4.55 ms); groups of 128 with lookahead
# still slower than groups of 64.
# OUT default .deps/lab31.   LAB=.deps/lab31 tests/gpu/evidence.sh lab
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab31}
F=tests/data/recipe
. bench/labs/lib.sh  # b, def
b g35 level1/35 $F/groupnorm.json 0 v0-ring-g64-6x4
b g35 level1/35 $F/groupnorm.json 0 ring-g64-6x4-relacq "CGR_RING_RELACQ 1"
b g35 level1/35 $F/groupnorm.json 0 ring-g128-6x2-ahead-relacq "$(def GROUP 128)" "$(def VECS 8)" "$(def RING_PIECES 2)" \
  "CGR_RING_AHEAD 1" "CGR_RING_RELACQ 1"
b i34 level1/34 $F/instancenorm.json 0 v0-prefetch-cluster
b i34 level1/34 $F/instancenorm.json 0 ring-g8-6x4-relacq "$(def CLUSTER 1)" "CGR_GROUP 8" "CGR_RING 6" "CGR_RING_PIECES 4" \
  "CGR_RING_RELACQ 1"
