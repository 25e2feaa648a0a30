#!/usr/bin/env bash
# bench/labs/2026-12-06-round59.sh: variant lab round 59 (session 29): the direct transposed
# convolution (recipes/conv_direct.cu: a thread an output pixel and a block of channels on the
# CUDA cores, the weights in shared memory, y written in its own order) against the
# generator's previous first variant (the WGMMA or mma.sync kernel in sub-pixel phases).
# Why: where a strided transposed convolution's outputs take few products (level 1 #81:
# 11.5 on average, 16 of its 25 phases none; #79 48; #75 grouped, 16 input channels a
# group), the phase kernels ran at 9.6-13.5% of SoL and below eager on the H100 (#81 2.631 ms
# against 1.847, #79 2.977 against 1.927): bound by writing y a stride apart.
# Forms: direct (build-dev's generator, its variant 0), phases (build/cutegen's variant 0,
# session 28's generator); level 2 #74 and #15 (staged: stage 0 a 3D transposed
# convolution with 16-32 products an output) likewise.
# Predictions (H100): all correct; #81 0.35-0.6 ms (3-5x eager), #79 0.6-1.0 ms (2-3x
# eager), #75 within 20% of its phases (1.0-1.3 ms? its phases gave 2.22x eager), level 2
# #74 and #15 within 30% of their WGMMA phases either way (their stage 0 has 27 and 16
# products an output).
# OUT default .deps/lab59.   LABS=.deps/lab59 bench/gpu_session.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab59}
. bench/labs/lib.sh  # b, def, p, k, lab_task
S=${SPECS:-.deps/specs/specs}
for t in level1/81 level1/79 level1/75 level2/74 level2/15; do
  spec=$(ls "$S"/${t%%/*}/${t##*/}_*.json 2>/dev/null | head -1)
  [ -n "$spec" ] || { echo "round59: no spec for $t in $S"; continue; }
  d=${t#level}; d=d${d/\//-}
  build-dev/cutegen recipe --spec "$spec" --list | grep -q "^\(stage 0 \)\?variant 0: conv direct" ||
    { echo "round59: $t: variant 0 of build-dev/cutegen is not the direct kernel"; continue; }
  CG=build-dev/cutegen p "$d" "$t" "$spec" 0 direct
  p "$d" "$t" "$spec" 0 phases
done
wait
ls "$OUT"/*/*.so
