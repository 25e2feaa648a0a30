#!/usr/bin/env bash
# bench/labs/2026-12-04-round35.sh: variant lab round 35 (session 12): recipes/gemm_wgmma.cu
# with CGR_TMA (both operands K-major): each stage's tiles arrive by TMA straight into the
# big parts' swizzled layout, thread 0 keeping the TMAs two tiles ahead; the producer
# warpgroup only splits each landed stage in place (big = x & ~0x1fff, small = tf32(x -
# big), elementwise: both tiles share the layout). Round 32's ncu: the producer's global
# loads (one tile in flight) were the stall.
# Prediction: 17_Matmul_with_transposed_B 2.39 -> ~1.6 ms (gemm_tc.cu's 1.99); level 2 #12
# and #76 (Linear, K 8192) likewise below gemm_tc.cu.
# Result: no gain (17: 2.381 ms; docs/perf.md), and cutegen's harness rejects the build (CuTe's
# host-side make_tma_atom links iostream): the TMA form was removed after this round; it is
# in commit 394eaad (build this script from there).
# OUT default .deps/lab35.   LAB=.deps/lab35 tests/gpu/evidence.sh lab
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab35}
F=tests/data/recipe
. bench/labs/lib.sh  # b, def
b m17 level1/17 $F/matmul_tb.json "$(listed $F/matmul_tb.json "gemm wgmma")" wgmma-tma
b g12 level2/12 $F/kb_l2_12_gemm_mul_leaky.json "$(listed $F/kb_l2_12_gemm_mul_leaky.json "gemm wgmma")" wgmma-tma
b g76 level2/76 $F/l2_gemm_add_relu.json "$(listed $F/l2_gemm_add_relu.json "gemm wgmma")" wgmma-tma
b g76 level2/76 $F/l2_gemm_add_relu.json 0 tc-first
