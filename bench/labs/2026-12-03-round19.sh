#!/usr/bin/env bash
# bench/labs/2026-12-03-round19.sh: variant lab round 19 (2026-12-03, session 10): the lagged
# held chunks again, the lag now set at launch to at least a row plus twice the CTAs (round
# 18's lag of one or two rows made tasks wait for rows still in flight: GroupNorm 12.9 /
# 9.0 ms, InstanceNorm 80 ms, LayerNorm 0.40; ncu on GroupNorm lag 1: 21.5% of DRAM peak,
# 59% L2 hits).
# - 35_GroupNorm_: v0 (lag: 512 + 2 x 528 chunks = 25 MB of x), v1 (persistent held
#   chunks, 4.95 ms), the lag with L2 hints, a lag of 4 rows (2048 chunks, 32 MB).
# - 34_InstanceNorm: v0 (prefetching cluster, 4.02 ms), v1 (the lag: 64 + 1056 chunks).
# - 40_LayerNorm: v0 (split 64, 0.229 ms), the lag (1024 + 1056 chunks, 34 MB, with 32 MB
#   of weights: the generator no longer offers it), the lag with L2 hints.
# Predictions: GroupNorm 4.2-4.5 ms, InstanceNorm ~4.1, LayerNorm 0.20-0.25 (hints 5% better).
# OUT default .deps/lab19.   LAB=.deps/lab19 tests/gpu/evidence.sh lab
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab19}
F=tests/data/recipe
. bench/labs/lib.sh  # b, def
b g35 level1/35 $F/groupnorm.json 0 v0-lag
b g35 level1/35 $F/groupnorm.json 1 v1-persist-hold
b g35 level1/35 $F/groupnorm.json 0 lag-hints "CGR_LAG_HINTS 1"
b g35 level1/35 $F/groupnorm.json 0 lag4rows "$(def HOLD_LAG 4)"
b i34 level1/34 $F/instancenorm.json 0 v0-prefetch-cluster
b i34 level1/34 $F/instancenorm.json 1 v1-lag
lagln() { b n40 level1/40 $F/layernorm.json 0 "$1" "$(def MODE 4)" "$(def VECS 4)" "$(def SPLIT 1024)" "CGR_HOLD_LAG 1" "${@:2}"; }
b n40 level1/40 $F/layernorm.json 0 v0-split64
lagln lag
lagln lag-hints "CGR_LAG_HINTS 1"
