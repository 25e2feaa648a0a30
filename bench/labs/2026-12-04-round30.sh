#!/usr/bin/env bash
# bench/labs/2026-12-04-round30.sh: variant lab round 30 (prepared in session 11, not yet
# run): the SM80-class paths on the H200 (issue 7, part 5). Each build is the generator's
# own first choice for an A100 (`cutegen recipe --gpu a100`, LAB_GPU=a100: no clusters,
# bulk copies, rings or WGMMA), compiled for sm_90a so that it runs here, judged by the
# reference process like every lab build (fresh inputs at 1e-4, ABBA against eager).
# Prediction: all correct; slower than the H200's own first choices (split norms instead
# of rings and clusters: GroupNorm ~5.5 ms, softmax ~3.6).
# OUT default .deps/lab30.   LAB=.deps/lab30 tests/gpu/evidence.sh lab
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab30}
F=tests/data/recipe
. bench/labs/lib.sh  # b, def
export LAB_GPU=a100
b s23 level1/23 $F/softmax.json 0 a100-v0
b s24 level1/24 $F/log_softmax.json 0 a100-v0
b i34 level1/34 $F/instancenorm.json 0 a100-v0
b g35 level1/35 $F/groupnorm.json 0 a100-v0
b l39 level1/39 $F/l2norm.json 0 a100-v0
b n40 level1/40 $F/layernorm.json 0 a100-v0
b c95 level1/95 $F/cross_entropy.json 0 a100-v0
b t99 level1/99 $F/triplet_margin.json 0 a100-v0
b t57 level1/57 $F/convt_l1_57_2d.json 0 a100-v0
b t205 level2/5 $F/convt_l2_5_sub_tanh.json 0 a100-v0
b m1 level1/1 $F/matmul.json 0 a100-v0
