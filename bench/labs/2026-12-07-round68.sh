#!/usr/bin/env bash
# bench/labs/2026-12-07-round68.sh: variant lab round 68 (session 34): level 1 #87's
# streaming GEMM with C staged (round 67, H100: 4.890 ms against mma.sync's 5.203, eager
# 4.67; 255 registers and 32 bytes of spills, a named barrier's id in a register) with the
# barrier ids constant.
# Predictions (H100, kernel ms): staged-v2 4.6-4.9, fewer registers, no spills.
# OUT default .deps/lab68.
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab68}
mkdir -p "$OUT"
. bench/labs/lib.sh  # b, def, p, listed, lab_task
if lab_task level1/87 pw "gemm stream 3xf16 tile=128x128"; then
  p "$d" level1/87 "$spec" "$w" stream-staged-v2
fi
wait
ls "$OUT"/*/*.so
