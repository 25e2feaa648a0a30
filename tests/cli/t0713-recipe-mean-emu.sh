#!/usr/bin/env bash
# cutegen recipe, CONV family: a mean or sum over all the pixels of a transposed convolution,
# folded (recipes/conv_mean.cu). Each small problem of tests/data/recipe/conv-fold/ (a 2D one
# with padding, stride 2 and output padding, as level 2 #44; a grouped 3D one with padding,
# dilation and output padding under a global average pooling; a 1D one without padding,
# stride 3 and dilation 2, summed) is generated as its first variant, which must be the
# fold, and its cell math (tap_lo, tap_hi, cell_of, single_w, in_box) compiled with the
# host C++ compiler into tests/cli/recipe_mean_emu.cpp, which folds random x and w through
# it and compares each output's sum with the direct transposed convolution's, in double.
# Needs a C++17 compiler and the CUDA headers; skips, saying so, without them.
. "$(dirname "$0")/lib.sh"

need_host_cute

for spec in "$SRC"/tests/data/recipe/conv-fold/*.json; do
  tests=$((tests + 1))
  gen_first "$spec" "conv folded" "the fold" || continue
  run_emulator "$name" recipe_mean_emu.cpp "$first"
done
finish
