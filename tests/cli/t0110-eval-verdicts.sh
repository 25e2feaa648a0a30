#!/usr/bin/env bash
# The orchestrator's verdicts, exit codes and messages for every way a candidate or a
# problem can go wrong, with stand-ins for the worker and the reference process
# (tests/cli/fake/) so that it runs without a GPU or torch. The kernel is really built.
. "$(dirname "$0")/lib.sh"
FAKE=$SRC/tests/cli/fake
K=$SRC/examples/kernels/relu.cu
P=$SRC/examples/problems/relu_small.py
"$CUTEGEN" doctor >"$TMP/doctor" 2>&1
grep -q '^ok  *nvcc' "$TMP/doctor" || skip "nvcc is not installed (cutegen doctor says how to get it)"
grep -q '^ok  *cutlass' "$TMP/doctor" || skip "CUTLASS headers are not installed (scripts/setup.sh installs them)"

ev() { "$CUTEGEN" eval --task "$P" --kernel "$K" --worker "$FAKE/worker.py" --python "$FAKE/python.py" -q --timeout 3 "$@"; }
verdict() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["verdict"])' "$TMP/out"; }
check_verdict() {  # WANT WHAT
  tests=$((tests + 1))
  local got; got=$(verdict)
  if [ "$got" = "$1" ]; then echo "ok: $2 -> $1"; else echo "FAIL: $2: verdict $got, expected $1"; cat "$TMP/out" | head -30; failures=$((failures + 1)); fi
}

expect_exit 0 "a good kernel" -- ev --json
check_verdict ok "a good kernel"
expect_grep '"eager": 2\.0' "$TMP/out" "speedup over eager is baseline/kernel"
expect_grep '"compile": 1\.5' "$TMP/out" "speedup over torch.compile"
expect_exit 0 "human output" -- ev
expect_grep '^verdict: +ok' "$TMP/out" "human verdict line"
expect_grep '^speedup: +2\.000x over eager, 1\.500x over torch.compile' "$TMP/out" "human speedup line"
expect_grep '^kernel: +median 1\.0' "$TMP/out" "human kernel time"

FAKE_REF_MODE=wrong expect_exit 1 "wrong outputs" -- ev --json
check_verdict wrong_result "wrong outputs"
expect_grep '5 of 5 trials failed; trial 1 \(seed [0-9]+\): output: 2 of 4 elements wrong' "$TMP/out" "message names the trial and the error"
FAKE_REF_MODE=wrong expect_exit 1 "wrong outputs, human output" -- ev
expect_grep '^trials: +0/5 passed \(max abs err inf' "$TMP/out" "infinite errors (sent as \"inf\") are shown"
FAKE_REF_MODE=modified expect_exit 1 "modified inputs" -- ev --json
check_verdict rejected "modified inputs"
FAKE_REF_MODE=cached expect_exit 1 "results kept across calls" -- ev --json
check_verdict rejected "results kept across calls"
expect_grep "keeps results or state from earlier calls" "$TMP/out" "says why"
FAKE_WORKER_MODE=escape expect_exit 1 "work escaping the stream" -- ev --json
check_verdict rejected "work escaping the stream"
expect_grep "escapes the timed stream" "$TMP/out" "says why"
FAKE_WORKER_MODE=crash expect_exit 1 "a crashing kernel" -- ev --json
check_verdict runtime_error "a crashing kernel"
expect_grep "signal 11" "$TMP/out" "names the signal"
FAKE_WORKER_MODE=cuda_error expect_exit 1 "an illegal address" -- ev --json
check_verdict runtime_error "an illegal address"
expect_grep "cudaErrorIllegalAddress" "$TMP/out" "names the CUDA error"
FAKE_WORKER_MODE=unsupported expect_exit 1 "CG_UNSUPPORTED" -- ev --json
check_verdict runtime_error "CG_UNSUPPORTED"
expect_grep "returned 1 \(CG_UNSUPPORTED" "$TMP/out" "names the status"
start=$(date +%s)
FAKE_WORKER_MODE=hang expect_exit 1 "a hanging kernel" -- ev --json
check_verdict timeout "a hanging kernel"
tests=$((tests + 1))
if [ $(( $(date +%s) - start )) -lt 30 ]; then echo "ok: the hang was cut at the time limit"; else echo "FAIL: the hang took too long"; failures=$((failures + 1)); fi
FAKE_WORKER_MODE=load_error expect_exit 1 "an object that does not load" -- ev --json
check_verdict compile_error "an object that does not load"

