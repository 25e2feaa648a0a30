#!/usr/bin/env bash
# cutegen build: flags, a missing kernel, a real build of examples/kernels/relu.cu in
# both build modes (same exported entry point and kernel in both), the cache, a broken
# kernel's digest, and a time-out through a fake nvcc. Needs nvcc and CUTLASS.
. "$(dirname "$0")/lib.sh"

expect_exit 0 "build --help" -- "$CUTEGEN" build --help
for flag in --kernel --arch --cutlass --jobs --timeout --build-mode --force --json; do
  expect_grep "$flag" "$TMP/out" "--help documents $flag"
done
expect_exit 2 "build without a kernel" -- "$CUTEGEN" build
expect_exit 2 "bad --build-mode" -- "$CUTEGEN" build --build-mode fast --kernel x.cu
expect_exit 4 "missing kernel file" -- "$CUTEGEN" build --kernel "$TMP/nope.cu"
expect_grep "kernel '.*nope.cu' not found" "$TMP/err" "the missing kernel is named"

nvcc=$(command -v nvcc || ls "${CUDA_HOME:-/nonexistent}/bin/nvcc" /usr/local/cuda/bin/nvcc 2>/dev/null | head -1)
[ -n "$nvcc" ] || skip "nvcc not found (CUDA_HOME, PATH, /usr/local/cuda): the real builds need it"
"$CUTEGEN" build --arch sm_90a --kernel "$SRC/examples/kernels/relu.cu" >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 6 ] && skip "CUTLASS not found: $(cat "$TMP/err")"
tests=$((tests + 1))
if [ $rc -ne 0 ]; then
  echo "FAIL: relu.cu split build: exit $rc"; cat "$TMP/out" "$TMP/err"; failures=$((failures + 1))
else
  echo "ok: relu.cu split build"
fi
expect_grep "relu.cu: ok in [0-9.]+ s \(split\)" "$TMP/out" "split build reported"
split_so=$(sed -n 's/^  so:  //p' "$TMP/out")
expect_exit 0 "relu.cu again" -- "$CUTEGEN" build --arch sm_90a --kernel "$SRC/examples/kernels/relu.cu"
expect_grep "relu.cu: ok \(cached\)" "$TMP/out" "second build comes from the cache"
# a relative CUTEGEN_CACHE_DIR is taken from the current folder (builds run in folders of
# their own, so it must not reach nvcc relative: bench/prebuild.sh's .deps/cache did)
mkdir -p "$TMP/rel"
expect_exit 0 "a build with a relative cache dir" -- \
  bash -c "cd '$TMP/rel' && CUTEGEN_CACHE_DIR=relcache '$CUTEGEN' build --arch sm_90a --kernel '$SRC/examples/kernels/relu.cu'"
expect_grep "relu.cu: ok in [0-9.]+ s" "$TMP/out" "the relative cache dir builds"
tests=$((tests + 1))
if ls "$TMP/rel/relcache/builds"/*/kernel.so >/dev/null 2>&1; then
  echo "ok: the build landed under the relative cache dir"
else
  echo "FAIL: no kernel.so under $TMP/rel/relcache/builds"; failures=$((failures + 1))
fi
expect_exit 0 "relu.cu plain" -- "$CUTEGEN" build --arch sm_90a --build-mode plain --kernel "$SRC/examples/kernels/relu.cu"
plain_so=$(sed -n 's/^  so:  //p' "$TMP/out")
if command -v nm >/dev/null; then
  for so in "$split_so" "$plain_so"; do
    nm -D "$so" >"$TMP/nm" 2>&1
    expect_grep " T cg_forward" "$TMP/nm" "$(basename "$(dirname "$so")" | cut -c1-8): exports cg_forward"
    expect_grep "__cudaRegisterFunction" "$TMP/nm" "registers its kernels through the CUDA runtime"
    expect_grep "libcudart" "$TMP/nm" "links the CUDA runtime"
  done
  # both embed sm_90a device code for the same kernel
  for so in "$split_so" "$plain_so"; do
    objcopy -O binary --only-section=.nv_fatbin "$so" "$TMP/fat" 2>/dev/null
    strings "$TMP/fat" | grep -E "^_Z11relu_kernelPKfPfl$" | head -1 >"$TMP/names"
    expect_grep "_Z11relu_kernelPKfPfl" "$TMP/names" "fatbin of $(basename "$(dirname "$so")" | cut -c1-8) holds relu_kernel"
  done
fi

cp "$SRC/tests/data/compile/undefined_ident.cu" "$TMP/broken.cu"
expect_exit 1 "broken kernel" -- "$CUTEGEN" build --arch sm_90a --kernel "$TMP/broken.cu"
expect_grep "broken.cu: compile_error" "$TMP/out" "status compile_error"
expect_grep "error: broken.cu:9: identifier \"zero\" is undefined" "$TMP/out" "digest names the line"
expect_grep "9 \| y\[i\] = fmaxf\(x\[i\], zero\);" "$TMP/out" "digest quotes the line"

expect_exit 1 "json, one ok and one broken" -- "$CUTEGEN" build --json --arch sm_90a --jobs 2 \
  --kernel "$SRC/examples/kernels/relu.cu" "$TMP/broken.cu"
cp "$TMP/out" "$TMP/json"
expect_exit 0 "json output parses" -- python3 -c "
import json, sys
rows = [json.loads(l) for l in open('$TMP/json')]
assert [r['status'] for r in rows] == ['ok', 'compile_error'], rows
assert rows[0]['cached'] and rows[0]['so'].endswith('kernel.so')
"

# a fake nvcc that hangs, found through CUDA_HOME: the build is stopped at --timeout
mkdir -p "$TMP/fakecuda/bin"
printf '#!/bin/sh\n[ "$1" = --version ] && { echo "release 99.0, V99.0.1"; exit 0; }\nsleep 60\n' >"$TMP/fakecuda/bin/nvcc"
chmod +x "$TMP/fakecuda/bin/nvcc"
start=$(date +%s)
expect_exit 1 "hanging nvcc times out" -- env CUDA_HOME="$TMP/fakecuda" "$CUTEGEN" build --arch sm_90a --timeout 2 --force --kernel "$TMP/broken.cu"
expect_grep "broken.cu: timeout" "$TMP/out" "status timeout"
expect_grep "time limit of 2 s" "$TMP/out" "the time-out is explained"
tests=$((tests + 1))
if [ $(( $(date +%s) - start )) -lt 20 ]; then echo "ok: stopped in time"; else echo "FAIL: took too long"; failures=$((failures + 1)); fi
finish
