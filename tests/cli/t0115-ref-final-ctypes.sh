#!/usr/bin/env bash
# The reference process's side of the final timing, without a GPU: a host-only stand-in
# candidate (tests/python/final_abi.c, built here with the C compiler against
# include/cutegen/abi.h) is loaded and called through python/cutegen_ref.py's ctypes
# binding; tests/python/test_final_ctypes.py checks what arrives (no torch needed). Where
# a python with torch (a CPU build will do: Debian's python3-torch) is found,
# tests/python/test_final_cpu.py runs the whole "final" request on the host.
. "$(dirname "$0")/lib.sh"
CC=${CC:-cc}
command -v "$CC" >/dev/null || skip "no C compiler ($CC)"
command -v python3 >/dev/null || skip "no python3"
B=$TMP/b
mkdir -p "$B/inc" "$B/site/nvidia/cu77/lib"
# abi.h needs cudaStream_t only: a stub header instead of the CUDA toolkit's
printf 'typedef struct CUstream_st *cudaStream_t;\n' >"$B/inc/cuda_runtime_api.h"
printf 'float cudaFakeRuntimeValue(void) { return 77.0f; }\n' >"$B/rt.c"
build() { "$CC" -std=c11 -Wall -Werror -shared -fPIC -I"$SRC/include" -I"$B/inc" "$@"; }
expect_exit 0 "the stand-in candidate builds" -- build -o "$B/final_abi.so" "$SRC/tests/python/final_abi.c"
expect_exit 0 "one without cg_forward" -- build -o "$B/noentry.so" "$SRC/tests/python/final_noentry.c"
expect_exit 0 "a stand-in CUDA runtime off the loader's path" -- \
  build -Wl,-soname,libcudart.so.77 -o "$B/site/nvidia/cu77/lib/libcudart.so.77" "$B/rt.c"
expect_exit 0 "a candidate that needs it" -- build -o "$B/needs_rt.so" "$SRC/tests/python/final_needs_rt.c" \
  "$B/site/nvidia/cu77/lib/libcudart.so.77"
expect_exit 0 "the ctypes binding" -- python3 "$SRC/tests/python/test_final_ctypes.py" "$SRC" "$B"
sed 's/^/  /' "$TMP/out"
expect_exit 0 "a host-only candidate for the problem of test_final_cpu.py" -- \
  build -o "$B/final_cpu_kernel.so" "$SRC/tests/python/final_cpu_kernel.c"
TORCH_PY=
for py in ${CUTEGEN_PYTHON:-} python3 /usr/bin/python3; do
  if command -v "$py" >/dev/null && "$py" -c 'import torch' 2>/dev/null; then TORCH_PY=$py; break; fi
done
if [ -n "$TORCH_PY" ]; then
  expect_exit 0 "the final request, end to end on the host ($TORCH_PY)" -- \
    "$TORCH_PY" "$SRC/tests/python/test_final_cpu.py" "$SRC" "$B/final_cpu_kernel.so"
  sed 's/^/  /' "$TMP/out"
else
  echo "skip: no python with torch: the final request end to end is not run (apt-get install python3-torch)"
fi
finish
