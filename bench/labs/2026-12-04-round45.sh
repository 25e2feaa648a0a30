#!/usr/bin/env bash
# bench/labs/2026-12-04-round45.sh: variant lab round 45 (session 14): does the main-loop
# lambda (gemm_tc.cu's `mainloop`, there for CGR_PREC 2's redo) cost the 3xTF32 kernels
# anything? 1_Square variant 0's tile in 3xTF32 from the templates before session 14
# (commit ae2ed7b) against the same from this commit, and 3xFP16, in one process.
# Prediction: old and new 3xTF32 within 1%; 3xFP16 ~1.2x faster.
# OUT default .deps/lab45.   LAB=.deps/lab45 tests/gpu/evidence.sh lab
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab45}
S=${SPECS:-.deps/specs13/specs}
. bench/labs/lib.sh  # b, def
old=$(mktemp -d)
git archive ae2ed7b recipes | tar x -C "$old"
build/cutegen recipe --spec $S/level1/1_Square_matrix_multiplication_.json --variant 0 --recipes "$old/recipes" \
  --out "$old/old1.cu" >/dev/null
b g1 level1/1 "$old/old1.cu" 0 old-3xtf32 "$(def PREC 0)"
b g1 level1/1 $S/level1/1_Square_matrix_multiplication_.json 0 new-3xtf32 "$(def PREC 0)"
b g1 level1/1 $S/level1/1_Square_matrix_multiplication_.json 0 new-3xf16 "$(def PREC 2)"
rm -rf "$old"
