#!/usr/bin/env bash
# cutegen report on real run directories made by `cutegen run` with a scripted model and
# the stand-in worker and reference (as t0500): a run of two level-1 problems, a second
# run (a shard) with a level-2 problem and one that never gets a correct kernel. Checks
# the numbers in Markdown, CSV and JSON (KernelBench's shapes), --merge, and the HTML
# page in headless Chromium when it is installed.
. "$(dirname "$0")/lib.sh"
"$CUTEGEN" doctor >"$TMP/doctor" 2>&1
grep -q '^ok  *nvcc' "$TMP/doctor" || skip "nvcc is not installed (cutegen doctor says how to get it)"
grep -q '^ok  *cutlass' "$TMP/doctor" || skip "CUTLASS headers are not installed (scripts/setup.sh installs them)"

FAKE=$SRC/tests/cli/fake
# A scripted model: the n-th reply is a kernel that the stand-ins judge as $MODES[n].
cat >"$TMP/model.py" <<'PY'
#!/usr/bin/env python3
import os, sys
d = os.environ["RESPONDER_DIR"]; c = os.path.join(d, "count")
n = int(open(c).read()) if os.path.exists(c) else 0
sys.stdin.read()
open(c, "w").write(str(n + 1))
modes = os.environ["MODES"].split(",")
mode = modes[min(n, len(modes) - 1)]
print("```cuda\n#include <cutegen/abi.h>\n"
      "__attribute__((used)) static const char m[] = \"CG_FAKE_MODE=%s\";\n"
      "CG_EXPORT int cg_forward(const cg_tensor *in, int ni, cg_tensor *out, int no, void *w,\n"
      "                         size_t wb, cudaStream_t s) { return CG_OK; }\n```" % mode)
PY
chmod +x "$TMP/model.py"
mkdir -p "$TMP/kb/level1" "$TMP/kb/level2"
for p in level1/19_ReLU.py level1/1_Square_matrix_multiplication_.py level2/1_Conv2D_ReLU_BiasAdd.py level1/94_MSELoss.py; do
  { echo "# $p"; cat "$SRC/examples/problems/relu_small.py"; } >"$TMP/kb/$p"
done
run_one() {  # RUN_DIR PROBLEM MODES
  mkdir -p "$TMP/resp-$2" "$TMP/state-$2"
  RESPONDER_DIR="$TMP/resp-${2//\//_}" FAKE_STATE_DIR="$TMP/state-${2//\//_}" MODES=$3 \
    "$CUTEGEN" run --task "$TMP/kb/$2" --command "$TMP/model.py" --worker "$FAKE/worker.py" \
    --python "$FAKE/python.py" --children 1 --fix-attempts 1 --rounds 1 --profile never -q --run-dir "$1"
}
mkdir -p "$TMP"/resp-level{1,2}_{19_ReLU,1_Square_matrix_multiplication_,1_Conv2D_ReLU_BiasAdd,94_MSELoss}.py \
  "$TMP"/state-level{1,2}_{19_ReLU,1_Square_matrix_multiplication_,1_Conv2D_ReLU_BiasAdd,94_MSELoss}.py
# The stand-in reference times eager at 2.0 ms and torch.compile at 1.5 ms.
expect_exit 0 "fixture: ReLU at 1.0 ms (2x)" -- run_one "$TMP/runs/a" level1/19_ReLU.py ok:1.0
expect_exit 0 "fixture: matmul at 4.0 ms (0.5x)" -- run_one "$TMP/runs/a" level1/1_Square_matrix_multiplication_.py ok:4.0
expect_exit 0 "fixture: a level-2 problem at 0.5 ms (4x)" -- run_one "$TMP/runs/shard-1" level2/1_Conv2D_ReLU_BiasAdd.py ok:0.5
run_one "$TMP/runs/shard-1" level1/94_MSELoss.py wrong >/dev/null 2>&1

expect_exit 0 "report of one run" -- "$CUTEGEN" report "$TMP/runs/a"
expect_grep '^\| all \| 2 \| 2 \(100%\) \| 1\.00 \| 0\.50 \| 0\.50 \| 0\.00 \| 1\.000x \| 1\.000x \| 1\.250x \| 1\.250x \|' "$TMP/out" "summary of one run: fast_p, geomeans, mean, median"
expect_grep '^\| 19_ReLU\.py \| 1 \| elementwise \| yes \| 2\.000x \| 1\.500x \| 1\.0000 \| 2\.0000 \|' "$TMP/out" "a problem's row"
expect_grep '^\| 1_Square_matrix_multiplication_\.py \| 1 \| matmul \| yes \| 0\.500x' "$TMP/out" "the matmul is categorised by its name"
expect_grep 'rounds: 1 rounds done' "$TMP/out" "the stop reason is shown"

