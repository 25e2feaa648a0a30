#!/usr/bin/env bash
# bench/labs/2026-12-04-round41.sh: variant lab round 41 (session 13): level 2's 51
# (Gemm, Subtract, GlobalAvgPool, LogSumExp, GELU, ResidualAdd): the row mean of a Linear
# minus a per-column parameter, its (size-1) logsumexp, GELU, then broadcast back over the
# output's rows with the input x added (CGR_BCAST_W). Variant 0: the mean as x @ (the mean
# of W's rows) (gemm_gemv.cu CGR_SUMB, CGR_SUMB_COLS, bcast_kernel); and the first
# tensor-core variant (gemm_tc.cu's row_kernel, then bcast_kernel).
# Prediction: both correct; variant 0 ~40x eager (a 64 MiB read of x and W's 256 MiB
# instead of a 275 GFLOP product), the GEMM form ~1.4x.
# OUT default .deps/lab41.   LAB=.deps/lab41 tests/gpu/evidence.sh lab
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab41}
F=tests/data/recipe
. bench/labs/lib.sh  # b, def
b g51 level2/51 $F/kb_l2_51_sub_avg_lse_gelu_res.json 0 sumb-bcast
b g51 level2/51 $F/kb_l2_51_sub_avg_lse_gelu_res.json "$(listed $F/kb_l2_51_sub_avg_lse_gelu_res.json "gemm 3xtf32")" gemm-bcast
