#!/usr/bin/env bash
# bench/labs/2026-12-04-round27.sh: variant lab round 27 (2026-12-03, session 11): rings at
# two or four CTAs an SM. Round 26: feeding registers was slower still (GroupNorm group of
# 64 5.62 ms against the ring's 4.74), so neither the exchange (round 25) nor the bytes in
# flight are the limit; what is left is the CTA itself: one CTA an SM runs stats, exchange
# and writes of a row one after the other (~3 us of fixed cost a row plus the arithmetic),
# with nothing else on the SM to fill the gaps. With two or four CTAs an SM (of different
# groups) one sums while another waits or writes.
# Predictions: GroupNorm 2 an SM 4.2-4.5 ms; InstanceNorm ~3.9; LayerNorm ~0.25.
# OUT default .deps/lab27.   LAB=.deps/lab27 tests/gpu/evidence.sh lab
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab27}
F=tests/data/recipe
. bench/labs/lib.sh  # b, def
g() { b g35 level1/35 $F/groupnorm.json 1 "$@"; }
g ring-g64-6x4 "CGR_RING 6" "CGR_RING_PIECES 4"
g ring-g128-3x2-mb2 "$(def GROUP 128)" "$(def VECS 8)" "$(def MIN_BLOCKS 2)" "CGR_RING 3" "CGR_RING_PIECES 2"
g ring-g128-6x4-mb2 "$(def GROUP 128)" "$(def VECS 8)" "$(def MIN_BLOCKS 2)" "CGR_RING 6" "CGR_RING_PIECES 4"
g regs-g128-3x2-mb2 "$(def GROUP 128)" "$(def VECS 8)" "$(def MIN_BLOCKS 2)" "CGR_RING 3" "CGR_RING_PIECES 2" "CGR_RING_REGS 1"
g ring-g128-256t-3x2-mb2 "$(def GROUP 128)" "$(def THREADS 256)" "$(def ROW_THREADS 256)" "$(def VECS 16)" "$(def MIN_BLOCKS 2)" "CGR_RING 3" "CGR_RING_PIECES 2"
g ring-g256-256t-3x2-mb4 "$(def GROUP 256)" "$(def THREADS 256)" "$(def ROW_THREADS 256)" "$(def VECS 8)" "$(def MIN_BLOCKS 4)" "CGR_RING 3" "CGR_RING_PIECES 2"
b i34 level1/34 $F/instancenorm.json 0 v0-prefetch-cluster
b i34 level1/34 $F/instancenorm.json 0 ring-g16-3x2-mb2 "$(def CLUSTER 1)" "$(def VECS 8)" "$(def MIN_BLOCKS 2)" "CGR_GROUP 16" "CGR_RING 3" "CGR_RING_PIECES 2"
b n40 level1/40 $F/layernorm.json 0 v0-split64
b n40 level1/40 $F/layernorm.json 4 ring-g256-3x2-mb2 "$(def GROUP 256)" "$(def VECS 8)" "$(def MIN_BLOCKS 2)" "CGR_RING 3" "CGR_RING_PIECES 2"
