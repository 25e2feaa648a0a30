#!/usr/bin/env bash
# bench/labs/2026-12-04-round44.sh: variant lab round 44 (session 14): what 3xFP16 gains
# where round 43's kernels spilled (the 3xTF32 redo main loop in the same kernel costs
# registers: the conv and 64 x 64 warp tiles spill 68-100 bytes), measured without the
# redo (not shippable: no fp16 range check) against 3xTF32; and true 3xTF32 builds of 1 and
# 9 (round 43's were 3xFP16: the generator had changed under the build). The range
# problem again (made exact: multiples of 2^17 and 1/8).
# Prediction: conv without the redo 1.1-1.3x faster than 3xTF32; 1_Square 3xFP16 ~1.17x
# faster than 3xTF32 (round 42); gemm_f16_range correct in both precisions.
# OUT default .deps/lab44.   LAB=.deps/lab44 tests/gpu/evidence.sh lab
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab44}
S=${SPECS:-.deps/specs13/specs}  # mkdir -p .deps/specs13 && tar xzf bench/results/2026-12-04-1310-specs.tar.gz -C .deps/specs13
. bench/labs/lib.sh  # b, def
P2=$(def PREC 2)
P0=$(def PREC 0)
NOREDO='s/^\( *\)mainloop(Int<0>{});/\1;/'
R=tests/data/recipe/gemm_f16_range.json
b r tests/gpu/problems/gemm_f16_range.py $R 0 v0bk32-3xtf32 "$(def BK 32)" &
b r tests/gpu/problems/gemm_f16_range.py $R 0 v0bk32-3xf16 "$(def BK 32)" "$P2"
wait
b c1 level2/1 $S/level2/1_Conv2D_ReLU_BiasAdd.json 0 v0-3xf16-noredo "$P2" "$NOREDO" &
b c50 level1/50 $S/level1/50_conv_standard_2D__square_input__square_kernel.json 0 v0-3xf16-noredo "$P2" "$NOREDO"
wait
b g1 level1/1 $S/level1/1_Square_matrix_multiplication_.json 0 v0-3xtf32 "$P0" &
b g9 level1/9 $S/level1/9_Tall_skinny_matrix_multiplication_.json 0 v0-3xtf32 "$P0"
wait
b g3 level1/3 $S/level1/3_Batched_matrix_multiplication.json 0 v0-3xf16-noredo "$P2" "$NOREDO" &
b g1 level1/1 $S/level1/1_Square_matrix_multiplication_.json 0 v0-3xf16 "$P2"
wait
