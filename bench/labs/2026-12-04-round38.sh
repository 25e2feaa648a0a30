#!/usr/bin/env bash
# bench/labs/2026-12-04-round38.sh: variant lab round 38 (session 13): the GEMM + GroupNorm
# chains of level 2 (30, 37, 62, 88, 94), new in recipes/gemm_tc.cu (CGR_ROWRED 8: the
# product through cgr_pre stored as scratch, then gn_kernel: a group's lanes take its mean
# and variance in registers and rewrite it). Variant 0 of each, and 37's variant 1.
# Prediction: all correct; 1.3-1.5x eager like the other level-2 GEMM chains (the GEMM is
# ~95% of the time: the scratch's extra read and write is 64 MiB against a 137 GFLOP
# product), 37 lower (~1.2x: its 512 MiB output is written twice and read once, K 1024).
# OUT default .deps/lab38.   LAB=.deps/lab38 tests/gpu/evidence.sh lab
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab38}
F=tests/data/recipe
. bench/labs/lib.sh  # b, def
b g30 level2/30 $F/l2_gemm_groupnorm_hardtanh.json 0 gn-v0
b g37 level2/37 $F/l2_matmul_swish_sum_groupnorm.json 0 gn-v0
b g37 level2/37 $F/l2_matmul_swish_sum_groupnorm.json 1 gn-v1
b g62 level2/62 $F/l2_matmul_groupnorm_leaky_sum.json 0 gn-v0
b g88 level2/88 $F/l2_gemm_groupnorm_swish_mul_swish.json 0 gn-v0
b g94 level2/94 $F/l2_gemm_bias_hardtanh_mish_groupnorm.json 0 gn-v0
