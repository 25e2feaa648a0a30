#!/usr/bin/env bash
# bench/labs/2026-12-05-round50.sh: variant lab round 50 (prepared in session 21, not run):
# plain TF32 for the level-2 chains that lose to eager after a convolution.
# The H100 sweep of 12-05 15:48 (bench/results/2026-12-05-1548-s21-h100.json) put seven
# covered level-2 chains below eager: #11 0.50x, #43 0.61x, #42 0.66x, #32 0.87x, #35
# 0.91x, #17 0.92x, #19 0.92x. Each is dominated by a convolution that PyTorch runs through
# cuDNN in TF32 (torch.backends.cudnn.allow_tf32 is on by default), against the recipe's
# 3xFP16 or 3xTF32 (three MMAs a product, for fp32 accuracy). The generator's plain TF32
# copy of the first tile comes last in the convolution's variants, and a staged plan's
# eight variants never reach it. Here each plan's variant 0 is built as generated and with
# its convolution's CGR_PREC set to 1 (plain TF32, same tile): whether TF32 passes the
# lab's 1e-4 check against eager on these (whose reference is itself cuDNN's TF32), and
# how much faster it is.
# Predictions: TF32 1.6-2.4x faster than variant 0 on #11, #43, #42 (products of K 1600,
# 1728 and 576), 1.2-1.6x on the others; correct on at most half of them (#15 and #60's
# TF32 variants failed the fp32 tolerance in that sweep).
# Builds here take ~3 min each on two cores (`p` builds them a core each); on the GPU
# host's 16 cores, all at once, ~4 min: OUT=.deps/lab50 bash bench/labs/2026-12-05-round50.sh
# SPECS: the task specs (bench/results/2026-12-05-0202-specs.tar.gz, extracted).
# OUT default .deps/lab50.   LAB=.deps/lab50 tests/gpu/evidence.sh lab
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab50}
S=${SPECS:-.deps/specs/specs}
. bench/labs/lib.sh  # b, def, p
for t in 11 43 42 32 35 17 19; do
  spec=$(ls "$S"/level2/${t}_*.json 2>/dev/null | head -1)
  [ -n "$spec" ] || { echo "round50: no spec for level 2 #$t in $S"; continue; }
  p c$t level2/$t "$spec" 0 v0
  p c$t level2/$t "$spec" 0 v0-tf32 "$(def PREC 1)"
done
wait
