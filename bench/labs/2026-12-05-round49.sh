#!/usr/bin/env bash
# bench/labs/2026-12-05-round49.sh: variant lab round 49 (session 21): GroupNorm's
# persistent held chunks with the next chunk's loads in flight while the current one is
# written (CGR_HOLD_EARLY), and RMSNorm's columns kernel, 5.4% slower since round 48's
# hoisting.
# GroupNorm (77.6% of SoL, the goal 83.3%): hold_persist_kernel's step took its next chunk
# (loads, then the sums that need them, then the publish) before waiting for and writing
# its current chunk, so a CTA's loads and stores never overlapped: each step's loads were
# waited for in full before its stores went out. CGR_HOLD_EARLY issues the next chunk's
# loads, writes the current chunk, then sums and publishes the next (first when both are
# of one row, so that no row waits for a chunk held back). ptxas: 80 registers and 152
# bytes of spills at 3 CTAs an SM (48 before); the forms with 4-vector chunks (64
# registers, 4 CTAs an SM) keep as many bytes in flight an SM with half the registers.
# Predictions: early 4.10-4.35 ms, with L2 hints (x and y evict-first) within 2% of early against the held chunks' ~4.50 (round 48: 4.500) and the
# ring's 4.54; the 4-vector forms within 3% of their 8-vector twins.
# RMSNorm (round 48: 3.724 -> 3.923 ms): the columns kernel multiplies by a derived
# 1/sqrt where it divided each element, and now issues its 64 row-scattered stores back
# to back (SASS). "plain" is this template with CUTEGEN_RECIPE_PLAIN=1 (a division an
# element again, offsets in 64 bits); "old" is aa21302's template, plain (round 48's old).
# Prediction: plain within 1% of old (the store spacing is what the division bought), new
# 4-6% slower than both; 128 and 512 threads within 3% of 256.
# OUT default .deps/lab49.   LAB=.deps/lab49 tests/gpu/evidence.sh lab
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab49}
F=tests/data/recipe
. bench/labs/lib.sh  # b, def
G=$F/groupnorm.json
b g35 level1/35 $G 1 persist-hold
b g35 level1/35 $G 1 persist-hold-early "CGR_HOLD_EARLY 1"
b g35 level1/35 $G 1 persist-hold-early-minb2 "CGR_HOLD_EARLY 1" "$(def MIN_BLOCKS 2)"
b g35 level1/35 $G 1 persist-hold-v4 "$(def VECS 4)" "$(def SPLIT 512)" "$(def MIN_BLOCKS 4)"
b g35 level1/35 $G 1 persist-hold-v4-early "$(def VECS 4)" "$(def SPLIT 512)" "$(def MIN_BLOCKS 4)" "CGR_HOLD_EARLY 1"
b g35 level1/35 $G 1 persist-hold-t512-v4-early "$(def THREADS 512)" "$(def ROW_THREADS 512)" "$(def VECS 4)" \
  "$(def MIN_BLOCKS 2)" "CGR_HOLD_EARLY 1"
b g35 level1/35 $G 0 ring-g64-6x4
b g35 level1/35 $G 1 persist-hold-early-hints "CGR_HOLD_EARLY 1" "CGR_LAG_HINTS 1"
# LayerNorm (59.8% of SoL): its persistent held chunks (variant 3; rounds 5 and 15: 0.38-0.39
# ms against the split's 0.23) take the rows one after another, so each row reads the 32
# MiB of weight and bias again (the split's output pass runs all 16 rows' CTAs of a chunk
# together: the weights come from DRAM once). CGR_LAG_HINTS, now allowed there and in the
# split: weights evict-last, x's last read and y evict-first, so that the weights (32 of
# the L2's 50 MB) stay. Predictions: held chunks with hints and early loads 0.17-0.21 ms;
# without hints within 5% of 0.39; the split with hints within 3% of the split.
L=$F/layernorm.json
b l40 level1/40 $L 0 split
b l40 level1/40 $L 0 split-hints "CGR_LAG_HINTS 1"
b l40 level1/40 $L 3 persist
b l40 level1/40 $L 3 persist-early "CGR_HOLD_EARLY 1"
b l40 level1/40 $L 3 persist-hints "CGR_LAG_HINTS 1"
b l40 level1/40 $L 3 persist-early-hints "CGR_HOLD_EARLY 1" "CGR_LAG_HINTS 1"
R=$F/rmsnorm.json
b r36 level1/36 $R 0 new-v0
b r36 level1/36 $R 1 new-v1-t128
b r36 level1/36 $R 2 new-v2-t512
CUTEGEN_RECIPE_PLAIN=1 b r36 level1/36 $R 0 plain-v0
cp recipes/norm.cu /tmp/norm.cu.new
git show aa21302:recipes/norm.cu > recipes/norm.cu
CUTEGEN_RECIPE_PLAIN=1 b r36 level1/36 $R 0 old-v0
cp /tmp/norm.cu.new recipes/norm.cu
