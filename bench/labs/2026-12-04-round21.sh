#!/usr/bin/env bash
# bench/labs/2026-12-04-round21.sh: variant lab round 21 (2026-12-03, session 11): the ring
# (recipes/norm.cu CGR_RING): persistent groups of CTAs, one an SM, holding long rows in
# shared memory only, a CTA's chunk of a row cut into RING_PIECES pieces that stream
# through a ring of RING stages (bulk copies on mbarriers), each stage refilled as soon as
# its piece is written; so while a CTA waits for its row's statistics, RING - RING_PIECES
# pieces of its next rows keep loading (the groups of round 15 held one row in registers
# and one in shared memory: nothing loaded during the wait once that landed).
# - 35_GroupNorm_ (896 rows of 8 MiB): v1 persistent held chunks (4.95 ms) against rings
#   of groups of 128 (64 KB chunks: 3 rows deep, or 6 pieces of 32 KB) and of 64 (128 KB
#   chunks in 4 pieces, 1.5 rows deep).
# - 40_LayerNorm (16 rows of 16 MiB, 32 MiB of weights): v0 split 64 (0.229 ms) against
#   a group of 128 with 6 or 7 stages of 32 KB (1.5 rows deep), with L2 hints (weights
#   evict-last, y evict-first).
# - 34_InstanceNorm (rows of 1 MiB): v0 prefetching cluster of 8 (4.02 ms) against rings
#   of groups of 16 (64 KB chunks, 3 deep) and of 8 (128 KB in 4 pieces).
# Predictions: GroupNorm ring 3 deep 4.0-4.3 ms (81-87% of SoL), LayerNorm 0.17-0.20 ms
# (weights from L2 decide it), InstanceNorm ~3.9 ms.
# OUT default .deps/lab21.   LAB=.deps/lab21 tests/gpu/evidence.sh lab
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab21}
F=tests/data/recipe
. bench/labs/lib.sh  # b, def
b g35 level1/35 $F/groupnorm.json 1 v1-persist-hold
b g35 level1/35 $F/groupnorm.json 1 ring-g128-3 "$(def GROUP 128)" "$(def VECS 8)" "CGR_RING 3"
b g35 level1/35 $F/groupnorm.json 1 ring-g128-6x2 "$(def GROUP 128)" "$(def VECS 8)" "CGR_RING 6" "CGR_RING_PIECES 2"
b g35 level1/35 $F/groupnorm.json 1 ring-g128-3-256t "$(def GROUP 128)" "$(def THREADS 256)" "$(def ROW_THREADS 256)" "$(def VECS 16)" "CGR_RING 3"
b g35 level1/35 $F/groupnorm.json 1 ring-g64-6x4 "CGR_RING 6" "CGR_RING_PIECES 4"
b n40 level1/40 $F/layernorm.json 0 v0-split64
b n40 level1/40 $F/layernorm.json 4 ring-g128-6x4 "CGR_RING 6" "CGR_RING_PIECES 4"
b n40 level1/40 $F/layernorm.json 4 ring-g128-7x4 "CGR_RING 7" "CGR_RING_PIECES 4"
b n40 level1/40 $F/layernorm.json 4 ring-g128-6x4-hints "CGR_RING 6" "CGR_RING_PIECES 4" "CGR_LAG_HINTS 1"
b n40 level1/40 $F/layernorm.json 4 ring-g128-12x8-hints "CGR_RING 12" "CGR_RING_PIECES 8" "CGR_LAG_HINTS 1"
b i34 level1/34 $F/instancenorm.json 0 v0-prefetch-cluster
b i34 level1/34 $F/instancenorm.json 0 ring-g16-3 "$(def CLUSTER 1)" "$(def VECS 8)" "CGR_GROUP 16" "CGR_RING 3"
b i34 level1/34 $F/instancenorm.json 0 ring-g8-6x4 "$(def CLUSTER 1)" "CGR_GROUP 8" "CGR_RING 6" "CGR_RING_PIECES 4"
