#!/usr/bin/env bash
# bench/labs/2026-12-03-round12.sh: variant lab round 12 (2026-12-03, session 7): round 11's
# winner (persistent clusters bulk-copying the next row, bench/labs/kernels/
# instnorm_cluster_tma.cu) made a recipe: recipes/norm.cu's ROWS_PREFETCH, the generator's
# variants 0 (512 threads) and 3 (1024) for 34_InstanceNorm, against the lab kernel and
# the persistent held chunks (variant 2). OUT default .deps/lab12. Run with
#   LAB=.deps/lab12 tests/gpu/evidence.sh lab
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-.deps/lab12}
. bench/labs/lib.sh  # b, k
I=tests/data/recipe/instancenorm.json
b g34 level1/34 $I 0 a-v0-prefetch-512
b g34 level1/34 $I 3 b-v3-prefetch-1024
b g34 level1/34 $I 2 c-v2-persist-hold
k g34 level1/34 bench/labs/kernels/instnorm_cluster_tma.cu d-lab-tma-512x8 "LAB_THREADS 512" "LAB_CLUSTER 8"
