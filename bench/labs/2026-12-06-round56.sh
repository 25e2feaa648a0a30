#!/usr/bin/env bash
# bench/labs/2026-12-06-round56.sh: variant lab round 56 (session 27): the WGMMA
# convolution's new defaults (round 55's winners: persistent CTAs, CGR_CONV_PERSIST 1; x
# split with scale 1 finding its largest |x| on the way, split again only outside
# [2^-4, 2^15), CGR_CONV_XSCALE 2) against its epilogue through shared memory
# (CGR_CONV_EPI_SMEM 1: 16 columns at a time, each channel's 64 rows as 16-byte stores of
# 256 contiguous bytes, instead of 4-byte stores of 32 bytes) and against the pass for x's
# largest |x| first (CGR_CONV_XSCALE 1, round 55's v0 scale).
# Why: #63 (K 144, 8.6 GB of output) took 8.4-8.9 ms on the H100 in every round-55 form
# against eager's 7.1: its products are short, so the epilogue's stores weigh most.
# Predictions: all correct; epi 5-15% faster on #63 and #67 (short K), within 5% on #55;
# xscale1 as round 55's persist form (xscale2's resplit is a no-op on randn inputs).
# OUT default .deps/lab56.   LABS=.deps/lab56 bench/gpu_session.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab56}
. bench/labs/lib.sh  # b, def, p, listed, lab_task
for t in level1/63 level1/55 level1/67; do
  lab_task "$t" c "conv wgmma" || continue
  p "$d" "$t" "$spec" "$w" v0
  p "$d" "$t" "$spec" "$w" epi "CGR_CONV_EPI_SMEM 1"
  p "$d" "$t" "$spec" "$w" xscale1 "CGR_CONV_XSCALE 1"
done
wait
