#!/usr/bin/env bash
# bench/labs/2026-12-08-round74.sh: variant lab round 74 (session 38): the paired WGMMA
# transposed convolutions (recipes/conv_tc.cu CGR_CONV_PAIR_W 1) with 64-row tiles at two CTAs
# an SM. Why: lab round 73 (H100) ran level 1 #73 (128 x 32 paired, 2.305 ms) 5% faster so
# (2.188 ms): two producers an SM gathering, the consumers of one CTA running while the other
# waits. Forms: gen (the generator's first variant: 128 rows, 4 stages), bm64 (64 rows, one
# consumer warpgroup, CGR_MINB 2, stages as two CTAs' shared memory allows: 4 at 32 columns,
# 3 at 64); and for level 2 #5 (kernel 4: both width phases 2 taps) unpaired, to see whether
# pairing gains where the phases of a box run as long (round 73: #93, the same, did not).
# Predictions (H100, kernel ms): bm64 within -10%..+5% of gen on each (#73 ~5% faster again);
# #5 unpaired within 3% of gen. Level 2 #74 (a staged plan: its conv stage 128 x 32 paired
# since session 37; its H100 row fell 15%, 0.548 -> 0.627 ms): the whole plan's variant 0
# unpaired and at 64 rows; prediction: unpaired 10-15% faster. Level 2 #91 (a staged plan;
# its conv stage ConvTranspose2d 64 -> 128, kernel 4, padding 1: both width phases 2 taps, as
# #93) measured 11% faster through `cutegen bench` (session 38 call 1, H100: 2.060x -> 2.294x)
# in two paired 64-column tiles, which the generator (conv_width_taps_differ) no longer
# writes for it; here gen (128 columns unpaired) against pair64 side by side, with #93's
# two forms again (round 73: pair64 9% slower). Prediction: #91 pair64 within 5% of gen
# (the cross-run gain was noise), #93 as in round 73. All correct.
# OUT default .deps/lab74.
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab74}
mkdir -p "$OUT"
. bench/labs/lib.sh  # b, def, p, listed, lab_task
for t in level1/73 level1/77 level1/79 level2/20 level2/16 level2/2 level2/5 level2/100; do
  lab_task "$t" cp "width-phases-paired" || continue
  build/cutegen recipe --spec "$spec" --variant "$w" --out "$OUT/gen.cu" >/dev/null
  bn=$(sed -n 's/^#define CGR_BN \([0-9]*\)$/\1/p' "$OUT/gen.cu" | head -1)
  st=$(( bn <= 32 ? 4 : 3 ))
  p "$d" "$t" "$spec" "$w" gen
  p "$d" "$t" "$spec" "$w" bm64 "$(def BM 64)" "$(def WM 1)" "$(def MINB 2)" "$(def STAGES $st)"
  [ "$t" = level2/5 ] && p "$d" "$t" "$spec" "$w" unpaired "$(def CONV_PAIR_W 0)"
done
t=level2/74
if lab_spec "$t" cp; then
  p "$d" "$t" "$spec" 0 gen
  p "$d" "$t" "$spec" 0 unpaired "$(def CONV_PAIR_W 0)"
  p "$d" "$t" "$spec" 0 bm64 "$(def BM 64)" "$(def WM 1)" "$(def MINB 2)" "$(def STAGES 4)"
fi
for t in level2/91 level2/93; do
  lab_spec "$t" cp || continue
  p "$d" "$t" "$spec" 0 gen
  p "$d" "$t" "$spec" 0 pair64 "$(def BN 64)" "$(def STAGES 4)" "CGR_CONV_PAIR_W 1"
done
wait
ls "$OUT"/*/*.so
