#!/usr/bin/env bash
# bench/labs/2026-12-04-round26.sh: variant lab round 26 (2026-12-03, session 11): the ring
# feeding registers (recipes/norm.cu CGR_RING_REGS). Round 25 (ncu, GroupNorm): without
# waiting for its group at all the ring is hardly faster (group of 128 with lookahead 7.82
# -> 7.50 ms, group of 64 5.56 -> 4.99, DRAM 42-62% of peak), so the loss is the data
# pipeline, not the exchange: a stage holds its piece until the row is written, so only
# the ring's spare stages (64 KB an SM) are ever loading. Here a piece goes to registers
# as its statistics are taken and its stage is refilled at once: the whole ring (192 KB
# an SM, 25 MB over the GPU) is always loading.
# Predictions: GroupNorm 4.1-4.4 ms (79-85% of SoL), InstanceNorm ~3.9, LayerNorm ~0.30.
# OUT default .deps/lab26.   LAB=.deps/lab26 tests/gpu/evidence.sh lab
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab26}
F=tests/data/recipe
. bench/labs/lib.sh  # b, def
g128() { b g35 level1/35 $F/groupnorm.json 1 "$1" "$(def GROUP 128)" "$(def VECS 8)" "${@:2}"; }
b g35 level1/35 $F/groupnorm.json 1 v1-group64-prefetch
b g35 level1/35 $F/groupnorm.json 1 ring-g64-6x4 "CGR_RING 6" "CGR_RING_PIECES 4"
b g35 level1/35 $F/groupnorm.json 1 regs-g64-6x4 "CGR_RING 6" "CGR_RING_PIECES 4" "CGR_RING_REGS 1"
b g35 level1/35 $F/groupnorm.json 1 regs-g64-7x4 "CGR_RING 7" "CGR_RING_PIECES 4" "CGR_RING_REGS 1"
g128 regs-g128-6x2 "CGR_RING 6" "CGR_RING_PIECES 2" "CGR_RING_REGS 1"
g128 regs-g128-6x2-ahead "CGR_RING 6" "CGR_RING_PIECES 2" "CGR_RING_REGS 1" "CGR_RING_AHEAD 1"
g128 regs-g128-12x4-ahead "CGR_RING 12" "CGR_RING_PIECES 4" "CGR_RING_REGS 1" "CGR_RING_AHEAD 1"
b i34 level1/34 $F/instancenorm.json 0 v0-prefetch-cluster
b i34 level1/34 $F/instancenorm.json 0 regs-g8-6x4 "$(def CLUSTER 1)" "CGR_GROUP 8" "CGR_RING 6" "CGR_RING_PIECES 4" "CGR_RING_REGS 1"
b i34 level1/34 $F/instancenorm.json 0 regs-g16-6x2-ahead "$(def CLUSTER 1)" "$(def VECS 8)" "CGR_GROUP 16" "CGR_RING 6" "CGR_RING_PIECES 2" "CGR_RING_REGS 1" "CGR_RING_AHEAD 1"
b n40 level1/40 $F/layernorm.json 0 v0-split64
b n40 level1/40 $F/layernorm.json 4 regs-g128-6x4 "CGR_RING 6" "CGR_RING_PIECES 4" "CGR_RING_REGS 1"
