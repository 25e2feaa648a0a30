#!/usr/bin/env bash
# cutegen recipe, CONV family: a mean or sum over some of a transposed convolution's output
# dims, folded into its input and weight (recipes/conv_fold.cuh, CGR_PREFOLD). Each small
# problem of tests/data/recipe/conv-prefold/ (level 2 #13's form: a ConvTranspose3d, stride
# 1, padding 1, its mean over the depth, then a bias; a strided, padded, dilated
# ConvTranspose2d summed over its height; a grouped ConvTranspose3d with padding and
# dilation, its mean over height and width) must be described as folded, and its first
# variant, generated, compiled with the host C++ compiler into tests/cli/recipe_prefold_emu.cpp:
# the template's xf_value and wf_value fold random x and w, the convolution of the geometry
# the generator wrote runs over them, and each output is compared with the direct
# convolution summed over the folded dims, in double. Needs a C++17 compiler, the CUDA
# headers and CUTLASS; skips, saying so, without them.
. "$(dirname "$0")/lib.sh"

need_host_cute

for spec in "$SRC"/tests/data/recipe/conv-prefold/*.json; do
  name=$(basename "$spec" .json)
  tests=$((tests + 1))
  if ! "$CUTEGEN" recipe --spec "$spec" 2>&1 | grep -q "^folded: the .* over dims"; then
    echo "FAIL: $name: not folded:"; "$CUTEGEN" recipe --spec "$spec" 2>&1 | head -5 | sed 's/^/  /'
    failures=$((failures + 1)); continue
  fi
  first=$("$CUTEGEN" recipe --spec "$spec" --list 2>&1 | grep -m 1 "^variant 0:")
  gen_variant "$spec" 0 "$name" || continue
  run_emulator "$name" recipe_prefold_emu.cpp "${first#variant 0: }"
done
finish
