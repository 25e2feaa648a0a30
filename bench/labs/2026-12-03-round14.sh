#!/usr/bin/env bash
# bench/labs/2026-12-03-round14.sh: variant lab round 14 (prepared 2026-12-03, session 7; NOT
# yet run: that session's device time was spent). The variants the generator lists but no
# GPU has run:
# - 23_Softmax, 24_LogSoftmax: the persistent clusters that bulk-copy the next row
#   (recipes/softmax_cluster.cu's CGR_PREFETCH; variants 2 and 3) against the measured
#   clusters (0: 16 x 256 at two an SM, 3.483 ms; 1: 8 x 512, 3.601);
# - 40_LayerNorm: persistent held chunks (variant 3, 512 chunks a row on 396 CTAs) against
#   the split form (0: 0.2297 ms, 58.4% of SoL), and the split form with the lab option
#   CGR_SPLIT_REVERSE (statistics position by position over all rows, the output pass in
#   reverse: its first reads hit what the statistics left in the 60 MB L2).
# (Session 8 put a new variant 0 first for LayerNorm: the split form is variant 1 and the
# held chunks variant 4 since; the names keep round 14's numbering.)
# Predictions: prefetch 3-6% faster than its non-persistent form (InstanceNorm gained 17%,
# but softmax's clusters already overlap loads and stores at two CTAs an SM); LayerNorm's
# held chunks ~70% of SoL as GroupNorm's (0.19 ms). OUT default .deps/lab14. Run with
#   LAB=.deps/lab14 tests/gpu/evidence.sh lab
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-.deps/lab14}
F=tests/data/recipe
. bench/labs/lib.sh  # b
for k in 0 1 2 3; do b l23 level1/23 $F/softmax.json $k v$k; done
for k in 0 2 3; do b m24 level1/24 $F/log_softmax.json $k v$k; done
b n40 level1/40 $F/layernorm.json 1 v0-split64
b n40 level1/40 $F/layernorm.json 4 v3-persist-hold
b n40 level1/40 $F/layernorm.json 1 v0-split64-reverse "CGR_SPLIT_REVERSE 1"
