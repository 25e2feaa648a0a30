#!/usr/bin/env bash
# bench/labs/2026-12-04-round22.sh: variant lab round 22 (2026-12-03, session 11): the ring
# with lookahead (recipes/norm.cu CGR_RING_AHEAD = 1: a CTA publishes row i + 1's partial
# statistics before it waits for row i's, so the exchange's latency hides behind a row).
# Round 21: rings of groups of 128 (one row in flight across the GPU) were the slowest
# (GroupNorm 7.4 ms, InstanceNorm group of 16 5.8 ms), groups of 64 the fastest (GroupNorm
# 4.756 against held chunks 5.209; InstanceNorm group of 8 4.106 against the cluster
# 4.026): the exchange, paid once a row by every CTA in turn, is what the big groups wait on.
# - 35_GroupNorm_: ring group of 64 (round 21's best) against groups of 128 three rows deep
#   (64 KB stages, or 32 KB pieces) with lookahead 1.
# - 34_InstanceNorm: cluster (v0) and ring group 8 against groups of 16 with lookahead 1.
# - 40_LayerNorm: split 64 against the ring with evict-first x and evict-last weights.
# Predictions: GroupNorm lookahead 4.1-4.4 ms (79-85% of SoL); InstanceNorm ~3.9 ms;
# LayerNorm hints no better than round 21's 0.36 ms.
# OUT default .deps/lab22.   LAB=.deps/lab22 tests/gpu/evidence.sh lab
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab22}
F=tests/data/recipe
. bench/labs/lib.sh  # b, def
b g35 level1/35 $F/groupnorm.json 1 ring-g64-6x4 "CGR_RING 6" "CGR_RING_PIECES 4"
b g35 level1/35 $F/groupnorm.json 1 ring-g128-3-ahead "$(def GROUP 128)" "$(def VECS 8)" "CGR_RING 3" "CGR_RING_AHEAD 1"
b g35 level1/35 $F/groupnorm.json 1 ring-g128-6x2-ahead "$(def GROUP 128)" "$(def VECS 8)" "CGR_RING 6" "CGR_RING_PIECES 2" "CGR_RING_AHEAD 1"
b g35 level1/35 $F/groupnorm.json 1 ring-g128-7x2-ahead "$(def GROUP 128)" "$(def VECS 8)" "CGR_RING 7" "CGR_RING_PIECES 2" "CGR_RING_AHEAD 1"
b i34 level1/34 $F/instancenorm.json 0 v0-prefetch-cluster
b i34 level1/34 $F/instancenorm.json 0 ring-g8-6x4 "$(def CLUSTER 1)" "CGR_GROUP 8" "CGR_RING 6" "CGR_RING_PIECES 4"
b i34 level1/34 $F/instancenorm.json 0 ring-g16-3-ahead "$(def CLUSTER 1)" "$(def VECS 8)" "CGR_GROUP 16" "CGR_RING 3" "CGR_RING_AHEAD 1"
b i34 level1/34 $F/instancenorm.json 0 ring-g16-6x2-ahead "$(def CLUSTER 1)" "$(def VECS 8)" "CGR_GROUP 16" "CGR_RING 6" "CGR_RING_PIECES 2" "CGR_RING_AHEAD 1"
b n40 level1/40 $F/layernorm.json 0 v0-split64
b n40 level1/40 $F/layernorm.json 4 ring-g128-6x4-hints-ef "CGR_RING 6" "CGR_RING_PIECES 4" "CGR_LAG_HINTS 1" "CGR_EVICT_FIRST 1"
