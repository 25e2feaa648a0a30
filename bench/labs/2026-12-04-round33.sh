#!/usr/bin/env bash
# bench/labs/2026-12-04-round33.sh: variant lab round 33 (session 12): recipes/gemm_wgmma.cu
# with the producer's loads as cp.async copies three k-tiles ahead into a raw ring in
# shared memory (CGR_RAW_STAGES 3, 2 split stages), after round 32 found the first form
# (each k-tile loaded into registers, split, stored: one tile of loads in flight) slower
# than mma.sync everywhere (1_Square 2.63 ms against 1.97).
# Prediction: the producer no longer waits a memory latency a k-tile: 1_Square ~1.4 ms
# (the consumers' 3 WGMMAs a k-block then bound it), faster than gemm_tc.cu's 1.97.
# (The raw ring was the default then; since round 34 it is the lab option CGR_RAW_STAGES 3.)
# OUT default .deps/lab33.   LAB=.deps/lab33 tests/gpu/evidence.sh lab
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab33}
F=tests/data/recipe
. bench/labs/lib.sh  # b, def
b m1 level1/1 $F/matmul.json "$(listed $F/matmul.json "gemm wgmma")" wgmma-raw3 "CGR_RAW_STAGES 3" "$(def STAGES 2)"
b m16 level1/16 $F/kb_l1_16_matmul_ta.json "$(listed $F/kb_l1_16_matmul_ta.json "gemm wgmma")" wgmma-raw3 "CGR_RAW_STAGES 3" "$(def STAGES 2)"
b m17 level1/17 $F/matmul_tb.json "$(listed $F/matmul_tb.json "gemm wgmma")" wgmma-raw3 "CGR_RAW_STAGES 3" "$(def STAGES 2)"
b m3 level1/3 $F/bmm.json "$(listed $F/bmm.json "gemm wgmma")" wgmma-raw3 "CGR_RAW_STAGES 3" "$(def STAGES 2)"
b m9 level1/9 $F/tall_skinny.json "$(listed $F/tall_skinny.json "gemm wgmma")" wgmma-raw3 "CGR_RAW_STAGES 3" "$(def STAGES 2)"
b g12 level2/12 $F/kb_l2_12_gemm_mul_leaky.json "$(listed $F/kb_l2_12_gemm_mul_leaky.json "gemm wgmma")" wgmma-raw3 "CGR_RAW_STAGES 3" "$(def STAGES 2)"
b m8 level1/8 $F/matmul_irregular.json "$(listed $F/matmul_irregular.json "gemm wgmma")" wgmma-raw3 "CGR_RAW_STAGES 3" "$(def STAGES 2)"
