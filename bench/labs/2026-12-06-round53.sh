#!/usr/bin/env bash
# bench/labs/2026-12-06-round53.sh: variant lab round 53 (session 24): the presplit of an
# operand stored along its rows (M- or N-major) through shared-memory slabs
# (recipes/gemm_wgmma.cu CGR_PRESPLIT_SLAB 1, the new default) against a thread a 16-byte
# chunk straight from global memory (CGR_PRESPLIT_SLAB 0, round 52's).
# Why: round 52 (H100) timed #16 (A M-major, B N-major) at 1.339 ms in 3xFP16 against #17's
# 0.830 (the same 2048 x 4096 x 8192 product, both operands along k), and 2.260 against
# 1.163 in 3xTF32, which writes twice the bytes an element: the product reads identical
# workspaces, so the gap is the split of operands along their rows, and it grows with the
# bytes written. Along the rows each thread wrote one 16-byte chunk into each of a warp's 32
# 128-byte lines; a slab (64 rows x one k-tile) is read along the rows, 128 bytes a warp,
# and written as whole 128-byte rows of the stage layout, 8 threads a row.
# Predictions: all correct (tests/cli/recipe_wgmma_layout.cpp checks that the slabs write
# every value once, where the stage wants it); #16 3xFP16 1.339 -> 0.85-0.95 ms, 3xTF32 2.260
# -> 1.2-1.3 (near #17's); #1 and #8 (B N-major) 3-8% faster; #3 (batched, B N-major: 268M
# of its 335M elements along their rows) 5.855 -> 2.5-3.5 ms; #17 (both along k: the same
# code as round 52) unchanged within 2%: the card's drift.
# Also a scale a tile (CGR_TILE_SCALE 1: each (row tile, k-tile) of an operand scaled by its
# own largest |x|, found by the split's own pass, undone on each k-tile's partial as it is
# promoted): no max pass, so the operands are read once, not twice. Prediction: correct
# (max rel error no worse than the operand-wide scale's); #1 2-5% faster than its slab
# form, #3 8-15%, level 2 #76 (a Linear: its 67M-element weight split every call) 4-8%,
# #16 3-6%.
# And B multicast to clusters of two CTAs along M (CGR_MULTICAST 2: each CTA bulk-copies half
# of the B tile the pair shares to both, so B is read from L2 once a pair): round 52 put the
# product at ~0.8 ms of #1's 0.907, ~52% of the H100's fp16 tensor peak, with 64 KB of L2
# reads a CTA a k-tile (~10 TB/s over the GPU at full tensor rate, more than L2 gives), so L2
# bandwidth, not the tensor cores, is taken to be the limit. Prediction: correct; the product
# 10-20% faster (#1 0.78-0.85 ms with slabs, 0.75-0.82 with tile scales too); if it is not
# faster, the L2 is not the limit (then the WGMMA issue/promotion is).
# ncu on #16's split kernel (PASS 1), both forms: the slab one's DRAM throughput >= 80% of
# peak, the chunk one's well below (its duration is the gap).
# OUT default .deps/lab53.   LAB=.deps/lab53 tests/gpu/evidence.sh lab
#   NCU="level1/16:.deps/lab53/g1-16/slab-3xf16.so:presplit_kernel.1 level1/16:.deps/lab53/g1-16/chunk-3xf16.so:presplit_kernel.1"
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab53}
S=${SPECS:-.deps/specs/specs}
. bench/labs/lib.sh  # b, def, p, listed
for t in level1/16 level1/1 level1/8 level1/3 level1/17 level2/76; do
  spec=$(ls "$S"/${t%%/*}/${t##*/}_*.json 2>/dev/null | head -1)
  [ -n "$spec" ] || { echo "round53: no spec for $t in $S"; continue; }
  d=${t#level}; d=g${d/\//-}  # level1/16 -> g1-16
  w=$(listed "$spec" "gemm wgmma.*presplit")
  [ -n "$w" ] || { echo "round53: $t has no presplit WGMMA variant"; continue; }
  p "$d" "$t" "$spec" "$w" slab-3xf16 "CGR_PRESPLIT 1" "$(def PREC 2)"
  case $t in level1/8|level1/17) ;; *) p "$d" "$t" "$spec" "$w" tilescale-3xf16 "CGR_PRESPLIT 1" "$(def PREC 2)" "CGR_TILE_SCALE 1" ;; esac
  case $t in level1/1|level1/16|level1/3|level2/76)  # an even number of tile-rows
    p "$d" "$t" "$spec" "$w" mc2-3xf16 "CGR_PRESPLIT 1" "$(def PREC 2)" "CGR_MULTICAST 2"
    p "$d" "$t" "$spec" "$w" mc2-tilescale-3xf16 "CGR_PRESPLIT 1" "$(def PREC 2)" "CGR_MULTICAST 2" "CGR_TILE_SCALE 1" ;;
  esac
  case $t in level1/17|level2/76) continue ;; esac  # both operands along k: no slabs
  p "$d" "$t" "$spec" "$w" chunk-3xf16 "CGR_PRESPLIT 1" "$(def PREC 2)" "CGR_PRESPLIT_SLAB 0"
  if [ "$t" = level1/16 ]; then
    p "$d" "$t" "$spec" "$w" slab-3xtf32 "CGR_PRESPLIT 1" "$(def PREC 0)"
    p "$d" "$t" "$spec" "$w" chunk-3xtf32 "CGR_PRESPLIT 1" "$(def PREC 0)" "CGR_PRESPLIT_SLAB 0"
  fi
