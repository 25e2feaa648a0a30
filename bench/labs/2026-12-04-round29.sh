#!/usr/bin/env bash
# bench/labs/2026-12-04-round29.sh: variant lab round 29 (2026-12-03, session 11): a whole
# vector's statistics taken together (recipes/norm.cu local_add_vec: the vector's values
# and squares summed in a tree, the shift chosen once a vector, the count added once),
# against the same builds before it (old-*, built from recipes/norm.cu at commit 8632a84).
# Round 28 (ncu): the ring as a plain copy runs at 82% of DRAM peak, 3.80 ms under ncu,
# against the real ring's 5.47: the loss is the arithmetic (1.76 G warp instructions,
# ~11 FP32 instructions an element, a serial chain of adds a thread), not the pipeline.
# Predictions: GroupNorm ring 4.3-4.5 ms; held chunks and InstanceNorm's cluster 2-5% faster;
# L2 norm (rows in a cluster) unchanged or faster.
# OUT default .deps/lab29.   LAB=.deps/lab29 tests/gpu/evidence.sh lab
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab29}
F=tests/data/recipe
. bench/labs/lib.sh  # b, def
builds() {  # $1: name prefix
  b g35 level1/35 $F/groupnorm.json 0 "$1ring-g64-6x4"
  b g35 level1/35 $F/groupnorm.json 1 "$1persist-hold"
  b i34 level1/34 $F/instancenorm.json 0 "$1prefetch-cluster"
  b l39 level1/39 $F/l2norm.json 0 "$1v0"
}
builds new-
b g35 level1/35 $F/groupnorm.json 0 new-ring-g64-1024t "$(def THREADS 1024)" "$(def ROW_THREADS 1024)" "$(def VECS 8)"
cp recipes/norm.cu /tmp/norm.cu.new
git show 8632a84:recipes/norm.cu > recipes/norm.cu
builds old-
cp /tmp/norm.cu.new recipes/norm.cu
