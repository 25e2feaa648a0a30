#!/usr/bin/env bash
# cutegen recipe, CONV family: the channels-last index math of generated convolution kernels
# run on the host. Each small convolution of tests/data/recipe/conv-emu/ (CIN padded to CP,
# strides, padding, dilation, 1D/2D/3D, a stride-1 transposed convolution with output
# padding and one whose padding crops) is generated in its first channels-last variant
# (and in its first of Hopper's, CGR_WGMMA, whose channels are padded to 8; strided
# transposed ones, *_phases, in sub-pixel phases: Hopper's form only),
# its kernel (recipes/conv_tc.cu with the generated parameters) compiled with the host C++
# compiler into tests/cli/recipe_conv_emu.cpp, which computes the whole convolution
# through the template's own x/weight copies, row corners, taps, chunk bounds and output
# rows, and compares every output with a direct convolution in double. Needs a C++17
# compiler, the CUDA headers and CUTLASS; skips, saying so, without them.
. "$(dirname "$0")/lib.sh"

need_host_cute

mkdir -p "$TMP/gen" "$TMP/bin" "$TMP/log"
# emulate SPEC NAME PATTERN: the first variant whose --list line matches PATTERN
emulate() {
  local spec=$1 name=$2 pattern=$3 v
  tests=$((tests + 1))
  v=$("$CUTEGEN" recipe --spec "$spec" --list 2>&1 | grep -E "^variant [0-9]*: $pattern" | head -1 |
      sed 's/^variant \([0-9]*\):.*/\1/')
  if [ -z "$v" ]; then
    echo "FAIL: $name: no variant listed matching '$pattern'"; failures=$((failures + 1)); return
  fi
  gen_variant "$spec" "$v" "$name" || return
  run_emulator "$name" recipe_conv_emu.cpp \
    "variant $v: $(grep "^variant $v:" <("$CUTEGEN" recipe --spec "$spec" --list) | cut -d: -f2- | cut -c2-48)"
}
for spec in "$SRC"/tests/data/recipe/conv-emu/*.json; do
  name=$(basename "$spec" .json)
  # strided transposed convolutions: channels-last only on Hopper, in sub-pixel phases
  case $name in *_phases) ;; *) emulate "$spec" "$name" "conv( flipped)? channels-last" ;; esac
  # Hopper's form (CGR_WGMMA: channels padded to 8, not 4) where it is offered: not for 5
  # input channels (8 would be 1.6 times as many)
  case $name in conv2d_odd) ;; *) emulate "$spec" "$name-wgmma" "conv wgmma( flipped)? channels-last" ;; esac
done
finish
