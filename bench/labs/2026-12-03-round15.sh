#!/usr/bin/env bash
# bench/labs/2026-12-03-round15.sh: variant lab round 15 (2026-12-03, session 8): round 14's
# builds (never run: no device then) plus the groups of persistent CTAs that hold one long
# row between them (recipes/norm.cu's CGR_GROUP: partial statistics through the workspace,
# the next row's chunk bulk-copied meanwhile, a cooperative launch):
# - 40_LayerNorm (16 rows of 16 MiB): group of 128 CTAs (v0) against split 64 (v1, 0.2297 ms,
#   58.4% of SoL), and the group with the x copies marked evict-first in L2 (so that the
#   32 MiB of weight and bias every row reads stay there);
# - 35_GroupNorm_ (896 rows of 8 MiB): groups of 64 (v0) against the persistent held chunks
#   (v1, 4.952 ms, 70.6%);
# - 34_InstanceNorm (rows of 1 MiB): a group of 8 (the workspace exchange) against the
#   cluster of 8 (v0, 4.029 ms): what the exchange costs when the barrier is a cluster's.
# Predictions: LayerNorm group 0.16-0.18 ms (75-83% of SoL), evict-first a further 5%;
# GroupNorm groups 4.1-4.3 ms (81-85%, InstanceNorm's prefetch reached 86.8%); InstanceNorm
# group of 8 within 3% of the cluster. Round 14's predictions in its header. OUT default
# .deps/lab15. Run with
#   LAB=.deps/lab15 tests/gpu/evidence.sh lab
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab15}
OUT=$OUT bash bench/labs/2026-12-03-round14.sh
F=tests/data/recipe
. bench/labs/lib.sh  # b, def
b n40 level1/40 $F/layernorm.json 0 v0-group128
b n40 level1/40 $F/layernorm.json 0 v0-group128-evict "CGR_EVICT_FIRST 1"
b g35 level1/35 $F/groupnorm.json 0 v0-group64
b g35 level1/35 $F/groupnorm.json 1 v1-persist-hold
b i34 level1/34 $F/instancenorm.json 0 v0-cluster8
b i34 level1/34 $F/instancenorm.json 0 v0-group8 "$(def CLUSTER 1)" "CGR_GROUP 8"
