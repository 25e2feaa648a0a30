#!/usr/bin/env bash
# bench/labs/2026-12-06-round57.sh: variant lab round 57 (written in session 27, for the next
# GPU call): the WGMMA convolution (recipes/conv_tc.cu CGR_WGMMA) where it is still below
# eager on the H100 (#63: CIN 16, K 144 padded to 192, 8.6 GB of output; #67: 1D, K 192)
# and #56 after session 27's spill fix (a CTA a tile with the partial-sum form: predicted back
# to ~2.7 ms on the H100 from call 3's 3.06), with #55 as the control.
# Forms: v0 (the generator's); kskip (CGR_CONV_KSKIP 1: a k-tile's k16 blocks past K not
# issued: #63's last k-tile has 16 of 64); ca (CGR_CONV_GATHER_CA 1: the gather's cp.async
# through L1, as the mma.sync kernel's: a tap's neighbours read the same pixels); both;
# persist (#56 only: CGR_CONV_PERSIST 1, the form that spilled, for the comparison).
# Predictions: all correct (kskip bit-identical to v0: the skipped blocks multiply zeros);
# kskip 10-20% faster on #63, unchanged (+-2%) on #55, #56, #67 (no partial k-tile there);
# ca within 5% either way; #56 v0 2.6-2.8 ms and persist ~3.0 (call 3's) on an H100.
# OUT default .deps/lab57.   LABS=.deps/lab57 bench/gpu_session.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab57}
. bench/labs/lib.sh  # b, def, p, listed, lab_task
for t in level1/63 level1/67 level1/56 level1/55; do
  lab_task "$t" c "conv wgmma" || continue
  p "$d" "$t" "$spec" "$w" v0
  p "$d" "$t" "$spec" "$w" kskip "CGR_CONV_KSKIP 1"
  p "$d" "$t" "$spec" "$w" ca "CGR_CONV_GATHER_CA 1"
  p "$d" "$t" "$spec" "$w" kskip-ca "CGR_CONV_KSKIP 1" "CGR_CONV_GATHER_CA 1"
  [ "$t" = level1/56 ] && p "$d" "$t" "$spec" "$w" persist "CGR_CONV_PERSIST 1"
done
wait
