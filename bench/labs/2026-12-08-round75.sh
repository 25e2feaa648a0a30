#!/usr/bin/env bash
# bench/labs/2026-12-08-round75.sh: variant lab round 75 (session 38): the persistent WGMMA
# convolution in phases with its walk rotated (recipes/conv_tc.cu CGR_CONV_ROTATE 1: in round
# k of the walk CTA b takes tile k*grid + (b + k) mod grid, not k*grid + b).
# Why (read from the code, not measured): the walk gave CTA b the tiles b, b + grid, ...; with
# 132 CTAs and a cycle of 8 phases (or 4 width-phase pairs) that divides or shares factors
# with 132, CTA b meets one or two phases only, and the phases' work differs up to 8x (3D,
# kernel 3, stride 2: 8/4/2/1 taps). Paired (cycle 4, 132 = 33 x 4) each CTA always has the
# same pair class: level 1 #73's pairs take 6, 3, 3 and 2 k-tiles, so the CTAs of the heavy
# class run ~1.7x the mean. Unpaired (cycle 8) a CTA alternates two phases, as unbalanced.
# That may also be why level 2 #26 and #74 lost when paired.
# Forms: gen (the generator's first variant) and rot (the same, CGR_CONV_ROTATE 1); for #26
# (unpaired by the generator) also pair and pair-rot; for #74 (a staged plan, its conv stage
# paired) also unpaired-rot.
# Predictions (H100, kernel ms): rot 10-35% faster than gen on the 3D problems (#73, #77,
# #100, #20, #26, #74), 0-15% on the 2D one (#16: 2 pair classes of 6 and 3 k-tiles);
# #26 pair-rot the fastest of its four. All correct.
# OUT default .deps/lab75.
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab75}
mkdir -p "$OUT"
. bench/labs/lib.sh  # b, def, p, listed, lab_task
for t in level1/73 level2/100 level1/77 level2/20 level2/16 level2/26; do
  lab_task "$t" cp "conv wgmma" || continue
  p "$d" "$t" "$spec" "$w" gen
  p "$d" "$t" "$spec" "$w" rot "CGR_CONV_ROTATE 1"
  if [ "$t" = level2/26 ]; then
    p "$d" "$t" "$spec" "$w" pair "CGR_CONV_PAIR_W 1"
    p "$d" "$t" "$spec" "$w" pair-rot "CGR_CONV_PAIR_W 1" "CGR_CONV_ROTATE 1"
  fi
done
t=level2/74
if lab_spec "$t" cp; then
  p "$d" "$t" "$spec" 0 gen
  p "$d" "$t" "$spec" 0 rot "CGR_CONV_ROTATE 1"
  p "$d" "$t" "$spec" 0 unpaired-rot "$(def CONV_PAIR_W 0)" "CGR_CONV_ROTATE 1"
fi
wait
ls "$OUT"/*/*.so
