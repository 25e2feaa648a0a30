#!/usr/bin/env bash
# bench/labs/2026-12-07-round72.sh: variant lab round 72 (session 37): the WGMMA transposed
# convolution in sub-pixel phases with both width phases of a box in one CTA
# (recipes/conv_tc.cu CGR_CONV_PAIR_W 1: the producer loads one phase's k-tiles then the
# other's, the consumers run them into two accumulator sets and store each thread's two
# neighbouring outputs together, an 8-byte store where aligned) against the generator's form
# (the two width phases in neighbouring CTAs, each writing every other float of a row), and
# both with CGR_CONV_MMA_INFLIGHT 1 (round 71's form).
# Why: ncu on level 1 #73 (session 36, H100): DRAM 41% busy over 3.41 ms, ~4.7 GB moved for
# 1.04 GB of output and 0.13 GB of input; 25% of the global sectors excessive, the stores'
# half-written sectors. Problems: those whose first variant is that kernel with width
# stride 2 and no channel reduction: level 1 #73, #77; level 2 #100, #26, #20, #16.
# Predictions (H100, kernel ms): pair 10-40% faster than wgmma on #73 (3.41 ms) and #100/#26
# (the H200's 0.52x and 0.80x rows, same output-bound shape), within +-10% on #77 (7 of 8
# phases without taps: few stores a tap) and #20/#16; all correct. Run the sanitizer first
# (tests/gpu/problems/convt_wgmma_pairw.py: its "sanitize-also" line builds the pair form).
# OUT default .deps/lab72.
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab72}
mkdir -p "$OUT"
. bench/labs/lib.sh  # b, def, p, listed, lab_task
for t in level1/73 level2/100 level2/26 level1/77 level2/20 level2/16; do
  lab_task "$t" cp "conv wgmma" || continue
  build/cutegen recipe --spec "$spec" --variant "$w" --out "$OUT/gen.cu" >/dev/null
  grep -q '^#define CGR_SW 2$' "$OUT/gen.cu" || { echo "round72: $t: width stride not 2: skipped"; continue; }
  p "$d" "$t" "$spec" "$w" wgmma
  p "$d" "$t" "$spec" "$w" pair "CGR_CONV_PAIR_W 1"
  if grep -q '^#define CGR_PROMOTE 0$' "$OUT/gen.cu"; then
    p "$d" "$t" "$spec" "$w" pair-inflight "CGR_CONV_PAIR_W 1" "CGR_CONV_MMA_INFLIGHT 1"
  fi
done
wait
ls "$OUT"/*/*.so
