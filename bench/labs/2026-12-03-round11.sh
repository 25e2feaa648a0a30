#!/usr/bin/env bash
# bench/labs/2026-12-03-round11.sh: variant lab round 11 (2026-12-03, session 7): 34_InstanceNorm
# (71.8% of SoL with persistent held chunks, lab round 10) as persistent clusters that
# hold a row in registers and bulk-copy the next row's chunks into shared memory
# meanwhile (bench/labs/kernels/instnorm_cluster_tma.cu), at four shapes, against the
# generator's persistent held chunks. OUT default .deps/lab11. Run with
#   LAB=.deps/lab11 tests/gpu/evidence.sh lab
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-.deps/lab11}
. bench/labs/lib.sh  # b, k
K=bench/labs/kernels/instnorm_cluster_tma.cu
b f34 level1/34 tests/data/recipe/instancenorm.json 1 a-persist-hold
k f34 level1/34 $K b-tma-512x8 "LAB_THREADS 512" "LAB_CLUSTER 8"
k f34 level1/34 $K c-tma-1024x8 "LAB_THREADS 1024" "LAB_CLUSTER 8"
k f34 level1/34 $K d-tma-256x16-minb2 "LAB_THREADS 256" "LAB_CLUSTER 16" "LAB_MINB 2"
k f34 level1/34 $K e-tma-512x16-minb2 "LAB_THREADS 512" "LAB_CLUSTER 16" "LAB_MINB 2"
