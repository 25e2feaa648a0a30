#!/usr/bin/env bash
# bench/labs/2026-12-06-round60.sh: variant lab round 60 (written in session 29, for the next
# GPU call): the direct transposed convolution's stores staged through shared memory
# (recipes/conv_direct.cu CGR_DIRECT_STAGE 1) against its plain stores.
# Why: session 29's sweep (H100) ran #81 at 1.98 ms where its 831 MB of y take 0.25 ms at
# 3.35 TB/s and its FMAs ~0.1 ms: a warp's lanes write one float every SW (5 for #81, 2 for
# #79, 3 for #75) floats, so each store of 128 useful bytes touches SW times the sectors
# (~130 M sector writes for #81). Staged, each thread puts its sums in a tile at its pixel's
# place, and after a barrier a warp writes 32 neighbouring floats of a channel.
# Forms (threads a multiple of 32 x SW, a CTA whole chunks): direct (the generator's, 128
# threads), stage (32 x SW, and 2 x that), for level 1 #81 (SW 5), #79 (SW 2), #75 (SW 3).
# Predictions (H100): all correct; #81 stage 0.5-0.9 ms against direct's ~1.98 (2-4x); #79
# 1.2-1.8 against 2.43 (its FMAs, ~0.45 ms, weigh more); #75 0.8-1.1 against 1.36.
# OUT default .deps/lab60.   LABS=.deps/lab60 bench/gpu_session.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab60}
mkdir -p "$OUT"
. bench/labs/lib.sh  # b, def, p, listed, lab_task
for t in level1/81 level1/79 level1/75; do
  lab_task "$t" d "conv direct" || continue
  build/cutegen recipe --spec "$spec" --variant "$w" --out "$OUT/sw.cu" >/dev/null
  sw=$(sed -n 's/^#define CGR_SW \([0-9]*\)$/\1/p' "$OUT/sw.cu" | head -1)  # the generated one
  p "$d" "$t" "$spec" "$w" direct
  p "$d" "$t" "$spec" "$w" stage-$((32 * sw)) "CGR_DIRECT_STAGE 1" "s/^#define CGR_THREADS [0-9]*$/#define CGR_THREADS $((32 * sw))/"
  p "$d" "$t" "$spec" "$w" stage-$((64 * sw)) "CGR_DIRECT_STAGE 1" "s/^#define CGR_THREADS [0-9]*$/#define CGR_THREADS $((64 * sw))/"
done
wait
ls "$OUT"/*/*.so
