#!/usr/bin/env bash
# bench/labs/2026-12-07-round62.sh: variant lab round 62 (session 33):
# - level 1 #12 (A.unsqueeze(1) * B, 4096 x 4096; 0.0423 ms on the H200 of 12-03, 74% of
#   SoL): recipes/pointwise.cu's broadcast offsets divided by the generated shape's
#   constants in 32 bits, the broadcast loads of all vectors before any store, one load a
#   vector where the input is broadcast along the last dim (the default since 12-07) against
#   the run-time extents (CGR_PW_CONST_SHAPE 0; its loads still hoisted), at the first
#   variant (128 threads, one vector each) and 256 x 4. SASS (sm_90a, here): the vector
#   path 78 instructions against 1998 with 47 calls of the 64-bit division.
# - the epilogue's chunk on level 2 #100 (6.6% slower at 16 than at 1 on the H100 of 12-07)
#   and #1 (7% faster): 16 (the default), 8, 4, 1.
# Predictions (H200, kernel ms): #12 constant 0.030-0.036 against run-time ~0.042 (74% of
# SoL -> 85-100%); #100 chunk 4 or 8 within 2% of chunk 1, #1 chunk 4 or 8 within 2% of 16.
# OUT default .deps/lab62.
#   LABS=.deps/lab62 bench/gpu_session.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab62}
mkdir -p "$OUT"
. bench/labs/lib.sh  # b, def, p, listed, lab_task
if lab_task level1/12 pw "threads=128 unroll=1"; then
  v5=$(listed "$spec" "threads=256 unroll=4")
  p "$d" level1/12 "$spec" "$w" const-128x1
  p "$d" level1/12 "$spec" "$w" runtime-128x1 "$(def PW_CONST_SHAPE 0)"
  p "$d" level1/12 "$spec" "$v5" const-256x4
  p "$d" level1/12 "$spec" "$v5" runtime-256x4 "$(def PW_CONST_SHAPE 0)"
fi
for t in level2/100 level2/1; do
  lab_task "$t" e "conv wgmma" || continue
  for c in 16 8 4 1; do
    [ "$t" = level2/1 ] && [ "$c" = 8 ] && continue
    p "$d" "$t" "$spec" "$w" chunk-$c "$(def EPI_CHUNK $c)"
  done
done
wait
ls "$OUT"/*/*.so
