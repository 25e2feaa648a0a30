#!/usr/bin/env bash
# bench/labs/2026-12-04-round34.sh: variant lab round 34 (session 12): recipes/gemm_wgmma.cu
# with the producer holding two k-tiles of loads in flight in registers (tile kt + 1 fetched
# before tile kt is split and stored; 3 split stages). ncu on round 32's form (1_Square,
# docs/perf.md): the tensor pipe 35.7% busy, warps stalled on global loads (long
# scoreboard, 47% of their cycles): the producer's one tile of loads in flight.
# Prediction: 1_Square 2.63 -> ~1.9 ms (ptxas spills 284 bytes at the 168-register cap: if
# the consumers' accumulators are among them, less).
# Result: 8.66 ms on 1_Square (the spills); the form was reverted before it was committed,
# so this script now builds round 32's form.
# OUT default .deps/lab34.   LAB=.deps/lab34 tests/gpu/evidence.sh lab
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab34}
F=tests/data/recipe
. bench/labs/lib.sh  # b, def
b m1 level1/1 $F/matmul.json "$(listed $F/matmul.json "gemm wgmma")" wgmma-prefetch2
b m16 level1/16 $F/kb_l1_16_matmul_ta.json "$(listed $F/kb_l1_16_matmul_ta.json "gemm wgmma")" wgmma-prefetch2
b m17 level1/17 $F/matmul_tb.json "$(listed $F/matmul_tb.json "gemm wgmma")" wgmma-prefetch2
b g12 level2/12 $F/kb_l2_12_gemm_mul_leaky.json "$(listed $F/kb_l2_12_gemm_mul_leaky.json "gemm wgmma")" wgmma-prefetch2
b m9 level1/9 $F/tall_skinny.json "$(listed $F/tall_skinny.json "gemm wgmma")" wgmma-prefetch2
