#!/usr/bin/env bash
# bench/labs/2026-12-04-round36.sh: variant lab round 36 (session 12): which side holds
# recipes/gemm_wgmma.cu at 2.6 ms on 1_Square (4096^3; gemm_tc.cu 1.97). Diagnostics with
# wrong results on purpose: the producer only handing stages over (CGR_LAB_NO_LOAD: the
# consumers' time alone), the consumers issuing no WGMMA (CGR_LAB_NO_MMA: the producer's
# alone); and tiles: 128 x 64 (with two partials in flight, CGR_WG_OVERLAP, which fits the
# registers there), 128 x 256 chained (no partial), 64 x 128 (one consumer warpgroup).
# Prediction: NO_LOAD ~1.0 ms, NO_MMA ~2.5 ms (the producer is the side that holds it).
# OUT default .deps/lab36.   LAB=.deps/lab36 tests/gpu/evidence.sh lab
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab36}
F=tests/data/recipe
. bench/labs/lib.sh  # b, def
b m1 level1/1 $F/matmul.json "$(listed $F/matmul.json "gemm wgmma")" wgmma-no-load "CGR_LAB_NO_LOAD 1"
b m1 level1/1 $F/matmul.json "$(listed $F/matmul.json "gemm wgmma")" wgmma-no-mma "CGR_LAB_NO_MMA 1"
b m1 level1/1 $F/matmul.json "$(listed $F/matmul.json "gemm wgmma")" wgmma-128x64-overlap "$(def BN 64)" "CGR_WG_OVERLAP 1"
b m1 level1/1 $F/matmul.json "$(listed $F/matmul.json "gemm wgmma")" wgmma-128x64 "$(def BN 64)"
b m1 level1/1 $F/matmul.json "$(listed $F/matmul.json "gemm wgmma")" wgmma-128x256-chained "$(def BN 256)" "$(def STAGES 2)" "$(def PROMOTE 0)"
b m1 level1/1 $F/matmul.json "$(listed $F/matmul.json "gemm wgmma")" wgmma-64x128 "$(def BM 64)" "$(def STAGES 4)"
