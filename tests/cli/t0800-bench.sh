#!/usr/bin/env bash
# cutegen bench on the CPU: a small KernelBench-shaped tree of problems, the stand-in
# worker and reference process (tests/cli/fake/) and the scripted model
# (tests/agent/responder.py). Checks selection and sharding, bad input, a sweep over two
# (simulated) GPU lanes -- both used, never two holders of one lane at once --, a
# problem that fails while the sweep goes on, the report of a sweep directory, and a
# sweep killed with SIGKILL that resumes to the end without asking a stored question again.
. "$(dirname "$0")/lib.sh"
"$CUTEGEN" doctor >"$TMP/doctor" 2>&1
grep -q '^ok  *nvcc' "$TMP/doctor" || skip "nvcc is not installed (cutegen doctor says how to get it)"
grep -q '^ok  *cutlass' "$TMP/doctor" || skip "CUTLASS headers are not installed (scripts/setup.sh installs them)"
command -v sqlite3 >/dev/null || skip "sqlite3 (the command-line tool) is not installed"
FAKE=$SRC/tests/cli/fake
KB=$TMP/kb
mkdir -p "$KB/level1" "$KB/level2"
for i in 1 2 3 4 5; do cp "$SRC/examples/problems/relu_small.py" "$KB/level1/${i}_Relu_copy_$i.py"; done
cp "$SRC/examples/problems/scale_bias_small.py" "$KB/level2/7_Scale_bias.py"
{ cat "$SRC/examples/problems/relu_small.py"; echo "# FAKE_REF_MODE=import_error"; } >"$KB/level2/9_Broken.py"
export RESPONDER_DIR=$TMP/resp FAKE_STATE_DIR=$TMP/state
mkdir -p "$RESPONDER_DIR" "$FAKE_STATE_DIR"
bench() {  # (exec: run in the background as "(bench ...) &", $! is cutegen's pid)
  exec "$CUTEGEN" bench --kernelbench "$KB" --command "$SRC/tests/agent/responder.py" \
    --worker "$FAKE/worker.py" --python "$FAKE/python.py" --no-compile --children 2 \
    --rounds 1 --profile never "$@"
}
q() { sqlite3 "$1" "$2"; }
in_sub() { ("$@"); }

expect_exit 0 "bench --help" -- "$CUTEGEN" bench --help
expect_grep "--shard I/N" "$TMP/out" "the help names the sharding flag"
expect_exit 2 "no problems" -- "$CUTEGEN" bench --run-dir "$TMP/x"
expect_grep "needs problems" "$TMP/err" "says what is missing"
expect_exit 2 "a bad shard" -- in_sub bench --shard 2/2 --run-dir "$TMP/x"
expect_grep "0 <= I < N" "$TMP/err" "says what a shard is"
expect_exit 2 "a bad range" -- in_sub bench --problems 3-1 --run-dir "$TMP/x"
expect_exit 2 "the same GPU twice" -- in_sub bench --gpus 0,0 --run-dir "$TMP/x"
expect_exit 2 "an option bench sets itself" -- in_sub bench --device 1 --run-dir "$TMP/x"
expect_grep "set by bench" "$TMP/err" "says why"
expect_exit 2 "an option run does not know, caught before any work" -- in_sub bench --colour --run-dir "$TMP/x"
expect_grep "refuses the options" "$TMP/err" "says run refused it"
tests=$((tests + 1))
[ ! -e "$TMP/x/bench.db" ] && echo "ok: nothing was started" || { echo "FAIL: a sweep was started"; failures=$((failures + 1)); }

# Shards: disjoint, and together everything.
expect_exit 0 "shard 0/2" -- in_sub bench --level 1 --shard 0/2 --run-dir "$TMP/s0" -q
expect_exit 0 "shard 1/2" -- in_sub bench --level 1 --shard 1/2 --run-dir "$TMP/s1" -q
s0=$(q "$TMP/s0/bench.db" "select group_concat(number) from problems order by number")
s1=$(q "$TMP/s1/bench.db" "select group_concat(number) from problems order by number")
tests=$((tests + 1))
[ "$s0" = "1,3,5" ] && [ "$s1" = "2,4" ] && echo "ok: shards 0/2 and 1/2 hold $s0 and $s1" || { echo "FAIL: shards $s0 / $s1"; failures=$((failures + 1)); }
expect_exit 0 "report --merge of the shards" -- "$CUTEGEN" report --merge "$TMP/s*" --format csv
tests=$((tests + 1))
n=$(grep -c 'Relu_copy' "$TMP/out")
[ "$n" -eq 5 ] && echo "ok: the merged report holds the 5 problems once each" || { echo "FAIL: $n rows"; failures=$((failures + 1)); }

