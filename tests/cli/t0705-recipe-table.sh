#!/usr/bin/env bash
# bench/recipe_table.py: the coverage-and-speed table over a fake spec tree, with a fake
# cutegen (covered / not covered / a recipe error by the spec's name) and fake reports:
# the exact rows and their order, the override of an earlier --report by a later one,
# the summary's counts and geometric means (1.0x for the wrong and the uncovered ones),
# --format json, --coverage-from (the coverage column of an earlier table), one GPU a table
# (named from the reports; reports of two GPUs refused), and exit 2 with one line naming the
# file on bad input. Needs python3.
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null 2>&1 || skip "python3 is not installed (bench/recipe_table.py needs it)"
TABLE=$SRC/bench/recipe_table.py

# expect_same EXPECTED ACTUAL DESCRIPTION: the two files are identical
expect_same() {
  tests=$((tests + 1))
  if ! diff -u "$1" "$2" >"$TMP/diff"; then
    echo "FAIL: $3:"
    sed 's/^/  | /' "$TMP/diff" | head -30
    failures=$((failures + 1))
    return 1
  fi
  echo "ok: $3"
}

S=$TMP/specs
mkdir -p "$S/level1" "$S/level2"
for f in level1/1_Square_matmul level1/2_ReLU level1/10_Cumsum level2/1_Conv_ReLU level2/3_Broken; do
  echo '{"inputs": [], "outputs": []}' >"$S/$f.json"
done
FAKE=$TMP/fake-cutegen
cat >"$FAKE" <<'SH'
#!/bin/sh
# fake `cutegen recipe --spec FILE`
[ "$1" = recipe ] && [ "$2" = --spec ] || { echo "fake cutegen: bad arguments: $*" >&2; exit 2; }
case $(basename "$3") in
  *Cumsum*|*Conv*) echo "not covered: because"; exit 1 ;;
  *Broken*) echo "cutegen: error: malformed task spec" >&2; exit 3 ;;
  *) echo "family: pointwise"; echo "input 0: x float32 [16]: full"; exit 0 ;;
esac
SH
chmod +x "$FAKE"

# Report A: problem 1 correct at 2.0x, problem 2 wrong (no variant ok).
cat >"$TMP/a.json" <<'JSON'
{"cutegen_report": 1, "problems": [
 {"problem": "1_Square_matmul.py", "level": 1, "problem_id": 1, "correct": true,
  "speedup_eager": 2.0, "speedup_compile": 1.5, "sol_fraction": 0.5, "wall_s": 100.4,
  "stop_reason": "recipes: the best built-in variant (no model configured; give --provider to search further)",
  "verdicts": {"ok": 2, "wrong_result": 0}},
 {"problem": "2_ReLU.py", "level": 1, "problem_id": 2, "correct": false,
  "speedup_eager": null, "speedup_compile": null, "sol_fraction": null, "wall_s": 61.6,
  "stop_reason": "recipes: no variant was correct", "verdicts": {"ok": 0, "wrong_result": 2}}
]}
JSON
# Report B: problem 2 again, correct at 4.0x, cut before it wrote its stop reason.
cat >"$TMP/b.json" <<'JSON'
{"cutegen_report": 1, "problems": [
 {"problem": "2_ReLU.py", "level": 1, "problem_id": 2, "correct": true,
  "speedup_eager": 4.0, "speedup_compile": null, "sol_fraction": 0.25, "wall_s": 30,
  "stop_reason": null, "verdicts": {"ok": 1, "wrong_result": 0}}
]}
JSON

run_table() { python3 "$TABLE" --specs "$S" --cutegen "$FAKE" "$@"; }

