#!/usr/bin/env bash
# bench/labs/2026-12-03-round16.sh: variant lab round 16 (2026-12-03, session 8): the new
# ROWLOSS family (recipes/rowloss.cu) on its two level-1 problems, every variant the
# generator lists first:
# - 95_CrossEntropyLoss (32768 rows of 4096 logits, mean): a warp a row (v0), the same with
#   __expf (v1), a CTA of 512 a row (v2), a CTA of 256 a row (v3);
# - 99_TripletMarginLoss (three 32768 x 8192 tensors, mean): a warp a row (v0), CTAs of
#   512 and 256 a row (v1, v2).
# Predictions: both memory-bound at 85-90% of SoL (one read of the inputs): cross-entropy
# ~0.14 ms (eager: log_softmax writes and re-reads the 512 MB, ~3x slower), triplet
# ~0.85 ms (eager's pairwise_distance makes two (N, D) temporaries, ~2.5x slower); the
# accurate expf within 10% of __expf (memory-bound either way). OUT default .deps/lab16.
#   LAB=.deps/lab16 tests/gpu/evidence.sh lab
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab16}
F=tests/data/recipe
. bench/labs/lib.sh  # b
for k in 0 1 2 3; do b c95 level1/95 $F/cross_entropy.json $k v$k; done
for k in 0 1 2; do b t99 level1/99 $F/triplet_margin.json $k v$k; done
