#!/usr/bin/env bash
# bench/labs/2026-12-04-round43.sh: variant lab round 43 (session 14): 3xFP16 again after
# round 42, with the pair's registers cut (B's halves for all columns, A's a row of atoms
# at a time: round 42's conv spilled 100 bytes and lost 14%); A/B pairs on the tiles with
# 64 x 64 warp tiles (3_Batched, 9_Tall_skinny) and the convolutions; the range problem
# made well conditioned (whole rows of A scaled past fp16's range).
# Prediction: no spills; the convolutions at least as fast as 3xTF32, the 64 x 64 warp
# tiles 1.1-1.2x faster than 3xTF32; gemm_f16_range correct in both precisions.
# OUT default .deps/lab43.   LAB=.deps/lab43 tests/gpu/evidence.sh lab
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab43}
S=${SPECS:-.deps/specs13/specs}  # mkdir -p .deps/specs13 && tar xzf bench/results/2026-12-04-1310-specs.tar.gz -C .deps/specs13
. bench/labs/lib.sh  # b, def
P2=$(def PREC 2)
R=tests/data/recipe/gemm_f16_range.json
b r tests/gpu/problems/gemm_f16_range.py $R 0 v0bk32-3xtf32 "$(def BK 32)" &
b r tests/gpu/problems/gemm_f16_range.py $R 0 v0bk32-3xf16 "$(def BK 32)" "$P2"
wait
b c1 level2/1 $S/level2/1_Conv2D_ReLU_BiasAdd.json 0 v0-3xtf32 &
b c1 level2/1 $S/level2/1_Conv2D_ReLU_BiasAdd.json 0 v0-3xf16 "$P2"
wait
b g3 level1/3 $S/level1/3_Batched_matrix_multiplication.json 0 v0-3xtf32 &
b g3 level1/3 $S/level1/3_Batched_matrix_multiplication.json 0 v0-3xf16 "$P2"
wait
b g9 level1/9 $S/level1/9_Tall_skinny_matrix_multiplication_.json 0 v0-3xtf32 &
b g9 level1/9 $S/level1/9_Tall_skinny_matrix_multiplication_.json 0 v0-3xf16 "$P2"
wait
b g1 level1/1 $S/level1/1_Square_matrix_multiplication_.json 0 v0-3xtf32 &
b g1 level1/1 $S/level1/1_Square_matrix_multiplication_.json 0 v0-3xf16 "$P2"
wait
b c50 level1/50 $S/level1/50_conv_standard_2D__square_input__square_kernel.json 0 v0-3xtf32 &
b c50 level1/50 $S/level1/50_conv_standard_2D__square_input__square_kernel.json 0 v0-3xf16 "$P2"
wait
