#!/usr/bin/env bash
# bench/labs/2026-12-08-round73.sh: variant lab round 73 (session 38): the width-phase pairing
# (recipes/conv_tc.cu CGR_CONV_PAIR_W 1, round 72) for the transposed convolutions whose
# COUT is 128 (level 2 #100, #93), with 64-column tiles (two column tiles a box) so that the
# two accumulator sets of a thread (2 x 32 floats) fit without spills; and level 1 #73
# (COUT 32, paired, 0.90x eager on the H100) with 64-row tiles at two CTAs an SM (two
# producers an SM gathering: its consumers wait on the gathers).
# Forms: wgmma (the generator's: #100/#93 128 x 128 unpaired, 3 stages; #73 128 x 32 paired),
# w64 (64 columns, 4 stages, unpaired), pair64 (64 columns, 4 stages, paired); #73: bm64
# (64 x 32 paired, two CTAs an SM).
# Predictions (H100, kernel ms): #100 pair64 8.0-8.5 (paired 128 columns was 8.235 with
# spills, unpaired 11.42), w64 within 10% of wgmma; #93 pair64 10-30% faster than wgmma
# (2.937x eager unpaired, 128-column paired 2.2x slower from 1 KB of spills); #73 bm64
# within +-10% of wgmma (2.30 ms). All correct.
# OUT default .deps/lab73.
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-.deps/lab73}
mkdir -p "$OUT"
. bench/labs/lib.sh  # b, def, p, listed, lab_task
for t in level2/100 level2/93; do
  lab_task "$t" cp "conv wgmma" || continue
  build/cutegen recipe --spec "$spec" --variant "$w" --out "$OUT/gen.cu" >/dev/null
  grep -q '^#define CGR_BN 128$' "$OUT/gen.cu" || { echo "round73: $t: not 128 columns: skipped"; continue; }
  p "$d" "$t" "$spec" "$w" wgmma
  p "$d" "$t" "$spec" "$w" w64 "$(def BN 64)" "$(def STAGES 4)"
  p "$d" "$t" "$spec" "$w" pair64 "$(def BN 64)" "$(def STAGES 4)" "CGR_CONV_PAIR_W 1"
done
t=level1/73
if lab_task "$t" cp "conv wgmma"; then
  p "$d" "$t" "$spec" "$w" wgmma
  p "$d" "$t" "$spec" "$w" bm64 "$(def BM 64)" "$(def WM 1)" "$(def MINB 2)"
fi
wait
ls "$OUT"/*/*.so
