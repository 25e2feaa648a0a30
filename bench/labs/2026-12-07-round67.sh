#!/usr/bin/env bash
# bench/labs/2026-12-07-round67.sh: variant lab round 67 (session 34): level 1 #87's
# streaming GEMM with C staged through shared memory (CGR_STREAM_EPI 1: a warp writes 512
# contiguous bytes of a row a store) against gemm_epi.cuh's store_tile from the fragments
# (CGR_STREAM_EPI 0: 8-byte stores touching 8 rows 4 MiB apart a warp store, whose address
# registers waited on the stores before them in ncu's source counters, round 66), both at 2
# ring stages; mma.sync (3xTF32) beside them.
# Predictions (H100, kernel ms): staged 4.0-5.0 (eager 4.55), tile ~6.7 as in rounds 64-65.
# OUT default .deps/lab67.
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab67}
mkdir -p "$OUT"
. bench/labs/lib.sh  # b, def, p, listed, lab_task
if lab_task level1/87 pw "gemm stream 3xf16 tile=128x128"; then
  p "$d" level1/87 "$spec" "$w" stream-staged
  p "$d" level1/87 "$spec" "$w" stream-tile "$(def STREAM_EPI 0)"
fi
wait
ls "$OUT"/*/*.so
