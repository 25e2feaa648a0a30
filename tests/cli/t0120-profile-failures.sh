#!/usr/bin/env bash
# cutegen profile when profiling cannot work: no ncu, ncu failing, no torch: each a clear
# message and its exit code. The stand-in worker and reference (tests/cli/fake/) make it
# run without a GPU; the kernel is really built.
. "$(dirname "$0")/lib.sh"
"$CUTEGEN" doctor >"$TMP/doctor" 2>&1
grep -q '^ok  *nvcc' "$TMP/doctor" || skip "nvcc is not installed (cutegen doctor says how to get it)"
grep -q '^ok  *cutlass' "$TMP/doctor" || skip "CUTLASS headers are not installed (scripts/setup.sh installs them)"
FAKE=$SRC/tests/cli/fake
prof() { "$CUTEGEN" profile --task "$SRC/examples/problems/relu_small.py" --kernel "$SRC/examples/kernels/relu.cu" \
  --worker "$FAKE/worker.py" --python "$FAKE/python.py" -q "$@"; }

expect_exit 8 "no ncu" -- prof --ncu "$TMP/no-such-ncu"
expect_grep "ncu|Nsight Compute" "$TMP/err" "says ncu is missing"
expect_exit 1 "ncu fails" -- prof --ncu /bin/false
expect_grep "^profile: +failed: " "$TMP/out" "prints the profiler's error"
FAKE_REF_MODE=no_torch expect_exit 7 "no torch" -- prof
expect_grep "cannot import torch" "$TMP/err" "says torch is missing"
finish
