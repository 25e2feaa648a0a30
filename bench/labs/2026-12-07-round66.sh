#!/usr/bin/env bash
# bench/labs/2026-12-07-round66.sh: variant lab round 66 (session 34): where level 1 #87's
# streaming GEMM spends its time (6.7 ms on the H100 in rounds 64 and 65 whether one tile
# or a ring of four was in flight, and at one CTA an SM or two): the kernel with no WGMMA
# issued (CGR_LAB_NO_MMA) and with no C stored (CGR_LAB_NO_STORE), both wrong by design,
# against the full one; ncu on the full one (NCU=level1/87:.deps/lab66/pw1-87/stream-128.so:gemm_stream).
# (As run at 09:03 the round also built the kernel with CGR_LAB_NO_MMA 1 and CGR_LAB_NO_STORE
# 1; the lab stops at their wrong first results, so they were never timed, and those lab
# forms are gone from recipes/gemm_stream.cu since: ncu's source counters answered instead.)
# Predictions (H100, kernel ms): no-mma ~6.5 and no-store ~2.5 if the stores are what is
# slow; no-mma ~2.5 if the WGMMAs are (a bank-conflicted smem read would be 8x slower).
# OUT default .deps/lab66.
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab66}
mkdir -p "$OUT"
. bench/labs/lib.sh  # b, def, p, listed, lab_task
if lab_task level1/87 pw "gemm stream 3xf16 tile=128x128"; then
  p "$d" level1/87 "$spec" "$w" stream-128
fi
wait
ls "$OUT"/*/*.so
