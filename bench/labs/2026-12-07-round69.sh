#!/usr/bin/env bash
# bench/labs/2026-12-07-round69.sh: variant lab round 69 (session 36): the direct transposed
# convolution (recipes/conv_direct.cu) with its staged stores, where the generator does not
# offer it: level 1 #73 (108 products an output) and #77 (93). Session 29 timed it there with
# plain stores only (H100: #73 4.082 ms against the WGMMA phases' 3.385, #77 4.514 against
# 1.988); the staging made #79 (48 products) 1.56x faster and #81 3.4x (lab round 60).
# Forms: wgmma (variant 0, the generator's first; also the target of ncu in the call),
# direct-16 (the generator's direct form: 128 threads, 16 channels a thread, staged), direct-8
# (8 channels a thread: 41 KB of weights, five CTAs an SM instead of three), and both with two
# pixels a thread a chunk apart (CGR_DIRECT_PIX 2, session 36: a float4 of weights read from
# shared memory serves 8 products instead of 4).
# Predictions (H100, kernel ms): #73 wgmma 3.3-3.5, direct-16 2.6-3.4, direct-8 within 10% of
# direct-16 (still below eager's ~2.05: the FMAs are 0.95 ms at the CUDA cores' peak and a
# thread's 16 FMAs take four shared-memory loads); the pix2 forms 15-35% faster than their
# one-pixel twins (#73 direct-16-pix2 1.9-2.6); #77 wgmma ~2.0, direct 3.0-3.8. All correct.
# The generator offers the direct kernel only up to RECIPE_CONV_DIRECT_SECOND (64) products:
# this round builds its own generator with 128 there (LABCG, default .deps/labcg) unless CG
# names one. OUT default .deps/lab69.
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab69}
mkdir -p "$OUT"
if [ -z "${CG:-}" ]; then
  LABCG=${LABCG:-.deps/labcg}
  if [ ! -x "$LABCG/build/cutegen" ]; then
    rm -rf "$LABCG" && mkdir -p "$LABCG" && tar cf - CMakeLists.txt src include recipes prompts knowledge prices worker python scripts tests 2>/dev/null | tar xf - -C "$LABCG"
    sed -i 's/^#define RECIPE_CONV_DIRECT_SECOND 64.0$/#define RECIPE_CONV_DIRECT_SECOND 128.0/' "$LABCG/src/recipe_conv.h"
    grep -q 'RECIPE_CONV_DIRECT_SECOND 128.0' "$LABCG/src/recipe_conv.h" || { echo "round69: RECIPE_CONV_DIRECT_SECOND not found in src/recipe_conv.h" >&2; exit 2; }
    cmake -S "$LABCG" -B "$LABCG/build" -DCMAKE_BUILD_TYPE=Release >/dev/null && make -C "$LABCG/build" -j"$(nproc)" cutegen >/dev/null || exit 2
  fi
  export CG=$LABCG/build/cutegen
fi
. bench/labs/lib.sh  # b, def, p, listed, lab_task
for t in level1/73 level1/77; do
  lab_task "$t" ct "conv wgmma" || continue
  p "$d" "$t" "$spec" "$w" wgmma
  lab_task "$t" ct "conv direct" || continue
  p "$d" "$t" "$spec" "$w" direct-16
  p "$d" "$t" "$spec" "$w" direct-8 "$(def CO_T 8)"
  p "$d" "$t" "$spec" "$w" direct-16-pix2 "CGR_DIRECT_PIX 2"
  p "$d" "$t" "$spec" "$w" direct-8-pix2 "$(def CO_T 8)" "CGR_DIRECT_PIX 2"
done
wait
ls "$OUT"/*/*.so