# --- one report: rows, order, summary ---------------------------------------------------
expect_exit 0 "the table with report A" -- run_table --report "$TMP/a.json:run A"
cp "$TMP/out" "$TMP/a.md"
sed '/^$/q' "$TMP/a.md" | grep '^| [0-9]' >"$TMP/rows"  # the table, not the summary
cat >"$TMP/want" <<'EOF'
| 1 | 1_Square_matmul | pointwise | yes | 2.000x | 1.500x | 50.0% | 100 s | searched | run A |
| 1 | 2_ReLU | pointwise | no | - | - | - | 62 s | no variant correct | run A |
| 1 | 10_Cumsum | no: because | - | - | - | - | - | not covered | - |
| 2 | 1_Conv_ReLU | no: because | - | - | - | - | - | not covered | - |
| 2 | 3_Broken | no: recipe error | - | - | - | - | - | not covered | - |
EOF
expect_same "$TMP/want" "$TMP/rows" "rows by level then problem number, every column"
expect_grep '^\| level \| problem \| covered: family or why not \| correct \| over eager \| over compile \| of SoL \| wall [^|]*\| stop \| source \|$' \
  "$TMP/a.md" "the header names the columns"
expect_grep "3_Broken.*exit 3" "$TMP/err" "the recipe error is explained on stderr"

# geometric means, computed here: level 1 is 2.0, 1.0 (wrong), 1.0 (not covered)
g1=$(awk 'BEGIN { printf "%.3fx", exp(log(2) / 3) }')
gall=$(awk 'BEGIN { printf "%.3fx", exp(log(2) / 5) }')
grep -E '^\| (1|2|all) \| [0-9]+ \|' "$TMP/a.md" >"$TMP/sum"
cat >"$TMP/want" <<EOF
| 1 | 3 | 2 | 2 | 1 | 1 | $g1 | 2.000x |
| 2 | 2 | 0 | 0 | 0 | 0 | 1.000x | - |
| all | 5 | 2 | 2 | 1 | 1 | $gall | 2.000x |
EOF
expect_same "$TMP/want" "$TMP/sum" "summary: problems, covered, measured, correct, faster, geomeans"
expect_grep '^\| level \| problems \| covered \| measured on the GPU \| correct \| faster than eager \|' \
  "$TMP/a.md" "the summary's header"

# --- coverage from an earlier table (no specs, no cutegen): the same table again --------
expect_exit 0 "the table with coverage from the first one" -- \
  python3 "$TABLE" --coverage-from "$TMP/a.md" --report "$TMP/a.json:run A"
expect_same "$TMP/a.md" "$TMP/out" "--coverage-from rebuilds the same rows and summary"
echo "no table here" >"$TMP/notable.md"
expect_exit 2 "an earlier table without table rows" -- python3 "$TABLE" --coverage-from "$TMP/notable.md"
expect_grep "notable.md: no table rows" "$TMP/err" "the file without rows is named"
expect_exit 2 "--specs and --coverage-from together" -- run_table --coverage-from "$TMP/a.md"

# --- two reports: the later one wins, problem by problem -------------------------------
expect_exit 0 "report A then report B" -- run_table --report "$TMP/a.json:run A" --report "$TMP/b.json:17:40 sweep"
grep '^| 1 | [12]_' "$TMP/out" >"$TMP/rows"
cat >"$TMP/want" <<'EOF'
| 1 | 1_Square_matmul | pointwise | yes | 2.000x | 1.500x | 50.0% | 100 s | searched | run A |
| 1 | 2_ReLU | pointwise | yes | 4.000x | - | 25.0% | 30 s | cut by the sweep's time limit (partial) | 17:40 sweep |
EOF
expect_same "$TMP/want" "$TMP/rows" "B overrides A for problem 2 only"
g1=$(awk 'BEGIN { printf "%.3fx", exp((log(2) + log(4)) / 3) }')
g1c=$(awk 'BEGIN { printf "%.3fx", exp((log(2) + log(4)) / 2) }')
expect_grep "^\| 1 \| 3 \| 2 \| 2 \| 2 \| 2 \| $g1 \| $g1c \|$" "$TMP/out" "the summary follows the override"
expect_exit 0 "report B then report A" -- run_table --report "$TMP/b.json:17:40 sweep" --report "$TMP/a.json"
grep '^| 1 | 2_' "$TMP/out" >"$TMP/rows"
echo '| 1 | 2_ReLU | pointwise | no | - | - | - | 62 s | no variant correct | a.json |' >"$TMP/want"
expect_same "$TMP/want" "$TMP/rows" "A given last wins; without a label the source is the file's name"

