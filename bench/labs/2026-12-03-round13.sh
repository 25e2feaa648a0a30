#!/usr/bin/env bash
# bench/labs/2026-12-03-round13.sh: variant lab round 13 (2026-12-03, session 7). Round 12's
# prefetching recipe ran at 4.465 ms against the lab kernel's 3.874 on 34_InstanceNorm:
# the recipe computed rsqrt(var + eps) (as 1 / sqrtf) for every element, the partial-
# vector branches of each vector keeping the compiler from sharing it. recipes/norm.cu's
# vec_span now says at compile time that rows of whole vectors have no partial vectors.
# The norms whose rows are whole vectors, after the change. OUT default .deps/lab13. Run with
#   LAB=.deps/lab13 tests/gpu/evidence.sh lab
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-.deps/lab13}
. bench/labs/lib.sh  # b, k
F=tests/data/recipe
b h34 level1/34 $F/instancenorm.json 0 a-v0-prefetch-512
b h34 level1/34 $F/instancenorm.json 2 b-v2-persist-hold
k h34 level1/34 bench/labs/kernels/instnorm_cluster_tma.cu c-lab-tma-512x8 "LAB_THREADS 512" "LAB_CLUSTER 8"
b i35 level1/35 $F/groupnorm.json 0 a-v0-split4
b i35 level1/35 $F/groupnorm.json 1 b-v1-split2
b i35 level1/35 $F/groupnorm.json 3 c-v3-persist-hold
b j40 level1/40 $F/layernorm.json 0 a-v0-split64
b k37 level1/37 $F/frobenius.json 0 a-v0
