#!/usr/bin/env bash
# cutegen recipe, CONV family: the direct transposed convolution (recipes/conv_direct.cu) of
# each small problem in tests/data/recipe/conv-direct/ (level 1 #81's stride 5 and dilation
# 2, #79's 1D stride and dilation 2, a grouped 3D one with an even kernel and output
# padding, a grouped 3D one whose rows of 159 outputs take three chunks of 64: the
# generator's two pixels a thread, one pair whole and one cut by the row's end)
# generated as the first variant, which must be the direct one, its kernel compiled
# with the host C++ compiler into tests/cli/recipe_direct_emu.cpp, which stages the weights
# and sums every output through the template's own index math and compares each with the
# transposed convolution by PyTorch's definition, in double. The generated form stores the
# sums through a shared tile (CGR_DIRECT_STAGE 1, a CTA two chunks of 32 x SW outputs: every
# output stored once, from the place its thread put it); it runs again with a CTA one chunk,
# in the plain stores (128 threads), and both forms with the other pixel count a thread
# (CGR_DIRECT_PIX 1 or 2). Needs a C++17
# compiler and the CUDA headers; skips, saying so, without them.
. "$(dirname "$0")/lib.sh"

need_host_cute

for spec in "$SRC"/tests/data/recipe/conv-direct/*.json; do
  tests=$((tests + 1))
  gen_first "$spec" "conv direct" "the direct kernel" || continue
  # the generated form stores through a shared tile (CGR_DIRECT_STAGE 1, a CTA two chunks of
  # 32 x SW); also a CTA one chunk, and the plain stores (128 threads, SW floats apart)
  grep -q '^#define CGR_DIRECT_STAGE 1$' "$TMP/gen/$name.cu" ||
    { echo "FAIL: $name: the generated direct kernel does not stage its stores"; failures=$((failures + 1)); }
  sw=$(sed -n 's/^#define CGR_SW \([0-9]*\)$/\1/p' "$TMP/gen/$name.cu" | head -1)  # the generated one, before the defaults
  sed "s/^#define CGR_THREADS [0-9]*$/#define CGR_THREADS $((32 * ${sw:-1}))/" "$TMP/gen/$name.cu" >"$TMP/gen/$name-stage32.cu"
  sed -e "s/^#define CGR_THREADS [0-9]*$/#define CGR_THREADS 128/" -e 's/^#define CGR_DIRECT_STAGE 1$/#define CGR_DIRECT_STAGE 0/' \
    "$TMP/gen/$name.cu" >"$TMP/gen/$name-plain.cu"
  # the other pixel count (CGR_DIRECT_PIX: the generator's 2 where a row holds two chunks and
  # the channel block halves, else 1), staged and plain
  pix=$(sed -n 's/^#define CGR_DIRECT_PIX \([0-9]*\)$/\1/p' "$TMP/gen/$name.cu" | head -1)
  other=$((3 - ${pix:-1}))
  for f in "$name" "$name-plain"; do
    sed "/^#define CGR_DIRECT_PIX [0-9]*$/d" "$TMP/gen/$f.cu" | { echo "#define CGR_DIRECT_PIX $other"; cat; } >"$TMP/gen/$f-pix$other.cu"
  done
  for form in "$name" "$name-stage32" "$name-plain" "$name-pix$other" "$name-plain-pix$other"; do
    [ "$form" = "$name" ] || tests=$((tests + 1))
    run_emulator "$form" recipe_direct_emu.cpp "$first"
  done
done
finish