# --- a row with no verdict at all (the sweep ended before judging it): not run, not wrong --
cat >"$TMP/c.json" <<'JSON'
{"cutegen_report": 1, "problems": [
 {"problem": "1_Square_matmul.py", "level": 1, "problem_id": 1, "correct": false,
  "speedup_eager": null, "speedup_compile": null, "sol_fraction": null, "wall_s": 0.01,
  "stop_reason": null, "verdicts": {"ok": 0, "wrong_result": 0, "timeout": 0}}
]}
JSON
expect_exit 0 "a report row that judged nothing" -- run_table --report "$TMP/c.json:run C"
expect_grep '^\| 1 \| 1_Square_matmul \| pointwise \| - \| - \| - \| - \| - \| not run on the GPU \| - \|$' \
  "$TMP/out" "a row without verdicts counts as not run"
expect_exit 0 "a judged row, then one that judged nothing" -- run_table --report "$TMP/a.json:run A" --report "$TMP/c.json:run C"
expect_grep '^\| 1 \| 1_Square_matmul \| pointwise \| yes \| 2.000x \| 1.500x \| 50.0% \| 100 s \| searched \| run A \|$' \
  "$TMP/out" "a later row that judged nothing does not replace a measurement"
expect_grep '^\| 1 \| 2_ReLU \| pointwise \| no \| - \| - \| - \| 62 s \| no variant correct \| run A \|$' \
  "$TMP/out" "a row with wrong verdicts stays wrong"

# --- no report ---------------------------------------------------------------------------
expect_exit 0 "the table without reports" -- run_table
expect_grep '^\| 1 \| 1_Square_matmul \| pointwise \| - \| - \| - \| - \| - \| not run on the GPU \| - \|$' \
  "$TMP/out" "a covered problem with no report row"

# --- json --------------------------------------------------------------------------------
expect_exit 0 "--format json" -- run_table --report "$TMP/a.json:run A" --format json
cp "$TMP/out" "$TMP/a.json.out"
python3 - "$TMP/a.json.out" >"$TMP/check" 2>&1 <<'PY'
import json, math, sys
d = json.load(open(sys.argv[1]))
rows, s = d["rows"], d["summary"]
got = [(r["level"], r["problem"]) for r in rows]
assert got == [(1, "1_Square_matmul"), (1, "2_ReLU"), (1, "10_Cumsum"), (2, "1_Conv_ReLU"),
               (2, "3_Broken")], got
r = rows[0]
assert r["covered"] is True and r["family"] == "pointwise" and r["correct"] is True, r
assert r["speedup_eager"] == 2.0 and r["sol_fraction"] == 0.5 and r["source"] == "run A", r
assert r["stop"] == "searched", r
assert rows[1]["correct"] is False and rows[1]["stop"] == "no variant correct", rows[1]
assert rows[2]["covered"] is False and rows[2]["not_covered"] == "because", rows[2]
assert rows[2]["measured"] is False and rows[2]["source"] is None, rows[2]
assert rows[4]["not_covered"] == "recipe error", rows[4]
assert set(s) == {"1", "2", "all"}, s
assert s["1"]["problems"] == 3 and s["1"]["covered"] == 2 and s["1"]["correct"] == 1, s["1"]
assert s["1"]["faster_than_eager"] == 1 and s["1"]["measured"] == 2, s["1"]
assert abs(s["1"]["geomean_eager_all"] - 2 ** (1 / 3)) < 1e-9, s["1"]
assert abs(s["all"]["geomean_eager_all"] - 2 ** (1 / 5)) < 1e-9, s["all"]
assert s["all"]["geomean_eager_correct"] == 2.0 and s["2"]["geomean_eager_correct"] is None, s
print("json ok")
PY
expect_grep '^json ok$' "$TMP/check" "json rows and summary"

