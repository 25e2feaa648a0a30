#!/usr/bin/env bash
# bench/labs/2026-12-03-round17.sh: variant lab round 17 (2026-12-03, session 9): the split
# norm fused into one kernel (CGR_SPLIT_FUSED, recipes/norm.cu): OUTER x SPLIT CTAs in row
# order, each publishing its chunk's partial statistics, waiting for its row's SPLIT, then
# re-reading its chunk for the output. Only the rows whose CTAs run at once are in flight
# (resident CTAs / SPLIT of them), so the re-read should come from L2 when they fit it.
# - 40_LayerNorm (16 rows of 16 MiB; weight and bias 16 MiB each, the same every row):
#   split 64 in three kernels (v0, 0.2155-0.230 ms in sweeps), fused with 1024 x 128,
#   512 x 256, 1024 x 132, 256 x 512. (ptxas: 60 registers at 1024 threads, so one CTA an
#   SM: 1024 x 128 and 1024 x 132 keep one row in flight; 512 threads, 40 registers: three
#   an SM, so 512 x 256 keeps one.)
# - 35_GroupNorm_ (896 rows of 8 MiB): the persistent held chunks (v0, 4.975 ms), fused
#   with 1024 x 64 (2 rows in flight), 1024 x 132 (1), 512 x 128 (3), 512 x 264 (1).
# Predictions: the fused forms read x once from DRAM and once from L2: GroupNorm
# 3.9-4.2 ms (83-90% of SoL) if the row barrier's bubbles stay small; LayerNorm ~0.17 ms
# (weight and bias come from DRAM for each pair of rows: ~800 MB a call).
# OUT default .deps/lab17.   LAB=.deps/lab17 tests/gpu/evidence.sh lab
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab17}
F=tests/data/recipe
. bench/labs/lib.sh  # b, def
fz() { b "$1" "$2" "$3" "$4" "$5" "CGR_SPLIT_FUSED 1" "$(def THREADS "$6")" "$(def ROW_THREADS "$6")" "$(def SPLIT "$7")"; }
b n40 level1/40 $F/layernorm.json 0 v0-split64
fz n40 level1/40 $F/layernorm.json 0 fused-1024x128 1024 128
fz n40 level1/40 $F/layernorm.json 0 fused-512x256 512 256
fz n40 level1/40 $F/layernorm.json 0 fused-1024x132 1024 132
fz n40 level1/40 $F/layernorm.json 0 fused-256x512 256 512
b g35 level1/35 $F/groupnorm.json 0 v0-persist-hold
fz g35 level1/35 $F/groupnorm.json 2 fused-1024x64 1024 64
fz g35 level1/35 $F/groupnorm.json 2 fused-1024x132 1024 132
fz g35 level1/35 $F/groupnorm.json 2 fused-512x128 512 128
fz g35 level1/35 $F/groupnorm.json 2 fused-512x264 512 264
