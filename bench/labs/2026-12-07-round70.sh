#!/usr/bin/env bash
# bench/labs/2026-12-07-round70.sh: variant lab round 70 (session 36): the direct transposed
# convolution with two pixels a thread (recipes/conv_direct.cu CGR_DIRECT_PIX 2) where the
# generator offers the direct kernel: level 1 #75 (20 products an output, direct first), #81
# (11.4, first), #79 (48, second after the WGMMA phases). Round 69 (H100): on #73 the two-pixel
# forms ran 28-31% faster than their one-pixel twins (direct-8 4.257 -> 3.057 ms, direct-16
# 4.890 -> 3.365), the shared-memory reads of the weights halved.
# Forms: direct (the generator's), direct-pix2 (the same with CGR_DIRECT_PIX 2), and a
# channel block half the generator's with two pixels (#81, #79: 16 instead of 32; #75: 8 of 16).
# Predictions (H100, kernel ms; round 60's times): #79 direct 1.55-1.65, pix2 1.15-1.45 (its
# FMAs weigh most); #75 direct ~0.58, pix2 within 10%; #81 direct ~0.575, pix2 within 10%
# (their stores bound them). #73 / #77 with 64-row tiles (wgmma-bm64: two CTAs an SM, 16
# warps; -m3 three, 3 stages): 10-30% faster than the 128-row tile on #73 (2.4-3.1 against
# ~3.43), within 10% on #77. All correct.
# OUT default .deps/lab70.
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab70}
mkdir -p "$OUT"
. bench/labs/lib.sh  # b, def, p, listed, lab_task
for t in level1/79 level1/75 level1/81; do
  lab_task "$t" cd "conv direct" || continue
  co=$(build/cutegen recipe --spec "$spec" --list | sed -n "s/^variant $w: .* channels=\([0-9]*\) .*/\1/p")
  p "$d" "$t" "$spec" "$w" direct
  p "$d" "$t" "$spec" "$w" direct-pix2 "CGR_DIRECT_PIX 2"
  p "$d" "$t" "$spec" "$w" direct-$((co / 2))-pix2 "$(def CO_T $((co / 2)))" "CGR_DIRECT_PIX 2"
done
# #73 and #77's WGMMA phases kernel with 64-row tiles, two or three CTAs an SM (round 69's ncu
# on #73: one CTA of 384 threads an SM, 114 registers and 166 KB of shared memory, 12 warps,
# DRAM 41% busy, 25% of its global sectors excessive)
for t in level1/73 level1/77; do
  lab_task "$t" ct "conv wgmma" || continue
  p "$d" "$t" "$spec" "$w" wgmma
  p "$d" "$t" "$spec" "$w" wgmma-bm64 "$(def BM 64)" "$(def MINB 2)"
  p "$d" "$t" "$spec" "$w" wgmma-bm64-m3 "$(def BM 64)" "$(def MINB 3)" "$(def STAGES 3)"
done
wait
ls "$OUT"/*/*.so
