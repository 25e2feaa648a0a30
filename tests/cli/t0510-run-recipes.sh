#!/usr/bin/env bash
# cutegen run with no model configured uses the built-in recipes: the task (a real task
# spec from tests/data/recipe/, served by the stand-in reference process) is recognised,
# every variant is generated, built (really, with nvcc) and judged, and the best kept;
# a task the recipes do not cover stops with the reason. With a model, --seed-kernel
# builtin starts the tree from the recipe variants.
. "$(dirname "$0")/lib.sh"
"$CUTEGEN" doctor >"$TMP/doctor" 2>&1
grep -q '^ok  *nvcc' "$TMP/doctor" || skip "nvcc is not installed (cutegen doctor says how to get it)"
grep -q '^ok  *cutlass' "$TMP/doctor" || skip "CUTLASS headers are not installed (scripts/setup.sh installs them)"
command -v sqlite3 >/dev/null || skip "sqlite3 (the command-line tool) is not installed"
FAKE=$SRC/tests/cli/fake
unset CUTEGEN_PROVIDER
unset CUTEGEN_CONFIG
export HOME=$TMP/home FAKE_STATE_DIR=$TMP/state  # no config file: no model configured
mkdir -p "$FAKE_STATE_DIR"
run_agent() {
  "$CUTEGEN" run --task "$SRC/examples/problems/relu_small.py" --worker "$FAKE/worker.py" \
    --python "$FAKE/python.py" --no-compile "$@"
}

export FAKE_SPEC=$SRC/tests/data/recipe/leaky_relu.json CUTEGEN_CACHE_DIR=$TMP/cache1
expect_exit 0 "no model: the built-in recipes" -- run_agent --run-dir "$TMP/r1"
expect_grep "no model configured .*using the built-in recipes" "$TMP/err" "says it uses the recipes"
expect_grep "^stopped: +recipes: the best built-in variant" "$TMP/out" "stops after autotuning"
n=$(sqlite3 "$TMP/r1/run.db" "select count(*) from nodes where kind = 'recipe' and verdict = 'ok'")
tests=$((tests + 1))
[ "$n" -ge 2 ] && echo "ok: $n recipe variants built and judged" || { echo "FAIL: $n recipe variants"; failures=$((failures + 1)); }
expect_grep "CG_EXPORT int cg_forward" "$TMP/r1/best.cu" "best.cu is a whole candidate"
# the report says which variant each judged node was (a sweep's report read away from its run)
expect_exit 0 "the run's report as JSON" -- "$CUTEGEN" report "$TMP/r1" --format json --out "$TMP/r1.json"
tests=$((tests + 1))
if python3 - "$TMP/r1.json" "$n" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
judged = j["problems"][0]["judged"]
assert len(judged) == int(sys.argv[2]), judged
for node in judged:
    assert node["kind"] == "recipe" and node["verdict"] == "ok" and node["time_ms"] > 0, node
    assert node["params"].startswith("threads="), node  # the kernel's "// Parameters:" line
assert len({node["params"] for node in judged}) == len(judged), judged
PY
then echo "ok: each judged variant is named by its parameters in the report"; else
  echo "FAIL: the report's judged nodes"; failures=$((failures + 1)); fi

# --variants 2 with variant 0 judged wrong: variant 2 is judged in its place (a source tree
# whose pointwise template marks variant 0's build wrong for the stand-in worker)
mkdir -p "$TMP/src"
cp -r "$SRC/recipes" "$SRC/include" "$SRC/python" "$SRC/docs" "$SRC/prompts" "$SRC/prices" "$SRC/knowledge" "$TMP/src/"
cat >>"$TMP/src/recipes/pointwise.cu" <<'CU'
#if CGR_THREADS == 128 && CGR_UNROLL == 1
extern "C" __attribute__((used)) const char cg_fake_mode_wrong[] = "CG_FAKE_MODE=wrong";
#endif
CU
export FAKE_SPEC=$SRC/tests/data/recipe/leaky_relu.json CUTEGEN_CACHE_DIR=$TMP/cache4
CUTEGEN_SOURCE_DIR=$TMP/src expect_exit 0 "--variants 2, the first wrong" -- run_agent --run-dir "$TMP/r4" --variants 2
expect_grep "not correct: judging variant 2 of the list in its place" "$TMP/err" "says which variant takes the wrong one's place"
got=$(sqlite3 "$TMP/r4/run.db" "select group_concat(verdict, ',') from (select verdict from nodes where kind = 'recipe' order by id)")
tests=$((tests + 1))
[ "$got" = "wrong_result,ok,ok" ] && echo "ok: three variants judged, the wrong one replaced ($got)" ||
  { echo "FAIL: verdicts $got (want wrong_result,ok,ok)"; failures=$((failures + 1)); }
third=$(sqlite3 "$TMP/r4/run.db" "select source_path from nodes where kind = 'recipe' order by id limit 1 offset 2")
expect_grep "^#define CGR_UNROLL 2$" "$TMP/r4/$third" "the replacement is variant 2 (threads 128, unroll 2)"

export FAKE_SPEC=$SRC/tests/data/recipe/pool_lp.json CUTEGEN_CACHE_DIR=$TMP/cache2
expect_exit 0 "no model, a task the recipes do not cover" -- run_agent --run-dir "$TMP/r2"
expect_grep "^stopped: +no model configured, and the built-in recipes do not cover this task \(not covered: " "$TMP/out" "says why it stopped"

export FAKE_SPEC=$SRC/tests/data/recipe/leaky_relu.json CUTEGEN_CACHE_DIR=$TMP/cache3 RESPONDER_DIR=$TMP/resp
mkdir -p "$RESPONDER_DIR"
expect_exit 0 "a model seeded with the recipes" -- run_agent --run-dir "$TMP/r3" --seed-kernel builtin \
  --command "$SRC/tests/agent/responder.py" --rounds 1 --children 2 --profile never
kinds=$(sqlite3 "$TMP/r3/run.db" "select group_concat(distinct kind) from nodes")
tests=$((tests + 1))
case "$kinds" in recipe*optimise*|recipe*tune*) echo "ok: the tree holds recipe variants and the model's children ($kinds)";;
  *) echo "FAIL: kinds $kinds"; failures=$((failures + 1));; esac
expect_grep "Request in round 1, child 1 of 2" "$RESPONDER_DIR/request-in-round-1--child-1-of-2-ask.json" "the model was asked to improve the best variant"
finish
