#!/usr/bin/env bash
# cutegen eval on bad input: each case gives one clear message and its own exit code,
# never a crash or a hang. Runs anywhere: the cases are decided before a GPU is needed,
# and the no-GPU case runs only where there is no GPU.
. "$(dirname "$0")/lib.sh"

K=$SRC/examples/kernels/relu.cu
P=$SRC/examples/problems/relu_small.py
[ -f "$P" ] || P=$TMP/problem.py
[ -f "$P" ] || printf 'import torch\nclass Model(torch.nn.Module):\n    def forward(self, x): return x\ndef get_inputs(): return [torch.rand(4)]\ndef get_init_inputs(): return []\n' >"$P"

expect_exit 2 "eval without flags" -- "$CUTEGEN" eval
expect_grep "needs --task" "$TMP/err" "says which flags are needed"
expect_exit 2 "bad --trials" -- "$CUTEGEN" eval --task "$P" --kernel "$K" --trials zero
expect_grep "trials wants a whole number" "$TMP/err" "names the bad flag"
expect_exit 2 "stray argument" -- "$CUTEGEN" eval --task "$P" --kernel "$K" extra
expect_exit 4 "missing kernel file" -- "$CUTEGEN" eval --task "$P" --kernel "$TMP/nope.cu"
expect_grep "kernel file '.*nope.cu' does not exist" "$TMP/err" "names the missing kernel"
expect_exit 3 "missing problem file" -- "$CUTEGEN" eval --task "$TMP/nope.py" --kernel "$K"
expect_grep "problem file '.*nope.py' does not exist" "$TMP/err" "names the missing problem"
expect_exit 8 "missing worker" -- "$CUTEGEN" eval --task "$P" --kernel "$K" --worker "$TMP/no-worker"
expect_grep "cutegen-worker not found" "$TMP/err" "says the worker is missing"

if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  echo "note: a GPU is present, so the no-GPU case is not run here"
elif [ -x "$(dirname "$CUTEGEN")/cutegen-worker" ]; then
  expect_exit 5 "no GPU" -- "$CUTEGEN" eval --task "$P" --kernel "$K"
  expect_grep "no usable CUDA GPU" "$TMP/err" "says there is no GPU"
  expect_exit 5 "no GPU, --json" -- "$CUTEGEN" eval --task "$P" --kernel "$K" --json
  expect_grep '"exit_code": 5' "$TMP/out" "JSON carries the exit code"
else
  echo "note: cutegen-worker was not built (no CUDA toolkit), so the no-GPU case is not run"
fi
finish