# --- one GPU a table -------------------------------------------------------------------------
# D and E: problem 1 measured on two different GPUs (cutegen report's kernelbench metadata)
for r in D:GPU-X E:GPU-Y; do
  cat >"$TMP/${r%%:*}.json" <<JSON
{"cutegen_report": 1, "problems": [
 {"problem": "1_Square_matmul.py", "level": 1, "problem_id": 1, "correct": true,
  "speedup_eager": 3.0, "speedup_compile": 2.0, "sol_fraction": 0.7, "wall_s": 50,
  "stop_reason": "recipes: the best built-in variant", "verdicts": {"ok": 2}}],
 "kernelbench": {"eval_results": {"level1": {"1": [{"sample_id": 0,
  "metadata": {"hardware": "NVIDIA ${r#*:}", "device": "cuda:0"}}]}}}}
JSON
done
expect_exit 0 "a report without hardware, then one from GPU-X" -- run_table --report "$TMP/a.json:run A" --report "$TMP/D.json:run D"
expect_grep '^Measured on: NVIDIA GPU-X \(the reports. hardware\)\.$' "$TMP/out" "the table names the GPU its numbers are from"
expect_grep '^\| 1 \| 1_Square_matmul \| pointwise \| yes \| 3.000x \| 2.000x \| 70.0% \| 50 s \| searched \| run D \|$' \
  "$TMP/out" "D's row replaces A's"
expect_exit 0 "--format json with D" -- run_table --report "$TMP/D.json" --format json
expect_grep '"gpu": "NVIDIA GPU-X"' "$TMP/out" "the JSON names the GPU"
expect_exit 0 "no report says its GPU" -- run_table --report "$TMP/a.json"
tests=$((tests + 1))
if grep -q '^Measured on' "$TMP/out"; then echo "FAIL: a GPU named where no report gives one"; failures=$((failures + 1)); else
  echo "ok: no GPU line where no report names one"; fi
expect_exit 2 "reports from two GPUs" -- run_table --report "$TMP/D.json" --report "$TMP/E.json"
expect_grep '^recipe_table.py: error: the reports come from more than one GPU \(NVIDIA GPU-X: D.json; NVIDIA GPU-Y: E.json\)' \
  "$TMP/err" "the two GPUs and their reports are named"

# --- another GPU's rows where the table's GPU has none (--other-report) --------------------
cat >"$TMP/F.json" <<'JSON'
{"cutegen_report": 1, "problems": [
 {"problem": "1_Square_matmul.py", "level": 1, "problem_id": 1, "correct": true,
  "speedup_eager": 9.0, "speedup_compile": 9.0, "sol_fraction": 0.9, "wall_s": 50,
  "stop_reason": "recipes: the best built-in variant", "verdicts": {"ok": 2}},
 {"problem": "2_ReLU.py", "level": 1, "problem_id": 2, "correct": true,
  "speedup_eager": 4.0, "speedup_compile": null, "sol_fraction": 0.4, "wall_s": 20,
  "stop_reason": "recipes: the best built-in variant", "verdicts": {"ok": 1}}],
 "kernelbench": {"eval_results": {"level1": {"1": [{"sample_id": 0,
  "metadata": {"hardware": "NVIDIA GPU-Y", "device": "cuda:0"}}]}}}}
JSON
expect_exit 0 "GPU-X's report, GPU-Y's as --other-report" -- \
  run_table --report "$TMP/D.json:run D" --other-report "$TMP/F.json:run F"
