#!/usr/bin/env bash
# bench/labs/2026-12-04-round25.sh: round 25 (2026-12-03, session 11), a diagnostic for ncu
# only: the ring with and without waiting for its group (CGR_LAB_NO_WAIT: wrong results,
# timed by ncu's Duration). Question: is the ~3 us a row the rings lose (rounds 21-24)
# the wait for the group's slowest CTA, or the data pipeline itself?
# Prediction: without the wait, groups of 128 with lookahead ~4.3 ms under ncu (ncu's
# clocks: x1.17), i.e. the wait is the loss.
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab25}
F=tests/data/recipe
. bench/labs/lib.sh  # b, def
g128() { b g35 level1/35 $F/groupnorm.json 1 "$1" "$(def GROUP 128)" "$(def VECS 8)" "${@:2}"; }
b g35 level1/35 $F/groupnorm.json 1 ring-g64-6x4 "CGR_RING 6" "CGR_RING_PIECES 4"
b g35 level1/35 $F/groupnorm.json 1 ring-g64-6x4-nowait "CGR_RING 6" "CGR_RING_PIECES 4" "CGR_LAB_NO_WAIT 1"
g128 ring-g128-6x2-ahead "CGR_RING 6" "CGR_RING_PIECES 2" "CGR_RING_AHEAD 1"
g128 ring-g128-6x2-ahead-nowait "CGR_RING 6" "CGR_RING_PIECES 2" "CGR_RING_AHEAD 1" "CGR_LAB_NO_WAIT 1"