expect_exit 0 "report merged with --merge" -- "$CUTEGEN" report "$TMP/runs/a" --merge "$TMP/runs/shard-*"
# speedups 2, 0.5, 4 and one failure: geomean (fail=1x) = 4^(1/4) = 1.414; correct only = 4^(1/3) = 1.587
expect_grep '^\| all \| 4 \| 3 \(75%\) \| 0\.75 \| 0\.50 \| 0\.50 \| 0\.25 \| 1\.414x \| 1\.587x \| 2\.167x \| 2\.000x \|' "$TMP/out" "merged summary counts the failure"
expect_grep '^\| level 2 \| 1 \| 1 \(100%\)' "$TMP/out" "per-level rows"
expect_grep '^\| fused \| 1 \|' "$TMP/out" "the level-2 problem is fused"
expect_grep '^\| 94_MSELoss\.py \| 1 \| loss \| no \| - \|' "$TMP/out" "the failed problem is a row with no speedup"

# a kernel faster than its speed of light (the spec's bytes at the GPU's bandwidth take longer
# than the kernel): the row's fraction is marked and a legend says the bound did not hold
expect_nogrep '\\\* above 100% of its speed of light' "$TMP/out" "no legend while every row is under 100%"
mkdir -p "$TMP/resp-sol" "$TMP/state-sol" "$TMP/kb-sol/level1"
{ echo "# another source: not the cached spec of the run above"; cat "$TMP/kb/level1/19_ReLU.py"; } >"$TMP/kb-sol/level1/19_ReLU.py"
FAKE_GPU_NAME="NVIDIA H200" FAKE_MIN_BYTES=1e13 RESPONDER_DIR="$TMP/resp-sol" FAKE_STATE_DIR="$TMP/state-sol" MODES=ok:1.0 \
  "$CUTEGEN" run --task "$TMP/kb-sol/level1/19_ReLU.py" --command "$TMP/model.py" --worker "$FAKE/worker.py" \
  --python "$FAKE/python.py" --children 1 --fix-attempts 1 --rounds 1 --profile never -q --run-dir "$TMP/runs/sol" \
  >/dev/null 2>&1
expect_exit 0 "report of a kernel under its bound" -- "$CUTEGEN" report "$TMP/runs/sol"
expect_grep '^\| 19_ReLU\.py \| 1 \| elementwise \| yes \| 2\.000x \| 1\.500x \| 1\.0000 \| 2\.0000 \| [0-9.]*%\* \|' "$TMP/out" "a fraction over 100% is marked"
expect_grep '^\\\* above 100% of its speed of light: the bound did not hold' "$TMP/out" "and explained under the table"
expect_exit 0 "html of it" -- "$CUTEGEN" report "$TMP/runs/sol" --format html --out "$TMP/sol.html"
expect_grep '<td title="above 100% of its speed of light: the bound did not hold[^"]*">[0-9.]*%\*</td>' "$TMP/sol.html" "the HTML cell is marked, its title says why"

expect_exit 0 "csv" -- "$CUTEGEN" report "$TMP/runs/a" "$TMP/runs/shard-1" --format csv --out "$TMP/r.csv"
expect_grep '^problem,level,problem_id,category,correct' "$TMP/r.csv" "csv header"
tests=$((tests + 1))
rows=$(python3 -c 'import csv,sys; r=list(csv.DictReader(open(sys.argv[1]))); print(len(r), r[0]["problem"], r[0]["speedup_eager"])' "$TMP/r.csv")
[ "$rows" = "4 1_Square_matrix_multiplication_.py 0.5" ] && echo "ok: csv parses, sorted by level and number ($rows)" || { echo "FAIL: csv rows: $rows"; failures=$((failures + 1)); }

