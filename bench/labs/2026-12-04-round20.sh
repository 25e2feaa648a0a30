#!/usr/bin/env bash
# bench/labs/2026-12-04-round20.sh: variant lab round 20 (prepared in session 10, not yet run):
# the transposed convolutions' variants. The 19:30 sweep judged only variant 0 (3xTF32,
# 128x64x32) of each: 57 (stride 1, M 8.4 M, N 64, K 576) 20.9 ms against cuDNN's 5.4; level 2
# #5 (stride 2: a quarter of the taps valid) 34.0 ms against 7.5. Here every variant of both,
# the plain TF32 copy (v5) included: does it pass 1e-4, and how much of the time is the
# A gather (4-byte cp.async an element) rather than the MMAs?
# Prediction: TF32 within 1.3x of 3xTF32's time (gather-bound), 57's error ~1e-3 (fails
# 1e-4); the smaller tiles no faster.
# OUT default .deps/lab20.   LAB=.deps/lab20 tests/gpu/evidence.sh lab
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab20}
F=tests/data/recipe
. bench/labs/lib.sh  # b, def
for v in 0 1 2 3 4 5; do
  b t57 level1/57 $F/convt_l1_57_2d.json $v v$v
  b t205 level2/5 $F/convt_l2_5_sub_tanh.json $v v$v
done