grep '^| 1 | [12]_' "$TMP/out" >"$TMP/rows"
cat >"$TMP/want" <<'EOF'
| 1 | 1_Square_matmul | pointwise | yes | 3.000x | 2.000x | 70.0% | 50 s | searched | run D |
| 1 | 2_ReLU | pointwise | - | - | - | - | - | not run on this GPU; on the NVIDIA GPU-Y: correct, 4.000x over eager, - over compile (run F) | - |
EOF
expect_same "$TMP/want" "$TMP/rows" "the other GPU fills only the row this GPU has not run, in its stop column"
g1=$(awk 'BEGIN { printf "%.3fx", exp(log(3) / 3) }')
g1o=$(awk 'BEGIN { printf "%.3fx", exp((log(3) + log(4)) / 3) }')
g1oc=$(awk 'BEGIN { printf "%.3fx", exp((log(3) + log(4)) / 2) }')
expect_grep "^\| 1 \| 3 \| 2 \| 1 \| 1 \| 1 \| $g1 \| 3.000x \|$" "$TMP/out" "the first summary counts this GPU only"
expect_grep "^With the 1 rows this GPU has not run counted as the NVIDIA GPU-Y measured them" "$TMP/out" \
  "the second summary says what it mixes"
expect_grep "^\| 1 \| 3 \| 2 \| 2 \| 2 \| 2 \| $g1o \| $g1oc \|$" "$TMP/out" "the second summary counts the other GPU's row"
expect_exit 0 "--other-report, --format json" -- \
  run_table --report "$TMP/D.json" --other-report "$TMP/F.json" --format json
python3 - "$TMP/out" >"$TMP/check" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
r1, r2 = d["rows"][0], d["rows"][1]
assert r1["other"] is None and r1["speedup_eager"] == 3.0, r1
assert r2["measured"] is False and r2["other"]["speedup_eager"] == 4.0, r2
assert r2["other"]["gpu"] == "NVIDIA GPU-Y" and d["other_gpu"] == "NVIDIA GPU-Y", d
assert d["summary"]["1"]["measured"] == 1 and d["summary_with_other"]["1"]["measured"] == 2, d
print("json other ok")
PY
expect_grep '^json other ok$' "$TMP/check" "json: the other GPU's row and the second summary"
expect_exit 2 "--other-report from the table's own GPU" -- \
  run_table --report "$TMP/D.json" --other-report "$TMP/D.json"
expect_grep "^recipe_table.py: error: --other-report: those reports come from NVIDIA GPU-X, the table's own GPU" \
  "$TMP/err" "the same GPU as --other-report is refused"

# --- bad input -----------------------------------------------------------------------------
expect_exit 2 "a missing report file" -- run_table --report "$TMP/nope.json:x"
expect_grep "^recipe_table.py: error: .*nope.json" "$TMP/err" "the missing report is named"
tests=$((tests + 1))
if [ "$(wc -l <"$TMP/err")" -eq 1 ] && [ ! -s "$TMP/out" ]; then echo "ok: one line, nothing on stdout"; else
  echo "FAIL: the error is not one line on stderr alone"; sed 's/^/  | /' "$TMP/err"; failures=$((failures + 1)); fi
echo '{"problems": 3}' >"$TMP/bad.json"
expect_exit 2 "a report not in the report shape" -- run_table --report "$TMP/bad.json"
expect_grep "^recipe_table.py: error: .*bad.json: .*problems" "$TMP/err" "the malformed report is named"
echo '{"problems": [{"problem": "x.py", "level": "one"}]}' >"$TMP/bad2.json"
expect_exit 2 "a report row without a level" -- run_table --report "$TMP/bad2.json"
expect_grep "bad2.json: problems\[0\]" "$TMP/err" "the bad row is named"
echo 'not json' >"$TMP/bad3.json"
expect_exit 2 "a report that is not JSON" -- run_table --report "$TMP/bad3.json"
expect_grep "bad3.json: not JSON" "$TMP/err" "says it is not JSON"
expect_exit 2 "a missing spec directory" -- python3 "$TABLE" --specs "$TMP/nospecs" --cutegen "$FAKE"
expect_grep "nospecs: no such directory" "$TMP/err" "the spec directory is named"
expect_exit 2 "a missing cutegen" -- python3 "$TABLE" --specs "$S" --cutegen "$TMP/no-cutegen"
expect_grep "no-cutegen: not an executable" "$TMP/err" "the cutegen binary is named"

finish
