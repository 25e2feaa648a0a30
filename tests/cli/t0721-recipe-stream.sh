#!/usr/bin/env bash
# cutegen recipe, GEMM family on Hopper: the streaming kernel (recipes/gemm_stream.cu; A
# resident in shared memory, B split in the kernel into N-major 3xFP16 halves). Level 1
# #87's fixture offers it first (BN 128, 2 stages, C staged in shared memory: faster than
# mma.sync since lab round 68); the split's layout is checked
# on the host (tests/cli/recipe_stream_layout.cpp: b_offset against CuTe's SmemLayoutB, four
# columns contiguous, the threads' vectors covering the tile once) for it and for other
# shapes the generator allows (M 96, 256 and 64, K 48, 128 and 16, BN 64 and 256), edited into
# the generated source. Needs a C++17 compiler, CUTLASS and the CUDA headers; skips, saying
# so, without them.
. "$(dirname "$0")/lib.sh"

need_host_cute

spec="$SRC/tests/data/recipe/conv/l1_87_conv_pointwise_2D.json"
name=$(basename "$spec" .json)
tests=$((tests + 1))
pick=$("$CUTEGEN" recipe --spec "$spec" --list 2>&1 | sed -n 's/^variant \([0-9]*\): conv as gemm stream 3xf16 tile=128x128 .*stages=2 .*/\1/p' | head -1)
if [ "$pick" != 0 ]; then
  echo "FAIL: $name: variant 0 is not the streaming GEMM at BN 128 with 2 stages (it is ${pick:-not listed})"
  failures=$((failures + 1)); finish; exit 1
fi
gen_variant "$spec" 0 "$name" || { finish; exit 1; }
echo "ok: $name: variant 0 the streaming GEMM at BN 128, 2 stages"
base="$TMP/gen/$name.cu"

# M K BN STAGES: the generated source with those edited in (BM: M rounded up to 64)
for shape in "128 64 128 2" "96 48 128 2" "256 64 64 2" "64 128 64 2" "64 16 256 2"; do
  read -r m k bn st <<<"$shape"
  bm=$(( (m + 63) / 64 * 64 ))
  src="$TMP/gen/stream-$m-$k-$bn.cu"
  sed -e "s/^#define CGR_M [0-9]*/#define CGR_M $m/" -e "s/^#define CGR_K [0-9]*/#define CGR_K $k/" \
      -e "s/^#define CGR_BM [0-9]*/#define CGR_BM $bm/" -e "s/^#define CGR_BN [0-9]*/#define CGR_BN $bn/" \
      -e "s/^#define CGR_STAGES [0-9]*/#define CGR_STAGES $st/" "$base" >"$src"
  tests=$((tests + 1))
  build_and_run "stream-$m-$k-$bn" "B's split at M $m, K $k, BN $bn, $st stages" -DCGR_KERNEL="\"$src\"" \
    "$SRC/tests/cli/recipe_stream_layout.cpp"
done
finish