# --final: the kernel timed once more inside the reference process, interleaved with
# PyTorch; the stand-in reference judges it by FAKE_FINAL_MODE (tests/cli/fake/python.py).
jq_py() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); $1" "$TMP/out"; }
check_py() {  # PYTHON-ASSERTIONS DESCRIPTION
  tests=$((tests + 1))
  if jq_py "$1" 2>"$TMP/py.err"; then echo "ok: $2"; else echo "FAIL: $2"; sed 's/^/  | /' "$TMP/py.err" | tail -5; failures=$((failures + 1)); fi
}
expect_exit 0 "no final timing unless asked" -- ev --json
check_py 'assert "final" not in r' "the report has no final numbers without --final"
mkdir -p "$TMP/state"
FAKE_STATE_DIR=$TMP/state expect_exit 0 "--final" -- ev --json --final --final-rounds 4 --final-iters 3 --atol 0.001
check_verdict ok "--final"
check_py '
f = r["final"]
assert f["verdict"] == "ok" and f["timing"] == "interleaved", f["verdict"]
assert f["speedup"] == {"eager": 2.0, "compile": 1.5}, f["speedup"]
assert f["kernel_time"]["median_ms"] == 1.0 and f["kernel_time"]["n"] == 12, f["kernel_time"]
assert f["baseline"]["eager"]["median_ms"] == 2.0 and f["baseline"]["compile"]["median_ms"] == 1.5
i = f["interleaved"]
assert i["rounds"] == 4 and i["iters"] == 3 and i["speedup"]["eager"]["median"] == 2.0
assert i["orders"][0] == ["kernel", "eager", "compile"] and i["orders"][1] == ["compile", "eager", "kernel"]
assert "speed_of_light" in f and r["speedup"]["eager"] == 2.0' "the final report: interleaved times, per-round speedups, ABBA order"
tests=$((tests + 1))
if python3 - "$TMP/state/final-request.json" <<'PY'
import json, os, sys
q = json.load(open(sys.argv[1]))
assert q["op"] == "final" and os.path.isabs(q["so"]) and q["so"].endswith(".so") and os.path.exists(q["so"]), q
assert q["rounds"] == 4 and q["iters"] == 3 and q["warmup"] == 10 and q["compile"] is True, q
assert abs(q["atol"] - 0.001) < 1e-12 and "rtol" not in q and isinstance(q["seed"], int), q
PY
then echo "ok: the final request names the built object and the options"; else echo "FAIL: the final request"; failures=$((failures + 1)); fi
expect_exit 0 "--final, human output" -- ev --final
expect_grep '^verified: 1\.0000 ms vs eager 2\.0000 ms = 2\.00x, vs compile 1\.5000 ms = 1\.50x \(interleaved in one process, 10 rounds\)' "$TMP/out" "the verified line"
expect_grep '^  over eager +median 2\.000x, rounds 2\.000x \.\. 2\.000x' "$TMP/out" "the spread over rounds"
expect_exit 0 "--final --no-compile" -- ev --json --final --no-compile
check_py 'f = r["final"]; assert list(f["speedup"]) == ["eager"] and "compile" not in f["baseline"], f["speedup"]' "no torch.compile in the final timing either"
FAKE_FINAL_MODE=wrong expect_exit 1 "wrong at the final timing" -- ev --json --final
check_verdict wrong_result "wrong at the final timing"
check_py 'f = r["final"]; assert "kernel_time" not in f and "speedup" not in f, list(f)' "a wrong kernel gets no final number"
expect_grep 'final timing, first call \(seed [0-9]+\): output: 2 of 4 elements wrong' "$TMP/out" "says the final timing found it wrong"
FAKE_FINAL_MODE=cached expect_exit 1 "right once, wrong on repeated calls at the final timing" -- ev --json --final
check_verdict rejected "right once, wrong on repeated calls at the final timing"
FAKE_FINAL_MODE=crash expect_exit 1 "a kernel that crashes the reference process" -- ev --json --final
check_verdict runtime_error "a kernel that crashes the reference process"
expect_grep 'final timing, in the reference process: the reference process ended \(killed by signal 11' "$TMP/out" "names the crash"
FAKE_FINAL_MODE=cuda_error expect_exit 1 "a CUDA error at the final timing" -- ev --json --final
check_verdict runtime_error "a CUDA error at the final timing"
expect_grep 'illegal memory access' "$TMP/out" "names the CUDA error"
FAKE_FINAL_MODE=unsupported expect_exit 1 "CG_UNSUPPORTED at the final timing" -- ev --json --final
expect_grep 'cg_forward returned 1 \(CG_UNSUPPORTED' "$TMP/out" "names the status"
FAKE_FINAL_MODE=load_error expect_exit 0 "an object that does not load in the reference process" -- ev --json --final
check_verdict ok "an object that does not load in the reference process keeps its verdict"
check_py 'f = r["final"]; assert "libcudart.so.13" in f["error"] and f["exit_code"] == 8, f' "the final report says why it was not done"
expect_grep 'the final timing could not be done' "$TMP/err" "and so does a warning"
FAKE_WORKER_MODE=crash expect_exit 1 "no final timing of a kernel that failed" -- ev --json --final
check_py 'assert "final" not in r' "a failed kernel is not timed again"

