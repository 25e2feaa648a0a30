#!/usr/bin/env bash
# cutegen recipe, GEMM family on Hopper: the streaming kernel (recipes/gemm_stream.cu; A
# resident in shared memory, B split in the kernel into N-major 3xFP16 halves). Level 1
# #87's fixture offers it first at BN 128 and third at BN 64; the split's layout is checked
# on the host (tests/cli/recipe_stream_layout.cpp: b_offset against CuTe's SmemLayoutB, four
# columns contiguous, the threads' vectors covering the tile once) for the first and for
# other shapes the generator allows (M 96 and 256, K 48, 128 and 16, BN 256), edited into
# the generated source. Needs a C++17 compiler, CUTLASS and the CUDA headers; skips, saying
# so, without them.
. "$(dirname "$0")/lib.sh"

need_host_cute

spec="$SRC/tests/data/recipe/conv/l1_87_conv_pointwise_2D.json"
tests=$((tests + 1))
gen_first "$spec" "conv as gemm stream 3xf16 tile=128x128" "the streaming GEMM at BN 128" || { finish; exit 1; }
echo "ok: $name: $first"
base="$TMP/gen/$name.cu"
tests=$((tests + 1))
if "$CUTEGEN" recipe --spec "$spec" --list | grep -q "^variant 2: conv as gemm stream 3xf16 tile=128x64 .*minb=2"; then
  echo "ok: $name: variant 2 the streaming GEMM at BN 64, two CTAs an SM"
else
  echo "FAIL: $name: variant 2 is not the streaming GEMM at BN 64"; failures=$((failures + 1))
fi

# M K BN: the generated source with those edited in (BM: M rounded up to 64)
for shape in "128 64 128" "96 48 128" "256 128 64" "64 16 256"; do
  read -r m k bn <<<"$shape"
  bm=$(( (m + 63) / 64 * 64 ))
  src="$TMP/gen/stream-$m-$k-$bn.cu"
  sed -e "s/^#define CGR_M [0-9]*/#define CGR_M $m/" -e "s/^#define CGR_K [0-9]*/#define CGR_K $k/" \
      -e "s/^#define CGR_BM [0-9]*/#define CGR_BM $bm/" -e "s/^#define CGR_BN [0-9]*/#define CGR_BN $bn/" "$base" >"$src"
  tests=$((tests + 1))
  build_and_run "stream-$m-$k-$bn" "B's split at M $m, K $k, BN $bn" -DCGR_KERNEL="\"$src\"" \
    "$SRC/tests/cli/recipe_stream_layout.cpp"
done
finish
