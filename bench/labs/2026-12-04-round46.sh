#!/usr/bin/env bash
# bench/labs/2026-12-04-round46.sh: variant lab round 46 (session 15): where a convolution's
# time goes. Level 2 #1 (Conv2d 64 -> 128, 3x3, M 2032128, K 576) variant 0 (128 x 128 x 32,
# 3xTF32) against level 1 #1's GEMM in the same tile and precision, both under ncu.
# Prediction: the conv issues far more instructions a k-tile (a 4-byte cp.async and its
# bounds test per A element) and stalls on them; the GEMM's tensor pipe is busier.
# OUT default .deps/lab46.   LAB=.deps/lab46 tests/gpu/evidence.sh lab
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab46}
S=${SPECS:-.deps/specs13/specs}
. bench/labs/lib.sh  # b, def
b c1 level2/1 $S/level2/1_Conv2D_ReLU_BiasAdd.json 0 conv-3xtf32 "$(def PREC 0)"
b g1 level1/1 $S/level1/1_Square_matrix_multiplication_.json 0 gemm-3xtf32 "$(def PREC 0)"