FAKE_REF_MODE=import_error expect_exit 3 "a problem that does not import" -- ev
expect_grep "cannot load problem" "$TMP/err" "says the problem does not load"
FAKE_REF_MODE=no_torch expect_exit 7 "no torch" -- ev
FAKE_REF_MODE=reference_error expect_exit 3 "a reference that fails" -- ev
expect_grep "the reference failed: RuntimeError: boom" "$TMP/err" "passes the reference's error on"

printf 'this is not CUDA\n' >"$TMP/broken.cu"
expect_exit 1 "a kernel that does not compile" -- ev --json --kernel "$TMP/broken.cu"
check_verdict compile_error "a kernel that does not compile"
printf '#include <cutegen/abi.h>\nextern "C" int helper(void) { return 0; }\n' >"$TMP/noentry.cu"
expect_exit 1 "a kernel without cg_forward" -- ev --json --kernel "$TMP/noentry.cu"
check_verdict compile_error "a kernel without cg_forward"
expect_grep "exports no cg_forward" "$TMP/out" "says cg_forward is missing"
printf '#include <cutegen/abi.h>\n#include <stdlib.h>\nCG_EXPORT int cg_forward(const cg_tensor *i, int ni, cg_tensor *o, int no, void *w, size_t wb, cudaStream_t s) { return system("true"); }\n' >"$TMP/system.cu"
expect_exit 1 "a kernel calling system()" -- ev --json --kernel "$TMP/system.cu"
check_verdict rejected "a kernel calling system()"
expect_grep "calls 'system'" "$TMP/out" "names the forbidden call"
printf '#include <cutegen/abi.h>\nextern "C" int cublasSgemm_v2(void *);\nCG_EXPORT int cg_forward(const cg_tensor *i, int ni, cg_tensor *o, int no, void *w, size_t wb, cudaStream_t s) { return cublasSgemm_v2(w); }\n' >"$TMP/cublas.cu"
expect_exit 1 "a kernel calling cuBLAS (fails to link)" -- ev --json --kernel "$TMP/cublas.cu"
check_verdict rejected "a kernel calling cuBLAS"
expect_grep "calls 'cublasSgemm_v2'" "$TMP/out" "names the library call"
finish
