#!/usr/bin/env bash
# bench/labs/2026-12-05-round51.sh: variant lab round 51 (session 22): 2xFP16 (CGR_PREC 3:
# the weights split into two fp16 halves, x rounded to fp16) against 3xFP16 and plain TF32
# on the level-2 chains whose TF32 variant failed on the H100 (12-05 18:50 sweep, report
# bench/results/2026-12-05-1850-s22-tf32-h100.json): #77 (a mean over 20x36x36 positions of
# one channel after a K = 8000 transposed convolution), #10 (a mean over 128x128 positions)
# and #27 (GroupNorm, then a mean over positions).
# Why: a mean over one channel's positions averages x's rounding errors away but not the
# weight's, which every position shares; 2xFP16 keeps the weights exact and rounds x only
# (fp16 holds 11 significant bits, as TF32 does), in two fp16 MMAs a 16-deep block: plain
# TF32's tensor-core time.
# Predictions: 2xFP16 correct on all three; within 10% of TF32's time and 1.3-1.5x faster
# than 3xFP16 (#42's TF32 was 1.51x faster than its 3xFP16 in the sweep).
# OUT default .deps/lab51.   LAB=.deps/lab51 tests/gpu/evidence.sh lab
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab51}
S=${SPECS:-.deps/specs/specs}
. bench/labs/lib.sh  # b, def, p
for t in 77 10 27; do
  spec=$(ls "$S"/level2/${t}_*.json 2>/dev/null | head -1)
  [ -n "$spec" ] || { echo "round51: no spec for level 2 #$t in $S"; continue; }
  p c$t level2/$t "$spec" 0 v0
  p c$t level2/$t "$spec" 0 v0-tf32 "$(def PREC 1)"
  p c$t level2/$t "$spec" 0 v0-2xf16 "$(def PREC 3)"
done
wait
