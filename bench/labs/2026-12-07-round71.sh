#!/usr/bin/env bash
# bench/labs/2026-12-07-round71.sh: variant lab round 71 (session 36, for the next GPU call):
# the WGMMA convolution's consumers with a k-tile's WGMMAs in flight while the previous
# k-tile's complete (recipes/conv_tc.cu CGR_CONV_MMA_INFLIGHT 1: warpgroup_wait<1>, CUTLASS's
# SM90 mainloop order) against the generator's form (warpgroup_wait<0> after every k-tile).
# Why: ncu on level 1 #73 (call 1 of session 36, H100) put ~10,000 SM cycles into a 128 x 32
# tile whose WGMMAs take ~600; short K (1-4 k-tiles a tile) leaves the tensor pipe idle while
# each k-tile's batch drains and the next stage's barrier is awaited. Problems: the level-1
# convolutions at or below eager on the H200 whose first variant is the WGMMA kernel with
# CGR_PROMOTE 0: #73, #76, #57, #65, #69, and #77 (at eager on the H100).
# Predictions (H100, kernel ms): inflight within 0-10% of wgmma on #57, #65, #69, #76 (their
# K runs to 9-18 k-tiles); 5-25% faster on #73 and #77 (1-4 k-tiles a tile); all correct.
# Run the sanitizer on it first (SAN=tests/gpu/problems/convt_wgmma_phases.py
# SAN_ALSO="CGR_CONV_MMA_INFLIGHT 1"). OUT default .deps/lab71.
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab71}
mkdir -p "$OUT"
. bench/labs/lib.sh  # b, def, p, listed, lab_task
for t in level1/73 level1/77 level1/76 level1/57 level1/65 level1/69; do
  lab_task "$t" cw "conv wgmma" || continue
  build/cutegen recipe --spec "$spec" --variant "$w" --out "$OUT/promote.cu" >/dev/null
  grep -q '^#define CGR_PROMOTE 0$' "$OUT/promote.cu" || { echo "round71: $t: its WGMMA variant has CGR_PROMOTE != 0: skipped"; continue; }
  p "$d" "$t" "$spec" "$w" wgmma
  p "$d" "$t" "$spec" "$w" wgmma-inflight "CGR_CONV_MMA_INFLIGHT 1"
done
wait
ls "$OUT"/*/*.so