# A sweep over two GPU lanes, with a problem that fails.
expect_exit 0 "a sweep of 7 problems on 2 lanes, 4 at a time" -- in_sub bench --level 1,2 --gpus 0,1 --jobs 4 --run-dir "$TMP/b"
expect_grep "^problems: 7 \(6 done, 1 failed, 0 not run\)" "$TMP/out" "6 done, the broken one failed"
expect_grep "FAILED l2-9_Broken .*exit 3: .*SyntaxError" "$TMP/err" "the failure is reported with the run's exit code"
tests=$((tests + 1))
msg=$(q "$TMP/b/bench.db" "select message from problems where slug = 'l2-9_Broken'")
case "$msg" in *SyntaxError*) echo "ok: bench.db records why it failed";; *) echo "FAIL: message '$msg'"; failures=$((failures + 1));; esac
expect_grep "^gpu 0: +lane held" "$TMP/out" "lane use of GPU 0 is reported"
expect_grep "^gpu 1: +lane held" "$TMP/out" "lane use of GPU 1 is reported"
overlap() {  # LOG: prints "overlap" when two holds of one lane overlap in time
  sort -k2,2n "$1" | awk 'NR > 1 && $2 < end - 0.0005 { print "overlap"; exit } { if ($3 > end) end = $3 }'
}
tests=$((tests + 1))
if [ -s "$TMP/b/lanes/gpu0.log" ] && [ -s "$TMP/b/lanes/gpu1.log" ] && [ -z "$(overlap "$TMP/b/lanes/gpu0.log")" ] &&
   [ -z "$(overlap "$TMP/b/lanes/gpu1.log")" ]; then
  echo "ok: both lanes were used ($(wc -l <"$TMP/b/lanes/gpu0.log") and $(wc -l <"$TMP/b/lanes/gpu1.log") holds), never by two at once"
else echo "FAIL: lane logs"; head -3 "$TMP/b/lanes/"gpu*.log; failures=$((failures + 1)); fi
tests=$((tests + 1))
both=$(cat "$TMP/b/lanes/gpu0.log" "$TMP/b/lanes/gpu1.log" | sort -k2,2n | awk '{ print $0 }' | overlap /dev/stdin)
[ -n "$both" ] && echo "ok: the two lanes were held at the same time (the GPUs worked in parallel)" || { echo "FAIL: the lanes never overlapped"; failures=$((failures + 1)); }
expect_exit 0 "report of the sweep directory" -- "$CUTEGEN" report "$TMP/b" --format csv
tests=$((tests + 1))
[ "$(grep -c '_copy_\|Scale_bias' "$TMP/out")" -eq 6 ] && echo "ok: the report holds the 6 runs" || { echo "FAIL: report"; cat "$TMP/out"; failures=$((failures + 1)); }
expect_exit 0 "the same command again: nothing left to do but the failed problem's second attempt" -- \
  in_sub bench --level 1,2 --gpus 0,1 --jobs 4 --run-dir "$TMP/b"
tests=$((tests + 1))
[ "$(q "$TMP/b/bench.db" "select attempts from problems where slug = 'l2-9_Broken'")" = 2 ] &&
  [ "$(q "$TMP/b/bench.db" "select max(attempts) from problems where state = 'done'")" = 1 ] &&
  echo "ok: done problems were kept, the failed one retried once" || { echo "FAIL: attempts"; failures=$((failures + 1)); }

# Killed with SIGKILL while its runs are busy; the runs die with it; resume finishes.
export RESPONDER_DIR=$TMP/resp2
mkdir -p "$RESPONDER_DIR"
(bench --level 1 --jobs 2 --run-dir "$TMP/k" -q) >"$TMP/k.out" 2>&1 &
pid=$!
for i in $(seq 1 300); do
  [ "$(cat "$RESPONDER_DIR/calls.log" 2>/dev/null | wc -l)" -ge 4 ] && break
  sleep 0.1
done
kill -9 $pid
wait $pid 2>/dev/null
sleep 1
tests=$((tests + 1))
left=$(pgrep -f "run --task $KB/level1" | wc -l)
[ "$left" -eq 0 ] && echo "ok: the sweep's runs ended with it" || { echo "FAIL: $left runs left running"; failures=$((failures + 1)); }
expect_exit 0 "bench --resume after SIGKILL" -- "$CUTEGEN" bench --resume "$TMP/k"
expect_grep "^problems: 5 \(5 done, 0 failed, 0 not run\)" "$TMP/out" "every problem done"
tests=$((tests + 1))
stored=$(for d in "$TMP"/k/problems/*/; do q "$d/run.db" "select count(*) from llm_calls"; done | awk '{ s += $1 } END { print s + 0 }')
asked=$(wc -l <"$RESPONDER_DIR/calls.log")
again=$(sort "$RESPONDER_DIR/calls.log" | uniq -d | wc -l)
[ "$asked" -le $((stored + 4)) ] && echo "ok: $asked answers for $stored stored calls (only replies in flight at the kill were asked again)" || { echo "FAIL: $asked answers, $stored stored"; failures=$((failures + 1)); }
finish
