#!/usr/bin/env bash
# bench/labs/2026-12-04-round32.sh: variant lab round 32 (session 12): the first run of
# recipes/gemm_wgmma.cu (3xTF32 on Hopper's warpgroup MMAs, a producer warpgroup
# splitting the operands into K-major swizzled tiles) against gemm_tc.cu's first choice
# (mma.sync), on the GEMM problems of each operand layout: 1 (A K-major, B N-major),
# 16 (A M-major), 17 (both K-major), 8 (irregular sizes), 3 (batched), 9 (K 32) and
# level 2 #12 (Linear + epilogue). On 1 also the WGMMA kernel chained without promotion
# (CGR_PROMOTE 0: how far the tensor cores' truncating adds drift at K 4096) and in plain
# TF32 (CGR_PREC 1: the ceiling, expected to fail 1e-4).
# Prediction: all 3xTF32 WGMMA builds correct; 1.5-2.5x faster than mma.sync at
# 4096^3 (the SoL column's 43% of fp32 SIMT peak now; WGMMA's TF32 peak is ~7x that).
# (Variants by what they are, `listed`: the WGMMA kernel was variant 0 then; it is listed
# after gemm_tc.cu's since round 35.)
# OUT default .deps/lab32.   LAB=.deps/lab32 tests/gpu/evidence.sh lab
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab32}
F=tests/data/recipe
. bench/labs/lib.sh  # b, def
b m1 level1/1 $F/matmul.json "$(listed $F/matmul.json "gemm wgmma")" wgmma-128x128-s3
b m1 level1/1 $F/matmul.json "$(listed $F/matmul.json "gemm 3xtf32")" tc-128x128
b m1 level1/1 $F/matmul.json "$(listed $F/matmul.json "gemm wgmma")" wgmma-chained "$(def PROMOTE 0)"
b m1 level1/1 $F/matmul.json "$(listed $F/matmul.json "gemm wgmma")" wgmma-tf32 "$(def PREC 1)"
b m16 level1/16 $F/kb_l1_16_matmul_ta.json "$(listed $F/kb_l1_16_matmul_ta.json "gemm wgmma")" wgmma-128x128-s3
b m16 level1/16 $F/kb_l1_16_matmul_ta.json "$(listed $F/kb_l1_16_matmul_ta.json "gemm 3xtf32")" tc-128x128
b m17 level1/17 $F/matmul_tb.json "$(listed $F/matmul_tb.json "gemm wgmma")" wgmma-128x128-s3
b m17 level1/17 $F/matmul_tb.json "$(listed $F/matmul_tb.json "gemm 3xtf32")" tc-128x128
b m8 level1/8 $F/matmul_irregular.json "$(listed $F/matmul_irregular.json "gemm wgmma")" wgmma-128x128-s3
b m8 level1/8 $F/matmul_irregular.json "$(listed $F/matmul_irregular.json "gemm 3xtf32")" tc-128x64
b m3 level1/3 $F/bmm.json "$(listed $F/bmm.json "gemm wgmma")" wgmma-128x128-s3
b m3 level1/3 $F/bmm.json "$(listed $F/bmm.json "gemm 3xtf32")" tc-first
b m9 level1/9 $F/tall_skinny.json "$(listed $F/tall_skinny.json "gemm wgmma")" wgmma-128x128-s3
b m9 level1/9 $F/tall_skinny.json "$(listed $F/tall_skinny.json "gemm 3xtf32")" tc-first
b g12 level2/12 $F/kb_l2_12_gemm_mul_leaky.json "$(listed $F/kb_l2_12_gemm_mul_leaky.json "gemm wgmma")" wgmma-128x128-s3
b g12 level2/12 $F/kb_l2_12_gemm_mul_leaky.json "$(listed $F/kb_l2_12_gemm_mul_leaky.json "gemm 3xtf32")" tc-first
