#!/usr/bin/env bash
# bench/labs/2026-12-07-round63.sh: variant lab round 63 (session 33): a reduction over the
# channels in the WGMMA kernel's epilogue (recipes/conv_tc.cu chan_reduce_wg: a warp holds
# every channel of its rows, so a row reduces in the thread and its quad; offered first
# since 12-07 where COUT <= 128) against the mma.sync kernel's (chan_reduce, the only form
# before): level 2 #32 (64 -> 128, min; 0.873x eager and 0.352x torch.compile on the H100
# of 12-07) and #25 (min over 64, 1.663x / 0.741x).
# Predictions (kernel ms, H200 or H100): the WGMMA form 1.5-2.5x faster than the mma.sync
# one on both (the plain WGMMA convolutions ran 1.5-3x faster than their mma.sync forms).
# OUT default .deps/lab63.
#   LABS=.deps/lab63 bench/gpu_session.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab63}
mkdir -p "$OUT"
. bench/labs/lib.sh  # b, def, p, listed, lab_task
for t in level2/32 level2/25; do
  lab_task "$t" cr "conv wgmma" || continue
  p "$d" "$t" "$spec" "$w" wgmma
  p "$d" "$t" "$spec" "$(listed "$spec" "conv channels-last tile=.* 3xf16")" mma-sync
done
wait
ls "$OUT"/*/*.so
