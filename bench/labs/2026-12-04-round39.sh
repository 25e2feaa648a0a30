#!/usr/bin/env bash
# bench/labs/2026-12-04-round39.sh: variant lab round 39 (session 13): level 2's 18 and 80,
# newly covered: reductions over the size-1 dim a keepdim row reduction leaves are the
# value itself. 18 (sum over the row of a Linear with a bias, then max/mean/logsumexp x2
# of the (B, 1) sum) becomes A @ (the sum of W's rows) plus the sum of the bias, added
# once (recipes/gemm_gemv.cu CGR_SUMB_COLS); 80 (max over the row, then mean over the
# (B, 1) max: gelu(max - max)) is the GEMM with its row max.
# Prediction: both correct; 18 ~30x eager like 14 (a matrix-vector product instead of a
# 137 GFLOP GEMM), 80 ~1.4x (the GEMM with a row reduction).
# OUT default .deps/lab39.   LAB=.deps/lab39 tests/gpu/evidence.sh lab
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab39}
F=tests/data/recipe
. bench/labs/lib.sh  # b, def
b g18 level2/18 $F/l2_matmul_sum_max_avg_lse_lse.json 0 sumb-cols
b g18 level2/18 $F/l2_matmul_sum_max_avg_lse_lse.json "$(listed $F/l2_matmul_sum_max_avg_lse_lse.json "gemm 3xtf32")" gemm-rowsum
b g80 level2/80 $F/kb_l2_80_max_sub_gelu.json 0 rowmax