expect_exit 0 "json" -- "$CUTEGEN" report "$TMP/runs/a" --merge "$TMP/runs/shard-*" --format json --out "$TMP/r.json"
tests=$((tests + 1))
if python3 - "$TMP/r.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
ev = j["kernelbench"]["eval_results"]
s = ev["level1"]["19"][0]
assert s["sample_id"] == 0 and s["compiled"] and s["correctness"] and abs(s["runtime"] - 1.0) < 1e-9, s
assert set(s["runtime_stats"]) >= {"mean", "std", "min", "max", "num_trials"}, s
f = ev["level1"]["94"][0]
assert not f["correctness"] and f["runtime"] == -1.0, f
assert ev["level2"]["1"][0]["correctness"]
b = j["kernelbench"]["baseline_time_torch"]["level1"]["19_ReLU.py"]
assert b["mean"] == 2.0 and "num_trials" in b, b
wrong = [p for p in j["problems"] if p["problem"] == "94_MSELoss.py"][0]["judged"]
assert wrong and all(n["verdict"] == "wrong_result" and n["message"] for n in wrong), wrong
assert all("params" not in n for n in wrong), wrong  # a model's kernel: no recipe parameters
relu = [p for p in j["problems"] if p["problem"] == "19_ReLU.py"][0]
assert relu["best_node"] in [n["node"] for n in relu["judged"] if n["verdict"] == "ok"], relu
assert [n["kind"] for n in relu["judged"]] == ["first", "optimise"], relu
allg = j["groups"][0]
assert allg["group"] == "all" and allg["eager"]["fast_p"]["1.0"] == 0.5 and abs(allg["eager"]["geomean_fail_as_1"] - 2 ** 0.5) < 1e-9
print("ok: json has KernelBench's eval_results and baseline shapes, the groups, and each judged node")
PY
then :; else echo "FAIL: json shape"; failures=$((failures + 1)); fi

expect_exit 0 "html" -- "$CUTEGEN" report "$TMP/runs/a" --merge "$TMP/runs/shard-*" --format html --tree 19_ReLU --out "$TMP/r.html"
for id in plot-distribution plot-fastp plot-categories plot-cost plot-tree; do
  expect_grep "<svg id=\"$id\"" "$TMP/r.html" "the page has the $id plot"
done
expect_grep 'Search tree: 19_ReLU\.py' "$TMP/r.html" "--tree picks the problem"
tests=$((tests + 1))
python3 -c 'import sys, xml.dom.minidom as m, re; [m.parseString(s) for s in re.findall(r"<svg.*?</svg>", open(sys.argv[1]).read(), re.S)]' "$TMP/r.html" &&
  echo "ok: every SVG is well-formed XML" || { echo "FAIL: an SVG is not well-formed"; failures=$((failures + 1)); }
expect_exit 2 "--tree of an unknown problem" -- "$CUTEGEN" report "$TMP/runs/a" --format html --tree nope
expect_exit 2 "unknown format" -- "$CUTEGEN" report "$TMP/runs/a" --format pdf
expect_exit 2 "a directory that is not a run" -- "$CUTEGEN" report "$TMP/kb"
expect_exit 2 "--merge that matches nothing" -- "$CUTEGEN" report --merge "$TMP/nothing-*"

CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROMIUM" ]; then
  echo "SKIP (part): chromium is not installed, the HTML page was not rendered (apt-get install chromium)"
else
  tests=$((tests + 1))
  timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --dump-dom \
    "file://$TMP/r.html" >"$TMP/dom.html" 2>"$TMP/chromium.err"
  n=$(grep -o '<svg id="plot-' "$TMP/dom.html" | wc -l)
  [ "$n" -eq 5 ] && echo "ok: chromium renders the page with its 5 plots" || { echo "FAIL: chromium DOM has $n plots"; sed 's/^/  | /' "$TMP/chromium.err" | tail -5; failures=$((failures + 1)); }
  tests=$((tests + 1))
  (cd "$TMP" && timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
    --window-size=1400,2400 --screenshot="$TMP/shot.png" "file://$TMP/r.html" >/dev/null 2>&1)
  size=$(stat -c %s "$TMP/shot.png" 2>/dev/null || echo 0)
  colours=$(python3 -c 'import sys,zlib,struct
d=open(sys.argv[1],"rb").read(); assert d[:8]==b"\x89PNG\r\n\x1a\n"
print("png")' "$TMP/shot.png" 2>/dev/null)
  if [ "$size" -gt 20000 ] && [ "$colours" = png ]; then echo "ok: a screenshot was written ($size bytes)"; else echo "FAIL: screenshot ($size bytes)"; failures=$((failures + 1)); fi
  [ -n "${CUTEGEN_REPORT_SHOT:-}" ] && cp "$TMP/shot.png" "$CUTEGEN_REPORT_SHOT"
fi
finish
