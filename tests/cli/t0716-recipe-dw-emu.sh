#!/usr/bin/env bash
# cutegen recipe, CONV family: the depthwise convolution (recipes/conv_dw.cu) of each small
# problem in tests/data/recipe/conv-dw/ (2D strided, padded and dilated with bias; a 3x7
# filter over 11 output rows; 3D with a stride along H; 1D) generated as its first variant,
# then with each thread summing 1, 2, 3, 4 and 8 output rows down its column (CGR_DW_ROWS:
# the generator asks for 8 or 4 where the items fill the GPU, which these small problems do
# not; 3 and 8 leave a partial last block of rows), the kernel compiled with the host C++
# compiler into tests/cli/recipe_dw_emu.cpp, which runs every thread's item through the
# template's own index math and sums and compares each output with the depthwise
# convolution by PyTorch's definition, in double, and that each is stored once. Needs a
# C++17 compiler and the CUDA headers; skips, saying so, without them.
. "$(dirname "$0")/lib.sh"

need_host_cute

for spec in "$SRC"/tests/data/recipe/conv-dw/*.json; do
  tests=$((tests + 1))
  gen_first "$spec" "conv depthwise" "the depthwise kernel" || continue
  grep -q '^#define CGR_DW_ROWS [0-9]*$' "$TMP/gen/$name.cu" ||
    { echo "FAIL: $name: the generated kernel does not say its rows a thread (CGR_DW_ROWS)"; failures=$((failures + 1)); continue; }
  oh=$(sed -n 's/^#define CGR_OH \([0-9]*\)$/\1/p' "$TMP/gen/$name.cu" | head -1)  # the generated one, before the defaults
  run_emulator "$name" recipe_dw_emu.cpp "$first"
  for rows in 2 3 4 8; do
    [ "$rows" -le "${oh:-1}" ] || continue
    tests=$((tests + 1))
    sed "s/^#define CGR_DW_ROWS [0-9]*$/#define CGR_DW_ROWS $rows/" "$TMP/gen/$name.cu" >"$TMP/gen/$name-rows$rows.cu"
    run_emulator "$name-rows$rows" recipe_dw_emu.cpp "$rows rows a thread"
  done
done
finish
