#!/usr/bin/env bash
# bench/labs/2026-12-04-round28.sh: round 28 (2026-12-03, session 11), diagnostics for ncu
# (wrong results, timed by ncu's Duration): the ring as a copy (CGR_LAB_COPY_ONLY: x through
# the ring to y, no statistics, no exchange) for groups of 64 and 128, next to the real
# ring; and the real group of 64 for ncu's stall sampling (SourceCounters). Rounds 21-27 fit
# a fixed ~5.7 us a row a CTA (under ncu) that neither the exchange nor the bytes in flight
# explain. Prediction: the copy runs near the copy bandwidth (~3.5 ms under ncu) for both.
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab28}
F=tests/data/recipe
. bench/labs/lib.sh  # b, def
g128() { b g35 level1/35 $F/groupnorm.json 0 "$1" "$(def GROUP 128)" "$(def VECS 8)" "${@:2}"; }
b g35 level1/35 $F/groupnorm.json 0 ring-g64-6x4
b g35 level1/35 $F/groupnorm.json 0 copy-g64-6x4 "CGR_LAB_COPY_ONLY 1"
g128 copy-g128-6x2 "$(def RING_PIECES 2)" "CGR_LAB_COPY_ONLY 1"
g128 copy-g128-6x2-store "$(def RING_PIECES 2)" "CGR_LAB_COPY_ONLY 1" "CGR_RING_STORE 1"
