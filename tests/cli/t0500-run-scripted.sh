#!/usr/bin/env bash
# cutegen run end to end with a scripted model (tests/agent/responder.py through the
# command provider) and the stand-in worker and reference (tests/cli/fake/), whose
# verdicts follow a CG_FAKE_MODE marker in each kernel: a first version that does not
# compile and its fix, a SEARCH block that matches nothing, a wrong kernel and its fix,
# a reply with no code, a crashing kernel and its fix, faster kernels. Checks the tree,
# what the prompts carried, the stop reason, and that a run killed during a model call
# resumes to the same result without asking any paid question twice. At the end the
# best kernel is timed once more in the reference process (the final numbers, which
# the report shows); a final timing that crashes leaves the search's numbers.
. "$(dirname "$0")/lib.sh"
"$CUTEGEN" doctor >"$TMP/doctor" 2>&1
grep -q '^ok  *nvcc' "$TMP/doctor" || skip "nvcc is not installed (cutegen doctor says how to get it)"
grep -q '^ok  *cutlass' "$TMP/doctor" || skip "CUTLASS headers are not installed (scripts/setup.sh installs them)"
command -v sqlite3 >/dev/null || skip "sqlite3 (the command-line tool) is not installed"

FAKE=$SRC/tests/cli/fake
run_agent() {  # RUN_DIR [extra flags]
  local dir=$1; shift
  "$CUTEGEN" run --task "$SRC/examples/problems/relu_small.py" --command "$SRC/tests/agent/responder.py" \
    --worker "$FAKE/worker.py" --python "$FAKE/python.py" --children 2 --fix-attempts 2 \
    --rounds 3 --profile never -q "$@"
}
q() { sqlite3 "$1/run.db" "$2"; }

# The stand-in reference's final timing: the kernel at its marker's time, eager at 2.5 ms
# (the worker's timing says 2.0), torch.compile at 1.5 ms.
export RESPONDER_DIR=$TMP/resp1 FAKE_STATE_DIR=$TMP/state1 FAKE_FINAL_EAGER_MS=2.5
mkdir -p "$RESPONDER_DIR" "$FAKE_STATE_DIR"
expect_exit 0 "a scripted run" -- run_agent "$TMP/run1" --run-dir "$TMP/run1"
expect_grep '^stopped: +rounds: 3 rounds done' "$TMP/out" "the stop reason is printed"
expect_grep '^best: +node [0-9]+ .*1\.3900 ms, 1\.439x over eager' "$TMP/out" "the best kernel is the fastest correct one"
expect_grep '^best: .*over eager \(no speed of light: the GPU.s peaks or the problem.s bytes and flops are not known\)$' \
  "$TMP/out" "the fake GPU has no peaks: the best line says so rather than '0.0% of the 0.0000 ms speed of light'"
expect_grep '^verdicts: ok [0-9]+, compile_error 1, runtime_error 1, wrong_result 1' "$TMP/out" "every kind of failure was met once"
expect_grep '^verified: 1\.3900 ms vs eager 2\.5000 ms = 1\.80x, vs compile 1\.5000 ms = 1\.08x \(interleaved in one process, 10 rounds\)$' "$TMP/out" "the final timing's numbers are printed"
tests=$((tests + 1))
! grep -q '^note:' "$TMP/out" && echo "ok: no note when the best kernel beats eager" || { echo "FAIL: a note on a faster kernel"; failures=$((failures + 1)); }
best1=$(q "$TMP/run1" "select value from task_kv where key = 'best_node'")
tests=$((tests + 1))
got=$(q "$TMP/run1" "select group_concat(verdict || ':' || printf('%.4f', speedup) || ':' || report_path, ' ') from (select * from evaluations where node_id = $best1 order by id)")
[ "$got" = "ok:1.4388:artifacts/nodes/$best1/eval.json ok:1.7986:artifacts/nodes/$best1/eval.2.json" ] && echo "ok: the final timing is the best node's latest judgment ($got)" || { echo "FAIL: judgments of node $best1: $got"; failures=$((failures + 1)); }
expect_grep '"timing": *"interleaved"' "$TMP/run1/artifacts/nodes/$best1/eval.2.json" "its report says how it was timed"
expect_exit 0 "report of the run" -- "$CUTEGEN" report "$TMP/run1" --format csv
expect_grep '^relu_small\.py,[^,]*,[^,]*,[^,]*,1,1,1\.79856,1\.07914,1\.39,2\.5,1\.5,' "$TMP/out" "the report shows the final numbers"
tests=$((tests + 1))
[ -f "$TMP/run1/best.cu" ] && grep -q 'CG_FAKE_MODE=ok:1.39' "$TMP/run1/best.cu" && echo "ok: best.cu is the best kernel" || { echo "FAIL: best.cu"; failures=$((failures + 1)); }
tests=$((tests + 1))
kinds=$(q "$TMP/run1" "select group_concat(kind || ':' || verdict, ' ') from (select * from nodes order by id)")
case "$kinds" in "first:compile_error fix_compile:ok"*) echo "ok: the tree starts with a failed first version and its fix ($kinds)";;
  *) echo "FAIL: tree $kinds"; failures=$((failures + 1));; esac
