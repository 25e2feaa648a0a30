#!/usr/bin/env bash
# bench/labs/2026-12-04-round47.sh: variant lab round 47 (session 15): the convolution
# channels-last (recipes/conv_tc.cu CGR_NHWC: x and the weight copied NHWC into the
# workspace, A and B copied 16 bytes a chunk) against the NCHW gather, same tile, and the
# epilogue's row math once a row (both forms); and 3xFP16 channels-last (level 2 #1). Round 46's NCHW build of level 2 #1 is
# timed again beside them (8.03 ms there).
# Prediction: 1.25-1.4x on CIN >= 16 (55, 63, 67, level 2 #1); less on CIN 3 (54: K 81
# padded to 108); the epilogue change alone 3-6%.
# OUT default .deps/lab47.   LAB=.deps/lab47 tests/gpu/evidence.sh lab
# (built on the GPU host, all at once: this machine's two cores took ~3 min a build;
# a build already there is kept)
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab47}
S=${SPECS:-.deps/specs13/specs}
. bench/labs/lib.sh  # b, def, p
p c1 level2/1 $S/level2/1_Conv2D_ReLU_BiasAdd.json 1 nchw
p c1 level2/1 $S/level2/1_Conv2D_ReLU_BiasAdd.json 0 nhwc
cp .deps/lab46/c1/conv-3xtf32.so $OUT/c1/nchw-round46.so 2>/dev/null
p c1 level2/1 $S/level2/1_Conv2D_ReLU_BiasAdd.json 0 nhwc-3xf16 "$(def PREC 2)"
p c55 level1/55 $S/level1/55_conv_standard_2D__asymmetric_input__square_kernel.json 1 nchw
p c55 level1/55 $S/level1/55_conv_standard_2D__asymmetric_input__square_kernel.json 0 nhwc
p c63 level1/63 $S/level1/63_conv_standard_2D__square_input__square_kernel.json 0 nhwc
p c67 level1/67 $S/level1/67_conv_standard_1D.json 0 nhwc
p c54 level1/54 $S/level1/54_conv_standard_3D__square_input__square_kernel.json 0 nhwc
p c87 level1/87 $S/level1/87_conv_pointwise_2D.json 0 nhwc
wait
