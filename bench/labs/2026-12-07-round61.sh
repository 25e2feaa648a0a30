#!/usr/bin/env bash
# bench/labs/2026-12-07-round61.sh: variant lab round 61 (session 32): the depthwise
# convolution's rows a thread (recipes/conv_dw.cu CGR_DW_ROWS: 8, 4, and 1, the form every
# sweep before session 32 ran), side by side in one process; and level 2 #26's first
# variant (the WGMMA sub-pixel phases kernel, 4.94 ms on the H200 against eager's 3.94, where
# its 58 GFLOP in 3xFP16 take ~0.3 ms and its 2.2 GB ~0.5 ms) built for ncu.
# Predictions (H200, kernel ms): #82 rows 8 0.55-0.8, rows 4 within 15% of that, rows 1
# ~2.2 (12-03's 2.242); #84 rows 8 2.2-3.2 against ~8.8; #85 rows 8 0.5-0.8 against ~2.1.
# #26 under ncu: neither DRAM nor the tensor pipes above 30% of peak (it is waiting, not
# moving bytes or multiplying).
# OUT default .deps/lab61.   LABS=.deps/lab61 NCU="level2/26:.deps/lab61/2-26/phases.so:conv" bench/gpu_session.sh
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
lab_task level2/26 "" "conv wgmma" && p "$d" level2/26 "$spec" "$w" phases
wait
ls "$OUT"/*/*.so
