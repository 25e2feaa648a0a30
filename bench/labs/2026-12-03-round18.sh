#!/usr/bin/env bash
# bench/labs/2026-12-03-round18.sh: variant lab round 18 (2026-12-03, session 10): held chunks
# with a lag (CGR_HOLD_LAG, recipes/norm.cu): persistent CTAs take tasks in ticket order; task
# (r, c) publishes the statistics of chunk c of row r and writes chunk c of row r - LAG,
# re-reading it, LAG rows after its statistics read it (from L2 while LAG + 1 rows fit), so
# that x is read from memory once and no CTA waits for a row in the steady state (round 17's
# forms all lost to the row barrier).
# - 35_GroupNorm_ (896 rows of 8 MiB): the generator's v0 (lag 1, 256 x 4 vectors, split
#   512), v1 (persistent held chunks, 4.95-4.98 ms in sweeps), lag 2, 256 x 2 (split 1024),
#   512 x 4 (split 256).
# - 40_LayerNorm (16 rows of 16 MiB; weight and bias 16 MiB each, the same every row): v0
#   (lag 1, 256 x 4, split 1024), v1 (split 64 in three kernels, 0.229 ms), 256 x 2.
# - 34_InstanceNorm (rows of 1 MiB): v0 (prefetching cluster of 8 x 512, 4.04 ms), v1 (lag 1).
# Predictions (lag 1, no hints): GroupNorm ~4.1 ms (85% of SoL: x once from DRAM, once from L2; the
# flag and slot reads of a task overlap its loads), lag 2 the same or 2% slower (more L2
# footprint); LayerNorm lag 1 ~0.20 ms (the weights' 32 MiB compete with 32 MiB of x rows
# in L2), InstanceNorm lag 1 within 3% of the cluster.
# OUT default .deps/lab18.   LAB=.deps/lab18 tests/gpu/evidence.sh lab
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab18}
F=tests/data/recipe
. bench/labs/lib.sh  # b, def
b g35 level1/35 $F/groupnorm.json 0 v0-lag1-256x4
b g35 level1/35 $F/groupnorm.json 1 v1-persist-hold
b g35 level1/35 $F/groupnorm.json 0 lag2-256x4 "$(def HOLD_LAG 2)"
b g35 level1/35 $F/groupnorm.json 0 lag1-256x2 "$(def VECS 2)" "$(def SPLIT 1024)"
b g35 level1/35 $F/groupnorm.json 0 lag1-512x4 "$(def THREADS 512)" "$(def ROW_THREADS 512)" "$(def SPLIT 256)"
b n40 level1/40 $F/layernorm.json 0 v0-lag1-256x4
b n40 level1/40 $F/layernorm.json 1 v1-split64
b n40 level1/40 $F/layernorm.json 0 lag1-256x2 "$(def VECS 2)" "$(def SPLIT 2048)"
b i34 level1/34 $F/instancenorm.json 0 v0-prefetch-cluster
b i34 level1/34 $F/instancenorm.json 1 v1-lag1-256x4
# with L2 hints (CGR_LAG_HINTS: the re-read and y evict-first, weight and bias evict-last):
# prediction LayerNorm 0.17 ms (weights kept), GroupNorm within 1% of lag 1 (its weights are tiny)
b g35 level1/35 $F/groupnorm.json 0 lag1-256x4-hints "CGR_LAG_HINTS 1"
b n40 level1/40 $F/layernorm.json 0 lag1-256x4-hints "CGR_LAG_HINTS 1"
