#!/usr/bin/env bash
# bench/labs/2026-12-06-round54.sh: variant lab round 54 (session 26): the 3xFP16 split with
# tile scales holding each tile from its max to its split (recipes/gemm_wgmma.cu
# CGR_TILE_HOLD 1: registers along k, the whole tile in shared memory along the rows, 16-byte
# loads along the rows where they come in 4s) against the default (CGR_TILE_HOLD 0: the max
# pass reads the tile, the split reads it again from L2, along the rows through 64-row slabs).
# Why: ncu (H100, session 25) of #16's split: 189 us of the call's 738, DRAM 62% busy, L2 hit
# rate 59%, 3 CTAs of 256 an SM: a CTA's loads stop at its max's barrier and start again
# from L2 for the split, and along the rows the split reads 4 bytes a thread.
# Predictions: all correct (the same values split with the same scale: bit-identical output);
# the split kernel's DRAM >= 80% busy in ncu; #16 (both operands along their rows) and #3
# (B along its rows) 4-8% faster, #1 (B along its rows) 3-6%, #17 and level 2 #76 (both
# along k: registers) 2-5%, #8 (irregular: 4-byte loads, odd K) within +-3%.
# OUT default .deps/lab54.   LABS=.deps/lab54 bench/gpu_session.sh
#   NCU="level1/16:.deps/lab54/g1-16/hold.so:presplit_scaled_kernel level1/16:.deps/lab54/g1-16/tilescale.so:presplit_scaled_kernel"
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab54}
S=${SPECS:-.deps/specs/specs}
. bench/labs/lib.sh  # b, def, p, listed
for t in level1/16 level1/1 level1/3 level1/17 level1/8 level2/76; do
  spec=$(ls "$S"/${t%%/*}/${t##*/}_*.json 2>/dev/null | head -1)
  [ -n "$spec" ] || { echo "round54: no spec for $t in $S"; continue; }
  d=${t#level}; d=g${d/\//-}  # level1/16 -> g1-16
  w=$(listed "$spec" "gemm wgmma 3xf16.*presplit")
  [ -n "$w" ] || { echo "round54: $t has no 3xFP16 presplit WGMMA variant"; continue; }
  p "$d" "$t" "$spec" "$w" tilescale "$(def TILE_SCALE 1)"
  p "$d" "$t" "$spec" "$w" hold "$(def TILE_SCALE 1)" "CGR_TILE_HOLD 1"
done
# ncu's view of round 53's LayerNorm held on chip by the whole GPU (0.338 ms on the H100
# against the split's 0.296; why it lost was not measured): its one kernel (the lab times the split beside it),
# so that the next LayerNorm idea starts from where the time goes.
#   NCU="level1/40:.deps/lab54/l40/held-1+1.so:norm_held_rows"
spec=$(ls "$S"/level1/40_*.json 2>/dev/null | head -1)
if [ -n "$spec" ]; then
  p l40 level1/40 "$spec" 0 split-v0
  k l40 level1/40 bench/labs/kernels/norm_held_rows.cu held-1+1
else
  echo "round54: no spec for level1/40 in $S"
fi
wait