R=$RESPONDER_DIR/request
expect_grep 'expected an expression' "$R-for-the-first-version-fix.json" "the fix prompt carries the compiler's error"
expect_grep 'matches nothing in the current kernel' "$R-in-round-1--child-1-of-2-retry.json" "a SEARCH block that matches nothing is reported back"
expect_grep 'elements wrong' "$R-in-round-1--child-1-of-2-fix.json" "the fix prompt carries the checker's message"
expect_grep 'held no code' "$R-in-round-2--child-1-of-2-retry.json" "a reply without code is reported back"
expect_grep 'cudaErrorIllegalAddress|signal 11' "$R-in-round-2--child-1-of-2-fix.json" "the fix prompt carries the crash"
expect_grep 'node 2 \(fix_compile, depth 1\): ok, 2.0000 ms' "$R-in-round-1--child-2-of-2-ask.json" "optimise prompts carry the branch's history"
tests=$((tests + 1))
if grep -l '{{' "$RESPONDER_DIR"/request-*.json >/dev/null; then echo "FAIL: a prompt kept a placeholder"; failures=$((failures + 1)); else echo "ok: no placeholder left in any prompt"; fi
calls1=$(q "$TMP/run1" "select count(*) from llm_calls")

# The same run, killed during a model call in round 2, then resumed.
export RESPONDER_DIR=$TMP/resp2 FAKE_STATE_DIR=$TMP/state2 RESPONDER_KILL_AT="in round 2, child 2 of 2"
mkdir -p "$RESPONDER_DIR" "$FAKE_STATE_DIR"
run_agent "$TMP/run2" --run-dir "$TMP/run2" >"$TMP/out" 2>"$TMP/err"
rc=$?
tests=$((tests + 1))
[ "$rc" -eq 137 ] && echo "ok: the run was killed (SIGKILL) during a model call" || { echo "FAIL: exit $rc, expected 137"; failures=$((failures + 1)); }
before=$(q "$TMP/run2" "select count(*) from llm_calls")
expect_exit 0 "resume" -- run_agent "$TMP/run2" --resume "$TMP/run2"
expect_grep '^best: +node [0-9]+ .*1\.3900 ms' "$TMP/out" "the resumed run finds the same best"
tests=$((tests + 1))
calls2=$(q "$TMP/run2" "select count(*) from llm_calls")
asked=$(ls "$RESPONDER_DIR"/request-*.json | wc -l)
if [ "$calls2" -eq "$calls1" ] && [ "$before" -ge 6 ] && [ "$before" -lt "$calls1" ]; then echo "ok: the resumed run recorded $calls2 calls, as the uninterrupted one ($before before the kill)"; else
  echo "FAIL: calls $calls2 (uninterrupted $calls1, before the kill $before)"; failures=$((failures + 1)); fi
