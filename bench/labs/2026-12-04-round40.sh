#!/usr/bin/env bash
# bench/labs/2026-12-04-round40.sh: variant lab round 40 (session 13): transposed
# convolutions as sub-pixel phases (recipes/conv_tc.cu CGR_PHASES: outputs grouped by
# (o + pad) mod stride, each phase a dense implicit GEMM over the taps that reach the
# input; before, every tap was multiplied and 3 of 4 (2D) or 7 of 8 (3D) were zero-filled).
# Level 2's strided ConvTranspose chains, variant 0 with and without the phases, on the
# real specs dumped in this session (SPECS, default .deps/specs13/specs).
# Prediction: all correct; 3D (20, 26, 100) ~4-6x faster than without (8x fewer MMAs,
# the gather and the epilogue not shrinking), 2D (2, 5, 16) ~2.5-3x.
# OUT default .deps/lab40.   LAB=.deps/lab40 tests/gpu/evidence.sh lab
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab40}
S=${SPECS:-.deps/specs13/specs}/level2
. bench/labs/lib.sh  # b, def
for p in 2 5 16 20 26 100; do
  spec=$(ls $S/${p}_*.json)
  b c$p level2/$p "$spec" 0 phases
  b c$p level2/$p "$spec" 0 all-taps "$(def PHASES 0)"
done
# level 1's 73 (stride 2 3D, groups 1 as its module is built), in the same round
S1=${SPECS:-.deps/specs13/specs}/level1
b c73 level1/73 "$(ls $S1/73_*.json)" 0 phases
b c73 level1/73 "$(ls $S1/73_*.json)" 0 all-taps "$(def PHASES 0)"