done
# Norms held on chip by the whole GPU, several rows a step (bench/labs/kernels/norm_held_rows.cu:
# 128 persistent CTAs launched cooperatively, each its columns of every row, one exchange a
# step, the next step prefetched into L2 during it). LayerNorm (level 1 #40): a row in
# registers and one in shared memory a step, the full-size weights read once a step and kept
# in L2. Prediction: correct; 0.15-0.18 ms on the H200 against the split's 0.222 (568 MB of
# DRAM plus 256 MB of weights from L2, against 836 MB); without the hints 10-25% slower;
# without the prefetch 5-10% slower. GroupNorm (level 1 #35): 2 + 2 rows a step (224 steps
# of 4 groups), or 1 + 3. Prediction: correct; 3.9-4.2 ms on the H200 against variant 1
# (persistent held chunks, 4.500 in round 48) and variant 0 (the ring, 4.543): 83-90% of
# SoL if the prefetch hides the 224 exchanges; with all four rows prefetched, within 3%.
L=bench/labs/kernels/norm_held_rows.cu
spec=$(ls "$S"/level1/40_*.json 2>/dev/null | head -1)
if [ -n "$spec" ]; then
  p l40 level1/40 "$spec" 0 split-v0
  k l40 level1/40 "$L" held-1+1
  k l40 level1/40 "$L" held-1+1-nohints "LAB_HINTS 0"
  k l40 level1/40 "$L" held-1+1-noprefetch "LAB_PREFETCH 0"
else
  echo "round53: no spec for level1/40 in $S"
fi
spec=$(ls "$S"/level1/35_*.json 2>/dev/null | head -1)
if [ -n "$spec" ]; then
  p g35 level1/35 "$spec" 0 ring-v0
  p g35 level1/35 "$spec" 1 persist-v1
  k g35 level1/35 "$L" held-2+2 "LAB_AFFINE 1"
  k g35 level1/35 "$L" held-2+2-prefetch-all "LAB_AFFINE 1" "LAB_PREFETCH 2"
  k g35 level1/35 "$L" held-1+3 "LAB_AFFINE 1" "LAB_REG_ROWS 1" "LAB_SMEM_ROWS 3"
else
  echo "round53: no spec for level1/35 in $S"
fi
wait
