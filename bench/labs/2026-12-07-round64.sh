#!/usr/bin/env bash
# bench/labs/2026-12-07-round64.sh: variant lab round 64 (session 34):
# - level 1 #87 (a 1 x 1 convolution, 64 -> 128, 16 images of 1024 x 1024: x 4 GiB, y 8 GiB;
#   0.675x eager on the H200 of 12-06 with mma.sync in 3xTF32, 59% of the bytes' time): the
#   streaming GEMM (recipes/gemm_stream.cu, new: A resident, x split in the kernel, 3xFP16
#   WGMMAs) at BN 128 (one CTA an SM) and BN 64 (two), against that mma.sync kernel.
# - the epilogue's chunk in sub-pixel-phase WGMMA kernels whose epilogue reads no full-size
#   input (level 1 #77, level 2 #2, #20): 16 (the default) against 4 (level 2 #100, such a
#   kernel, was 6% faster at 4 on the H100 of 12-07, #1, no phases, 6% slower).
# Predictions (H200, kernel ms): #87 stream-128 2.9-3.4 (eager ~3.4: 1.0-1.2x), stream-64
# within 10% of it, mma-sync ~5.0; the chunk: 4 within 3% of 16 on all three (no rule).
# OUT default .deps/lab64.
#   LABS=.deps/lab64 bench/gpu_session.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab64}
mkdir -p "$OUT"
. bench/labs/lib.sh  # b, def, p, listed, lab_task
if lab_task level1/87 pw "gemm stream 3xf16 tile=128x128"; then
  p "$d" level1/87 "$spec" "$w" stream-128
  p "$d" level1/87 "$spec" "$(listed "$spec" "gemm stream 3xf16 tile=128x64")" stream-64
  p "$d" level1/87 "$spec" "$(listed "$spec" "conv as gemm 3xtf32")" mma-sync
fi
for t in level1/77 level2/2 level2/20; do
  lab_task "$t" e "conv wgmma" || continue
  for c in 16 4; do
    p "$d" "$t" "$spec" "$w" chunk-$c "$(def EPI_CHUNK $c)"
  done
done
wait
ls "$OUT"/*/*.so
