#!/usr/bin/env bash
# bench/labs/2026-12-04-round23.sh: variant lab round 23 (2026-12-03, session 11): the ring's
# counter polls. Round 22's ncu (GroupNorm ring group of 64: 56% of DRAM peak, warps issuing
# 0.41 an instant, a third of their time at CTA barriers waiting for thread 0's poll) and
# the lookahead's small gain (group of 128: 7.4 -> 6.3 ms, still slower than groups of 64,
# 4.75) suggest the wait is the counter's word itself: 64-128 CTAs polling one word of L2
# every 32 ns, queueing the atomic adds behind the polls. CGR_POLL_NS spaces the polls.
# Predictions: group of 128 with lookahead at 256 ns 4.3-4.8 ms; group of 64 4.5 ms.
# OUT default .deps/lab23.   LAB=.deps/lab23 tests/gpu/evidence.sh lab
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab23}
F=tests/data/recipe
. bench/labs/lib.sh  # b, def
g128() { b g35 level1/35 $F/groupnorm.json 1 "$1" "$(def GROUP 128)" "$(def VECS 8)" "${@:2}"; }
b g35 level1/35 $F/groupnorm.json 1 ring-g64-6x4 "CGR_RING 6" "CGR_RING_PIECES 4"
b g35 level1/35 $F/groupnorm.json 1 ring-g64-6x4-poll256 "CGR_RING 6" "CGR_RING_PIECES 4" "CGR_POLL_NS 256"
g128 ring-g128-6x2-ahead-poll256 "CGR_RING 6" "CGR_RING_PIECES 2" "CGR_RING_AHEAD 1" "CGR_POLL_NS 256"
g128 ring-g128-6x2-ahead-poll1000 "CGR_RING 6" "CGR_RING_PIECES 2" "CGR_RING_AHEAD 1" "CGR_POLL_NS 1000"
g128 ring-g128-3-poll256 "CGR_RING 3" "CGR_POLL_NS 256"
b i34 level1/34 $F/instancenorm.json 0 v0-prefetch-cluster
b i34 level1/34 $F/instancenorm.json 0 ring-g16-3-ahead-poll256 "$(def CLUSTER 1)" "$(def VECS 8)" "CGR_GROUP 16" "CGR_RING 3" "CGR_RING_AHEAD 1" "CGR_POLL_NS 256"
b i34 level1/34 $F/instancenorm.json 0 ring-g8-6x4-poll256 "$(def CLUSTER 1)" "CGR_GROUP 8" "CGR_RING 6" "CGR_RING_PIECES 4" "CGR_POLL_NS 256"
