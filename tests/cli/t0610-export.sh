#!/usr/bin/env bash
# cutegen export --format kernelbench on a real run (scripted model, stand-in worker and
# reference, as t0500): the file is valid Python, embeds the kernel and the problem
# verbatim, carries the ABI's order of inputs and the outputs' shapes, and its CUDA part
# (prelude + kernel + binding, torch parts cut out) compiles with nvcc.
. "$(dirname "$0")/lib.sh"
"$CUTEGEN" doctor >"$TMP/doctor" 2>&1
grep -q '^ok  *nvcc' "$TMP/doctor" || skip "nvcc is not installed (cutegen doctor says how to get it)"
grep -q '^ok  *cutlass' "$TMP/doctor" || skip "CUTLASS headers are not installed (scripts/setup.sh installs them)"
FAKE=$SRC/tests/cli/fake
export RESPONDER_DIR=$TMP/resp FAKE_STATE_DIR=$TMP/state
mkdir -p "$RESPONDER_DIR" "$FAKE_STATE_DIR" "$TMP/kb/level1"
cp "$SRC/examples/problems/relu_small.py" "$TMP/kb/level1/19_ReLU.py"
expect_exit 0 "a scripted run" -- "$CUTEGEN" run --task "$TMP/kb/level1/19_ReLU.py" --command "$SRC/tests/agent/responder.py" \
  --worker "$FAKE/worker.py" --python "$FAKE/python.py" --children 1 --fix-attempts 2 --rounds 1 --profile never -q \
  --run-dir "$TMP/run"
expect_exit 0 "export" -- "$CUTEGEN" export "$TMP/run" --format kernelbench --out "$TMP/exp"
F=$TMP/exp/level_1_problem_19_sample_0_kernel.py
expect_grep "exported 1 kernel" "$TMP/out" "one kernel exported"
tests=$((tests + 1))
[ -f "$F" ] && echo "ok: named as KernelBench's scripts name kernels" || { echo "FAIL: no $F"; ls "$TMP/exp"; failures=$((failures + 1)); }
tests=$((tests + 1))
python3 -m py_compile "$F" && echo "ok: valid Python" || { echo "FAIL: py_compile"; failures=$((failures + 1)); }
expect_grep '"file": "level_1_problem_19_sample_0_kernel.py"' "$TMP/exp/index.json" "index.json lists it"
best=$(sqlite3 "$TMP/run/run.db" "select value from task_kv where key='best_node'" 2>/dev/null || echo 2)
tests=$((tests + 1))
if python3 - "$F" "$TMP/run/artifacts/nodes/$best/kernel.cu" "$TMP/kb/level1/19_ReLU.py" "$SRC/include/cutegen/abi.h" "$TMP" <<'PY'
import ast, os, sys
f, kernel, problem, abi, tmp = sys.argv[1:]
src = open(f).read()
tree = ast.parse(src)
v = {n.targets[0].id: n.value for n in tree.body if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Name)}
lit = lambda k: ast.literal_eval(v[k])
assert lit("_CG_KERNEL_SOURCE") == open(kernel).read(), "kernel not verbatim"
assert open(problem).read() in src, "problem not verbatim"
assert lit("_CG_ABI_HEADER") == open(abi).read()
assert lit("_CG_ARGS") == ["float32"] and lit("_CG_STATE") == [] and lit("_CG_OUTPUTS") == [((4,), "float32")], (lit("_CG_ARGS"), lit("_CG_OUTPUTS"))
flags = lit("_CG_NVCC_FLAGS")
assert "-std=c++17" in flags and "--expt-relaxed-constexpr" in flags and "-gencode=arch=compute_90a,code=sm_90a" in flags
classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
assert [b.id for b in classes["ModelNew"].bases] == ["Model"]
fwd = [n for n in classes["ModelNew"].body if isinstance(n, ast.FunctionDef) and n.name == "forward"][0]
assert [a.arg for a in fwd.args.args] == ["self", "x"], "forward takes Model.forward's arguments"
assert "load_inline" in src and "cg_run" in lit("_CG_BINDING_SOURCE") and "getCurrentCUDAStream" in lit("_CG_BINDING_SOURCE")
os.makedirs(os.path.join(tmp, "inc", "cutegen"), exist_ok=True)
open(os.path.join(tmp, "inc", "cutegen", "abi.h"), "w").write(lit("_CG_ABI_HEADER"))
open(os.path.join(tmp, "binding.cu"), "w").write(lit("_CG_PRELUDE") + '#line 1 "kernel.cu"\n' + lit("_CG_KERNEL_SOURCE") + "\n" + lit("_CG_BINDING_SOURCE"))
print("ok: kernel, problem and ABI embedded verbatim; ModelNew(Model) with forward(self, x); outputs and flags right")
PY
then :; else echo "FAIL: structure of the exported file"; failures=$((failures + 1)); fi
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
tests=$((tests + 1))
if "$NVCC" -std=c++17 --expt-relaxed-constexpr -gencode=arch=compute_90a,code=sm_90a -DCG_EXPORT_NO_TORCH \
     -I"$TMP/inc" -c "$TMP/binding.cu" -o "$TMP/binding.o" >"$TMP/nvcc.log" 2>&1 &&
   nm "$TMP/binding.o" | grep -q ' T cg_forward' && nm "$TMP/binding.o" | grep -q ' w cg_workspace_bytes'; then
  echo "ok: the CUDA part compiles without torch; cg_workspace_bytes is weak"
else echo "FAIL: nvcc on the binding"; tail -20 "$TMP/nvcc.log"; failures=$((failures + 1)); fi
expect_exit 2 "export without --out" -- "$CUTEGEN" export "$TMP/run"
expect_exit 2 "an unknown format" -- "$CUTEGEN" export "$TMP/run" --format triton --out "$TMP/x"
expect_exit 2 "a run that does not exist" -- "$CUTEGEN" export "$TMP/none" --out "$TMP/x"
finish