tests=$((tests + 1))
same=$(q "$TMP/run1" "select group_concat(k, ',') from (select kind || verdict || depth as k from nodes order by k)")
same2=$(q "$TMP/run2" "select group_concat(k, ',') from (select kind || verdict || depth as k from nodes order by k)")
[ "$same" = "$same2" ] && echo "ok: the resumed tree equals the uninterrupted one" || { echo "FAIL: trees differ: $same vs $same2"; failures=$((failures + 1)); }
# Delayed profiling (the default): it turns on once the best's structure fingerprint has
# held over two accepted steps (every kernel here has the same structure). There is no
# GPU profiler here, so the profile itself fails, with a warning, and the run goes on.
unset RESPONDER_KILL_AT
export RESPONDER_DIR=$TMP/resp3 FAKE_STATE_DIR=$TMP/state3
mkdir -p "$RESPONDER_DIR" "$FAKE_STATE_DIR"
expect_exit 0 "a run with delayed profiling" -- run_agent "$TMP/run3" --run-dir "$TMP/run3" --profile delayed
tests=$((tests + 1))
fps=$(q "$TMP/run3" "select count(distinct fingerprint) from nodes where verdict = 'ok'")
[ "$fps" = 1 ] && echo "ok: correct nodes carry one structure fingerprint" || { echo "FAIL: $fps fingerprints"; failures=$((failures + 1)); }
tests=$((tests + 1))
[ "$(q "$TMP/run3" "select count(*) from events where kind = 'profiling_on'")" = 1 ] && echo "ok: profiling turned on once the structure held" || { echo "FAIL: profiling never turned on"; failures=$((failures + 1)); }
# A finished run resumed: the final numbers are stored, not measured again.
expect_exit 0 "resume of a finished run" -- run_agent "$TMP/run1" --resume "$TMP/run1"
expect_grep '^verified: 1\.3900 ms vs eager 2\.5000 ms = 1\.80x.*\(stored\)$' "$TMP/out" "prints the stored final numbers"
tests=$((tests + 1))
n=$(q "$TMP/run1" "select count(*) from evaluations where node_id = $best1")
[ "$n" = 2 ] && echo "ok: and does not time the best kernel a third time" || { echo "FAIL: $n judgments of node $best1"; failures=$((failures + 1)); }

# The final timing crashes the reference process (as a kernel breaking the CUDA context
# there would): the run still ends, says so, and the search's numbers stay.
export RESPONDER_DIR=$TMP/resp4 FAKE_STATE_DIR=$TMP/state4 FAKE_FINAL_MODE=crash
mkdir -p "$RESPONDER_DIR" "$FAKE_STATE_DIR"
expect_exit 0 "a run whose final timing crashes" -- run_agent "$TMP/run4" --run-dir "$TMP/run4" --rounds 1
expect_grep '^best: +node [0-9]+ .*1\.5000 ms, 1\.333x over eager' "$TMP/out" "the search's best"
expect_grep '^verified: not done: the final timing failed \(runtime_error: final timing, in the reference process: the reference process ended \(killed by signal 11 \(Segmentation fault\)\)\); the numbers above stay the search.s' "$TMP/out" "says why, and that the numbers are the search's"
best4=$(q "$TMP/run4" "select value from task_kv where key = 'best_node'")
tests=$((tests + 1))
[ "$(q "$TMP/run4" "select count(*) from evaluations where node_id = $best4")" = 1 ] && [ "$(q "$TMP/run4" "select count(*) from artifacts where node_id = $best4 and name = 'final.json'")" = 1 ] && \
  [ "$(q "$TMP/run4" "select count(*) from events where kind = 'final' and json like '%signal 11%'")" = 1 ] && \
  echo "ok: the node keeps its judgment; the failed final report and the reason are recorded" || { echo "FAIL: what the failed final timing left"; failures=$((failures + 1)); }
expect_exit 0 "report of that run" -- "$CUTEGEN" report "$TMP/run4" --format csv
expect_grep '^relu_small\.py,[^,]*,[^,]*,[^,]*,1,1,1\.33333,1,1\.5,2,1\.5,' "$TMP/out" "the report shows the search's numbers"
unset FAKE_FINAL_MODE
export RESPONDER_DIR=$TMP/resp5 FAKE_STATE_DIR=$TMP/state5
mkdir -p "$RESPONDER_DIR" "$FAKE_STATE_DIR"
expect_exit 0 "a run with --no-final" -- run_agent "$TMP/run5" --run-dir "$TMP/run5" --rounds 1 --no-final
tests=$((tests + 1))
! grep -q '^verified:' "$TMP/out" && [ ! -e "$FAKE_STATE_DIR/final-request.json" ] && echo "ok: --no-final skips the final timing" || { echo "FAIL: --no-final"; failures=$((failures + 1)); }
# The final timing finds PyTorch eager faster (1.0 ms against the kernel's 1.5): the run
# says so, since the reference is then the program to keep.
export RESPONDER_DIR=$TMP/resp6 FAKE_STATE_DIR=$TMP/state6 FAKE_FINAL_EAGER_MS=1.0
mkdir -p "$RESPONDER_DIR" "$FAKE_STATE_DIR"
expect_exit 0 "a run whose best is slower than eager" -- run_agent "$TMP/run6" --run-dir "$TMP/run6" --rounds 1
expect_grep '^note: +the best kernel is slower than PyTorch eager \(0\.667x\): keep the reference$' "$TMP/out" "says the reference is faster"
expect_exit 2 "resume of a run that does not exist" -- run_agent "$TMP/none" --resume "$TMP/none"
finish
