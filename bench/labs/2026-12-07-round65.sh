#!/usr/bin/env bash
# bench/labs/2026-12-07-round65.sh: variant lab round 65 (session 34): level 1 #87 on the
# streaming GEMM with its B tiles coming through a ring of STAGES fp32 tiles (cp.async,
# STAGES - 1 ahead: ~100 KB in flight an SM) instead of one tile held in registers (round
# 64, H100: 6.68 ms against mma.sync's 5.16, eager 4.55: the loads' latency exposed).
# BN 128 at 4 and 3 stages, BN 64 at 3 (two CTAs an SM), against mma.sync (3xTF32).
# Predictions (kernel ms, H100): stream-128 3.9-4.6 (eager 4.55: 1.0-1.15x), s3 within 5%,
# stream-64 within 10%; mma-sync 5.16 as in round 64.
# OUT default .deps/lab65.
#   LABS=.deps/lab65 bench/gpu_session.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab65}
mkdir -p "$OUT"
. bench/labs/lib.sh  # b, def, p, listed, lab_task
if lab_task level1/87 pw "gemm stream 3xf16 tile=128x128"; then
  p "$d" level1/87 "$spec" "$w" stream-128
  p "$d" level1/87 "$spec" "$w" stream-128-s3 "$(def STAGES 3)"
  p "$d" level1/87 "$spec" "$(listed "$spec" "gemm stream 3xf16 tile=128x64")" stream-64
  p "$d" level1/87 "$spec" "$(listed "$spec" "conv as gemm 3xtf32")" mma-sync
fi
wait
ls "$OUT"/*/*.so
