#!/usr/bin/env bash
# bench/labs/2026-12-05-round52.sh: variant lab round 52 (session 23): the WGMMA GEMM with its
# operands split before the product (recipes/gemm_wgmma.cu CGR_PRESPLIT 1) against each
# problem's variant 0 (mma.sync, 3xFP16 or 3xTF32) and the in-kernel-split WGMMA variant.
# Why: round 36 timed the WGMMA kernel's sides apart (1_Square under ncu): the consumers
# alone 1.38 ms, the one producer warpgroup that loads and splits alone 2.46, gemm_tc.cu
# 2.66; two producer warpgroups did not help (round 37). With the split done by a
# memory-bound kernel before the product (each operand read once, its big and small parts
# written once, already in the stages' swizzled layout), the producer is one thread issuing
# four bulk copies a stage, and the consumers' ~1.9x over mma.sync should show.
# Also the same in 3xFP16 (CGR_PREC 2: fp16 halves of x s, s a power of two per operand
# bringing its largest |x| under 2^15, undone on the accumulator): twice the tensor rate of
# TF32 WGMMAs and half the bytes a k-element, for the same 64 KB stages.
# Predictions: correct everywhere (the consumers are round 32's, unchanged); 1_Square
# 1.77 ms (3xFP16, H200) -> 1.1-1.3 ms (consumers ~1.0-1.1 ms at full clocks + ~0.1 ms
# presplit); the transposed and batched ones likewise 1.3-1.6x faster than variant 0; #8
# (irregular shapes, 8205 x 2949 x 5921: padding and 4-byte loads) least; 3xFP16 another
# 1.3-1.6x over the TF32 presplit (0.7-0.9 ms on 1_Square), bound by L2 traffic rather than
# the tensor cores (64 KB a CTA a k-tile).
# OUT default .deps/lab52.   LAB=.deps/lab52 tests/gpu/evidence.sh lab
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab52}
S=${SPECS:-.deps/specs/specs}
. bench/labs/lib.sh  # b, def, p, listed
# variant 0 side by side where it says most (the development machine's two cores are slow
# to build gemm_tc.cu); elsewhere the eager ratio against the table's row
for t in level1/1 level1/8 level1/3 level1/17 level2/76 level1/16; do
  spec=$(ls "$S"/${t%%/*}/${t##*/}_*.json 2>/dev/null | head -1)
  [ -n "$spec" ] || { echo "round52: no spec for $t in $S"; continue; }
  d=${t#level}; d=g${d/\//-}  # level1/17 -> g1-17
  w=$(listed "$spec" "gemm wgmma")
  [ -n "$w" ] || { echo "round52: $t has no WGMMA variant"; continue; }
  p "$d" "$t" "$spec" "$w" wgmma-presplit "CGR_PRESPLIT 1"
  p "$d" "$t" "$spec" "$w" wgmma-presplit-3xf16 "CGR_PRESPLIT 1" "$(def PREC 2)"
  case $t in level1/1|level1/8) p "$d" "$t" "$spec" 0 v0 ;; esac
  [ "$t" = level1/1 ] && p "$d" "$t" "$spec" "$w" wgmma-insplit
done
wait
