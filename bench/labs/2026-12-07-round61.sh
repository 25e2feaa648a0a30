#!/usr/bin/env bash
# bench/labs/2026-12-07-round61.sh: variant lab round 61 (session 32): the depthwise
# convolution's rows a thread (recipes/conv_dw.cu CGR_DW_ROWS: 8, 4, and 1, the form every
# sweep before session 32 ran), side by side in one process; and level 2 #26's first
# variant (the WGMMA sub-pixel phases kernel, 4.94 ms on the H200 against eager's 3.94, where
# its 58 GFLOP in 3xFP16 take ~0.3 ms and its 2.2 GB ~0.5 ms), for ncu too, with the
# epilogue's chunk (below).
# Predictions (H200, kernel ms): #82 rows 8 0.55-0.8, rows 4 within 15% of that, rows 1
# ~2.2 (12-03's 2.242); #84 rows 8 2.2-3.2 against ~8.8; #85 rows 8 0.5-0.8 against ~2.1.
# #26 under ncu: neither DRAM nor the tensor pipes above 30% of peak (it is waiting, not
# moving bytes or multiplying). Found since (12-07, SASS here): its epilogue loaded add_input
# and the bias after the previous output's store, which the compiler keeps in order, so
# each output waited a round trip; the chunked epilogue: #26 chunk-16 1.0-2.0 ms against
# chunk-1 ~4.9; level 2 #1, #100 (a bias only, an L1 hit) 3-15% faster; the GEMMs #76, #9
# 0-5%.
# OUT default .deps/lab61.
#   LABS=.deps/lab61 NCU="level2/26:.deps/lab61/e2-26/chunk-16.so:conv_wgmma_kernel" bench/gpu_session.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab61}
mkdir -p "$OUT"
. bench/labs/lib.sh  # b, def, p, listed, lab_task
for t in level1/82 level1/84 level1/85; do
  lab_task "$t" dw "conv depthwise" || continue
  for r in 8 4 1; do
    p "$d" "$t" "$spec" "$w" rows-$r "$(def DW_ROWS $r)"
  done
done
# the epilogue's inputs loaded a chunk of 16 outputs ahead of their stores (CGR_EPI_CHUNK 16,
# the default since 12-07) against one output (conv, 1) or one pair (GEMM, 2) at a time as
# before: #26 (add_input full-size, the bias), level 2 #1 (conv, bias), #100 (transposed
# conv phases, bias), #76 (GEMM, bias), #9 (GEMM, bias)
for t in level2/26 level2/1 level2/100; do
  lab_task "$t" e "conv wgmma" || continue
  p "$d" "$t" "$spec" "$w" chunk-16
  p "$d" "$t" "$spec" "$w" chunk-1 "$(def EPI_CHUNK 1)"
done
for t in level2/76 level2/9; do
  lab_task "$t" e "gemm wgmma" || continue
  p "$d" "$t" "$spec" "$w" chunk-16
  p "$d" "$t" "$spec" "$w" chunk-2 "$(def EPI_CHUNK 2)"
done
wait
ls "$OUT"/*/*.so
