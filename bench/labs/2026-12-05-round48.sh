#!/usr/bin/env bash
# bench/labs/2026-12-05-round48.sh: variant lab round 48 (prepared in session 19, no GPU lent;
# to run in the next session's first call): the norms' inner loops made shorter.
#   - src/recipe_hoist.c: the epilogue rewritten so that an element computes only what
#     depends on it: divisions by row values as products by their reciprocals, row-uniform
#     factors multiplied first ((x - mean) * rsqrt(var + eps) * w -> (x - mean) * (r * w)),
#     and rsqrt(var + eps) / 1 / sqrt(sum / n + eps) computed once a row as a derived slot
#     (recipes/norm.cu to_slots -> cgr_derive) instead of once a piece (the ring) or an
#     element (divisions);
#   - broadcast offsets (cgr_off) in 32 bits where they fit (no 64-bit divisions);
#   - the ring's stage and piece counters in 32 bits (q % 6 was a 64-bit magic division).
# SASS of GroupNorm's ring (cuobjdump of the builds below, /tmp/tools/loops.py-style count of
# each loop's body): output loop 238 -> 148 instructions a piece of 16 elements a thread
# (~105 on the path every warp takes), statistics loop 99 -> 93.
# "old-*": recipes/norm.cu of commit aa21302 with CUTEGEN_RECIPE_PLAIN=1 (expressions as
# recognised, offsets in 64 bits); "new-*": this commit.
# Predictions: GroupNorm ring 4.15-4.40 ms (old ~4.6: round 28 put the ring's loss over a
# plain copy in its arithmetic); persistent held chunks 3-8% faster; L1 and L2 norms (a
# division an element before) 2-5% faster; InstanceNorm, RMSNorm, Frobenius, LayerNorm and
# BatchNorm within +-3% (their loops were memory-bound or already hoisted); LayerNorm's
# reversed split 3-8% faster than the split (up to 60 MB of 256 re-read from L2), its ring
# still slower than the split.
# OUT default .deps/lab48.   LAB=.deps/lab48 tests/gpu/evidence.sh lab
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab48}
F=tests/data/recipe
. bench/labs/lib.sh  # b, def
builds() {  # $1: name prefix
  b g35 level1/35 $F/groupnorm.json 0 "$1ring-g64-6x4"
  b g35 level1/35 $F/groupnorm.json 1 "$1persist-hold"
  b i34 level1/34 $F/instancenorm.json 0 "$1prefetch-cluster"
  b l40 level1/40 $F/layernorm.json 0 "$1split"
  b r36 level1/36 $F/rmsnorm.json 0 "$1v0"
  b f37 level1/37 $F/frobenius.json 0 "$1v0"
  b a38 level1/38 $F/l1norm.json 0 "$1v0"
  b l39 level1/39 $F/l2norm.json 0 "$1v0"
  b b33 level1/33 $F/batchnorm.json 0 "$1v0"
}
builds new-
# LayerNorm (58% of SoL, x read twice by the split): the split's output pass in reverse
# (CGR_SPLIT_REVERSE, never run: its first reads find the statistics' last in L2) and the
# ring (round 21: 0.36 ms against the split's 0.23, its arithmetic now a third shorter)
b l40 level1/40 $F/layernorm.json 0 new-split-reverse "CGR_SPLIT_REVERSE 1"
b l40 level1/40 $F/layernorm.json 4 new-ring-g128-6x4 "CGR_RING 6" "CGR_RING_PIECES 4"
# (session 20) LayerNorm's one group of 128 takes its 16 rows one after another, and in the
# ring above all six stages are full while a row waits for its statistics (its 4 pieces and
# 2 of the next row's): the memory idles for the whole exchange, 16 times. Pieces copied
# into registers (CGR_RING_REGS, round 26: slower on GroupNorm, whose two groups of 64 keep
# the memory busy for each other, never run on LayerNorm) free each stage as it is read, so
# the next row and a half load during the exchange. ptxas: 128 registers and 144 bytes of
# spills at 512 threads, 64 and 184 at 1024. Prediction: 0.20-0.26 ms against the ring's
# ~0.33 (round 21: 0.36) and the split's 0.229.
b l40 level1/40 $F/layernorm.json 4 new-ring-regs-g128-6x4 "CGR_RING 6" "CGR_RING_PIECES 4" "CGR_RING_REGS 1"
b l40 level1/40 $F/layernorm.json 4 new-ring-regs-g128-6x4-t1024 "CGR_RING 6" "CGR_RING_PIECES 4" "CGR_RING_REGS 1" \
  "$(def THREADS 1024)" "$(def ROW_THREADS 1024)" "$(def VECS 8)"
cp recipes/norm.cu /tmp/norm.cu.new
git show aa21302:recipes/norm.cu > recipes/norm.cu
CUTEGEN_RECIPE_PLAIN=1 builds old-
cp /tmp/norm.cu.new recipes/norm.cu
