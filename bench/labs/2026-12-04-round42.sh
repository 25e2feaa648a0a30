#!/usr/bin/env bash
# bench/labs/2026-12-04-round42.sh: variant lab round 42 (session 14): 3xFP16 split
# precision (CGR_PREC 2, recipes/tf32_mma.cuh): the TF32 fragments of two k-blocks
# repacked as one m16n8k16 f16 MMA, hi = fp16(x), lo = fp16((x - hi) 2^11), three MMAs a
# 16-deep k-block instead of three a k-block of 8; tiles whose accumulators are not finite
# run again in 3xTF32. The generator's variant 0 (3xTF32) against the same tile in 3xFP16.
# Prediction: GEMMs 1.3-1.5x faster than 3xTF32 (half the MMA issues and partial adds;
# ldmatrix and the splits stay), errors like 3xTF32's (~1e-6 relative); the convolutions
# less (their 4-byte gather stays): 1.1-1.3x; gemm_f16_range (entries past fp16's range)
# correct through the redo.
# OUT default .deps/lab42.   LAB=.deps/lab42 tests/gpu/evidence.sh lab
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab42}
S=${SPECS:-.deps/specs13/specs}  # mkdir -p .deps/specs13 && tar xzf bench/results/2026-12-04-1310-specs.tar.gz -C .deps/specs13
. bench/labs/lib.sh  # b, def
P2=$(def PREC 2)
# the range problem's variant 0 has BK 16 (3xFP16 needs 32): both with BK 32
b r tests/gpu/problems/gemm_f16_range.py tests/data/recipe/gemm_f16_range.json 0 v0bk32-3xtf32 "$(def BK 32)" &
b r tests/gpu/problems/gemm_f16_range.py tests/data/recipe/gemm_f16_range.json 0 v0bk32-3xf16 "$(def BK 32)" "$P2"
wait
b g1 level1/1 $S/level1/1_Square_matrix_multiplication_.json 0 v0-3xtf32 &
b g1 level1/1 $S/level1/1_Square_matrix_multiplication_.json 0 v0-3xf16 "$P2"
wait
b c1 level2/1 $S/level2/1_Conv2D_ReLU_BiasAdd.json 0 v0-3xtf32 &
b c1 level2/1 $S/level2/1_Conv2D_ReLU_BiasAdd.json 0 v0-3xf16 "$P2"
wait
b g2 level1/2 $S/level1/2_Standard_matrix_multiplication_.json 0 v0-3xf16 "$P2" &
b g3 level1/3 $S/level1/3_Batched_matrix_multiplication.json 0 v0-3xf16 "$P2"
wait
b g9 level1/9 $S/level1/9_Tall_skinny_matrix_multiplication_.json 0 v0-3xf16 "$P2" &
b g6 level1/6 $S/level1/6_Matmul_with_large_K_dimension_.json 0 v0-3xf16 "$P2"
wait
b c4 level2/4 $S/level2/4_Conv2d_Mish_Mish.json 0 v0-3xf16 "$P2" &
b c50 level1/50 $S/level1/50_conv_standard_2D__square_input__square_kernel.json 0 v0-3xf16 "$P2"
wait
