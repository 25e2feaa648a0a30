#!/usr/bin/env bash
# cutegen recipe, CONV family on Hopper: a reduction over the channels in the WGMMA kernel
# (recipes/conv_tc.cu chan_reduce_wg, offered first where COUT <= 128 since 12-07). The
# accumulator layout it assumes, checked on the host for the consumers' TiledMma at every
# tile width the generator can ask (tests/cli/recipe_wgmma_acc.cpp: a row's columns all in
# one quad of lanes, once each; 112 is made of seven 16-wide atoms); and the fixtures of
# level 2 #25 (64 channels, the real spec) and of conv_wgmma_chanred.py (100 in a 112-wide
# tile) offer the WGMMA kernel first with CGR_CHANRED in its source. Needs a
# C++17 compiler, CUTLASS and the CUDA headers; skips, saying so, without them.
. "$(dirname "$0")/lib.sh"

need_host_cute

for bm in 64 128; do
  for bn in 16 32 48 64 80 96 112 128; do
    tests=$((tests + 1))
    build_and_run "acc-$bm-$bn" "accumulators of a $bm x $bn tile" -DBM=$bm -DBN=$bn "$SRC/tests/cli/recipe_wgmma_acc.cpp"
  done
done

for spec in "$SRC"/tests/data/recipe/conv/l2_25_Conv2d_Min_Tanh_Tanh.json "$SRC"/tests/data/recipe/conv_wgmma_chanred.json; do
  name=$(basename "$spec" .json)
  tests=$((tests + 1))
  [ -f "$spec" ] || { echo "FAIL: $name: the fixture $spec is missing (tests/data/recipe/make_fixtures.py writes it)"; failures=$((failures + 1)); continue; }
  gen_first "$spec" "conv wgmma" "the WGMMA kernel" || continue
  if grep -q '^#define CGR_CHANRED [1-9]' "$TMP/gen/$name.cu" && grep -q '^#define CGR_WGMMA 1' "$TMP/gen/$name.cu"; then
    echo "ok: $name: $first, CGR_CHANRED in its source"
  else
    echo "FAIL: $name: the WGMMA variant's source lacks CGR_CHANRED or CGR_WGMMA"; failures=$((failures + 1))
  fi
done
finish
