#!/usr/bin/env bash
# bench/labs/2026-12-04-round37.sh: variant lab round 37 (prepared in session 12, not yet run):
# recipes/gemm_wgmma.cu with two producer warpgroups (CGR_PRODUCERS 2: one loads and splits
# A, the other B; 512 threads, ptxas at 128 registers with 92 bytes spilled). Round 36 timed
# the sides apart under ncu on 1_Square: consumers alone 1.38 ms, the one producer alone
# 2.46, the whole 3.29 (gemm_tc.cu 2.66): the producer's instruction stream is the limit.
# Also the producer-alone diagnostic with two producers, under ncu, to see it halve.
# Prediction: 1_Square 2.63 -> ~1.7 ms (below gemm_tc.cu's 1.97) unless the consumers' spills
# cost more than the producer gains; 17 and level 2 #76 (both K-major) likewise.
# OUT default .deps/lab37.   LAB=.deps/lab37 tests/gpu/evidence.sh lab; then
#   ncu --kernel-name regex:gemm_kernel --launch-count 1 --section SpeedOfLight python3 \
#     bench/variant_lab.py --task .deps/kernelbench/level1/1_Square_matrix_multiplication_.py \
#     .deps/lab37/m1/wgmma-2prod-no-mma.so
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab37}
F=tests/data/recipe
. bench/labs/lib.sh  # b, def
b m1 level1/1 $F/matmul.json "$(listed $F/matmul.json "gemm wgmma")" wgmma-2prod "CGR_PRODUCERS 2"
b m1 level1/1 $F/matmul.json "$(listed $F/matmul.json "gemm wgmma")" wgmma-1prod
b m1 level1/1 $F/matmul.json 0 tc-first
b m1 level1/1 $F/matmul.json "$(listed $F/matmul.json "gemm wgmma")" wgmma-2prod-no-mma "CGR_PRODUCERS 2" "CGR_LAB_NO_MMA 1"
b m17 level1/17 $F/matmul_tb.json "$(listed $F/matmul_tb.json "gemm wgmma")" wgmma-2prod "CGR_PRODUCERS 2"
b g76 level2/76 $F/l2_gemm_add_relu.json "$(listed $F/l2_gemm_add_relu.json "gemm wgmma")" wgmma-2prod "CGR_PRODUCERS 2"
