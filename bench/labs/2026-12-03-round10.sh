#!/usr/bin/env bash
# bench/labs/2026-12-03-round10.sh: variant lab round 10 (2026-12-03, session 7), on the
# level-1 problems short of 1.2x of their speed of light (docs/recipes-h200.md):
# - 23_Softmax (83.2%): a cluster of 16 CTAs (not portable: cgr::launch_cluster) at 256
#   threads, two CTAs an SM, so that one CTA's loads overlap the other's stores, against
#   the measured one CTA an SM (512 threads, a cluster of 8);
# - 98_KLDivLoss (79.3%): the generator's fast variant (__logf for its two logs an element)
#   against logf, and with twice the CTAs;
# - 34_InstanceNorm (71.3%): clusters of 16 at two CTAs an SM (512 threads x 8 vectors, and
#   256 x 16) against held chunks (one CTA a chunk, and persistent).
# SPECS: the real task specs (tests/gpu/evidence.sh's specs section). OUT default .deps/lab10.
# Run with LAB=.deps/lab10 tests/gpu/evidence.sh lab
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-.deps/lab10}
S=${SPECS:?SPECS: the folder of the real task specs}/level1
. bench/labs/lib.sh  # b, def
# Variant numbers as the generator lists them after this round (it reordered what won).
# a34 and b35 are round 9's builds (bench/labs/2026-12-03-round9.sh), run in the same call.
b c23 level1/23 $S/23_Softmax.json 1 a-v0-512x8
b c23 level1/23 $S/23_Softmax.json 0 b-v1-256x16-minb2
b d98 level1/98 $S/98_KLDivLoss.json 0 a-v0-logf
b d98 level1/98 $S/98_KLDivLoss.json 1 b-v1-fast
b d98 level1/98 $S/98_KLDivLoss.json 1 c-v1-fast-split1024 "$(def SPLIT 1024)"
# d-v0-logf-batch4, e-v1-fast-batch4, f-v1-fast-batch8 were built from a recipes/reduce.cu
# option not kept (CGR_BATCH: 4 or 8 vectors of each input loaded through asm volatile
# before the first add): 0.6562, 0.5121 and 0.4978 ms, no gain over a and b.
I=$S/34_InstanceNorm.json
C16="$(def CLUSTER 16)"
b e34 level1/34 $I 0 a-v3-hold
b e34 level1/34 $I 1 b-v4-persist
b e34 level1/34 $I 2 c-v0-512x16-minb2 "$C16" "$(def VECS 8)" "$(def MIN_BLOCKS 2)"
b e34 level1/34 $I 2 d-256x16-minb2 "$C16" "$(def THREADS 256)" "$(def ROW_THREADS 256)" "$(def MIN_BLOCKS 2)"
b e34 level1/34 $I 2 e-256x16-minb1 "$C16" "$(def THREADS 256)" "$(def ROW_THREADS 256)"
