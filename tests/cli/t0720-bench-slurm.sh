#!/usr/bin/env bash
# cutegen bench --slurm on a real one-node Slurm cluster (tests/cli/slurm_cluster.sh):
# a sweep of seven problems as an array job of three shards, each task one GPU (the
# cluster's GPUs are stand-ins), each problem judged on the CPU by the stand-in worker
# and reference (tests/cli/fake/) with a scripted model. Checks that the job was really
# submitted and each array index ran its own shard (its output at
# RUN_DIR/slurm/<job>_<i>.out, its run directory RUN_DIR/shard-<i>, the shards' problems
# disjoint and together complete); that a task requeued in the middle of a problem
# resumes its shard (a problem finished before the requeue is not asked for again, the
# interrupted one is finished) rather than starting over; that `cutegen report --merge
# 'RUN_DIR/shard-*'` sees every problem once; and --slurm-script-only and the errors.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/slurm_cluster.sh"
"$CUTEGEN" doctor >"$TMP/doctor" 2>&1
grep -q '^ok  *nvcc' "$TMP/doctor" || skip "nvcc is not installed (cutegen doctor says how to get it)"
grep -q '^ok  *cutlass' "$TMP/doctor" || skip "CUTLASS headers are not installed (scripts/setup.sh installs them)"

FAKE=$SRC/tests/cli/fake
# The scripted model: every reply is a kernel the stand-ins judge correct (1.0 ms against
# eager's 2.0). Each call is logged as "PROBLEM TASK RESTART" in $CALLS/task-<task>.log.
# In task $HOLD_TASK's first attempt, the call for the second problem the task meets is
# held (logged with "held") until the task is killed: the test requeues it there.
cat >"$TMP/model.py" <<'PY'
#!/usr/bin/env python3
import os, re, sys, time
req = sys.stdin.read()
m = re.search(r"CG_PROBLEM=([A-Za-z0-9_./-]+)", req)
prob = m.group(1) if m else "unknown"
task = os.environ.get("SLURM_ARRAY_TASK_ID", "none")
restart = os.environ.get("SLURM_RESTART_COUNT", "0")
log = os.path.join(os.environ["CALLS"], "task-%s.log" % task)
seen = set()
if os.path.exists(log):
    seen = {l.split()[0] for l in open(log) if l.split()[2] == restart}
def note(extra=""):
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.write(fd, ("%s %s %s%s\n" % (prob, task, restart, extra)).encode())
    os.close(fd)
if task == os.environ.get("HOLD_TASK") and restart == "0" and seen - {prob}:
    note(" held")
    time.sleep(600)
note()
print("```cuda\n#include <cutegen/abi.h>\n"
      "CG_EXPORT int cg_forward(const cg_tensor *in, int ni, cg_tensor *out, int no, void *w,\n"
      "                         size_t wb, cudaStream_t s) { return CG_OK; }\n```")
PY
chmod +x "$TMP/model.py"

# Seven level-1 problems (the small ReLU problem under KernelBench's names).
PROBLEMS="1_Square_matrix_multiplication_ 2_Standard_matrix_multiplication_ 3_Batched_matrix_multiplication 19_ReLU 23_Softmax 36_RMSNorm_ 94_MSELoss"
mkdir -p "$TMP/kb/level1"
for p in $PROBLEMS; do
  { echo "# CG_PROBLEM=$p.py"; cat "$SRC/examples/problems/relu_small.py"; } >"$TMP/kb/level1/$p.py"
done

slurm_cluster_start 8 4

export CALLS=$TMP/calls HOLD_TASK=1
mkdir -p "$CALLS"
RUN="$TMP/sweep dir"  # a space: every path must survive the script's quoting
BENCH_ARGS=(--kernelbench "$TMP/kb" --level 1 --jobs 1 --command "$TMP/model.py" --worker "$FAKE/worker.py"
  --python "$FAKE/python.py" --children 1 --fix-attempts 1 --rounds 1 --profile never)

# --slurm-script-only: written, not submitted; the default shard count is said.
expect_exit 0 "--slurm-script-only" -- "$CUTEGEN" bench --slurm --slurm-script-only "${BENCH_ARGS[@]}" --run-dir "$TMP/only"
expect_grep '^shards: +1 \(7 problems / 10, at least 1' "$TMP/out" "the default shard count is said"
expect_grep '#SBATCH --array=0-0' "$TMP/only/slurm/bench.sbatch" "the script is written"
expect_grep '#SBATCH --gres=gpu:1' "$TMP/only/slurm/bench.sbatch" "one GPU per task by default"
tests=$((tests + 1))
[ -z "$(squeue -h -o %i)" ] && echo "ok: nothing was submitted" || { echo "FAIL: a job was queued"; failures=$((failures + 1)); }
expect_exit 0 "--slurm-gpus-per-task 0, a partition and a time" -- "$CUTEGEN" bench --slurm --slurm-script-only --shards 4 \
  --slurm-gpus-per-task 0 --slurm-partition debug --slurm-time 00:30:00 "${BENCH_ARGS[@]}" --run-dir "$TMP/only2"
tests=$((tests + 1))
s=$TMP/only2/slurm/bench.sbatch
if grep -q '^#SBATCH --array=0-3$' "$s" && ! grep -q gres "$s" && grep -q '^#SBATCH --partition=debug$' "$s" &&
  grep -q '^#SBATCH --time=00:30:00$' "$s"; then echo "ok: shards, no GPU, partition and time in the script"; else
  echo "FAIL: script:"; sed 's/^/  | /' "$s"; failures=$((failures + 1)); fi
expect_exit 2 "another shard count on the same run directory" -- "$CUTEGEN" bench --slurm --slurm-script-only --shards 2 "${BENCH_ARGS[@]}" --run-dir "$TMP/only2"
expect_grep 'already holds a sweep in 4 shards' "$TMP/err" "says how the directory was sharded"
expect_exit 0 "two GPUs and four CPUs a task, a relative run directory" -- sh -c 'cd "$1" && shift && exec "$@"' sh "$TMP" \
  "$CUTEGEN" bench --slurm --slurm-script-only --shards 2 --slurm-gpus-per-task 2 --slurm-cpus-per-task 4 "${BENCH_ARGS[@]}" --run-dir rel
s=$TMP/rel/slurm/bench.sbatch
tests=$((tests + 1))
if grep -q '^#SBATCH --gres=gpu:2$' "$s" && grep -q '^#SBATCH --cpus-per-task=4$' "$s" && grep -q -- ' --gpus 0,1 --cpus 4 --shard ' "$s" &&
  grep -q -F "#SBATCH --output=$TMP/rel/slurm/%A_%a.out" "$s" && grep -q -F "#SBATCH --chdir=$TMP" "$s"; then
  echo "ok: the task asks for 2 GPUs and 4 CPUs, bench uses them, paths are absolute"; else
  echo "FAIL: script:"; sed 's/^/  | /' "$s"; failures=$((failures + 1)); fi
expect_exit 0 "--gpus given: kept as it is" -- "$CUTEGEN" bench --slurm --slurm-script-only --slurm-gpus-per-task 2 "${BENCH_ARGS[@]}" --gpus 1 --run-dir "$TMP/only3"
tests=$((tests + 1))
n=$(grep -c -- '--gpus' "$TMP/only3/slurm/bench.sbatch")
grep -q -- ' --gpus 1 --shard ' "$TMP/only3/slurm/bench.sbatch" && [ "$n" -eq 1 ] && echo "ok: bench's own --gpus is passed on alone" ||
  { echo "FAIL: --gpus in the script:"; grep -- --gpus "$TMP/only3/slurm/bench.sbatch"; failures=$((failures + 1)); }
expect_exit 2 "--shards 0" -- "$CUTEGEN" bench --slurm --shards 0 "${BENCH_ARGS[@]}" --run-dir "$TMP/bad"
expect_exit 2 "--slurm with --shard" -- "$CUTEGEN" bench --slurm --shard 0/2 "${BENCH_ARGS[@]}" --run-dir "$TMP/bad"
expect_exit 2 "a bad --slurm-time" -- "$CUTEGEN" bench --slurm --slurm-time 4h "${BENCH_ARGS[@]}" --run-dir "$TMP/bad"
expect_grep 'HH:MM:SS' "$TMP/err" "the bad time says the format"
expect_exit 2 "--slurm-partition without --slurm" -- "$CUTEGEN" bench --slurm-partition debug "${BENCH_ARGS[@]}" --run-dir "$TMP/bad"
expect_exit 8 "sbatch missing" -- env PATH=/nonexistent "$CUTEGEN" bench --slurm "${BENCH_ARGS[@]}" --run-dir "$TMP/nosbatch"
expect_grep 'login node' "$TMP/err" "a missing sbatch says where to run"
expect_exit 2 "sbatch refuses a partition" -- "$CUTEGEN" bench --slurm --slurm-partition nope "${BENCH_ARGS[@]}" --run-dir "$TMP/refused"
expect_grep 'invalid partition' "$TMP/err" "sbatch's own words are shown"
expect_grep 'sinfo -s' "$TMP/err" "and what to do"

# The sweep: three shards on the cluster.
expect_exit 0 "bench --slurm --shards 3" -- "$CUTEGEN" bench --slurm --shards 3 "${BENCH_ARGS[@]}" --run-dir "$RUN"
cp "$TMP/out" "$TMP/submit.out"
job=$(sed -n 's/^slurm: *submitted job \([0-9][0-9]*\).*/\1/p' "$TMP/submit.out")
tests=$((tests + 1))
[ -n "$job" ] && echo "ok: submitted as job $job" || { echo "FAIL: no job id printed"; sed 's/^/  | /' "$TMP/submit.out"; failures=$((failures + 1)); job=0; }
expect_grep "script: +$RUN/slurm/bench\.sbatch" "$TMP/submit.out" "the script's path is printed"
expect_grep "outputs: +$RUN/slurm/${job}_<task>\.out" "$TMP/submit.out" "where the outputs go is printed"
expect_grep "cutegen report --merge '$RUN/shard-\*'" "$TMP/submit.out" "the report command is printed"
tests=$((tests + 1))
n=$(squeue -h -r -j "$job" -o %K | wc -l)
[ "$n" -eq 3 ] && echo "ok: the array job has three tasks" || { echo "FAIL: $n tasks queued"; failures=$((failures + 1)); }

# Task 1 holds on its second problem: requeue it there (Slurm kills the task's whole tree).
tests=$((tests + 1))
for i in $(seq 1 600); do grep -q ' held$' "$CALLS/task-1.log" 2>/dev/null && break; sleep 0.2; done
if grep -q ' held$' "$CALLS/task-1.log" 2>/dev/null; then echo "ok: task 1 is in the middle of its second problem"; else
  echo "FAIL: task 1 never reached its second problem"; slurm_cluster_logs; failures=$((failures + 1)); fi
first=$(awk '$3 == 0 { print $1; exit }' "$CALLS/task-1.log")
held=$(awk '$4 == "held" { print $1; exit }' "$CALLS/task-1.log")
expect_exit 0 "scontrol requeue of task 1" -- scontrol requeue "${job}_1"
slurm_release_requeued "${job}_1" 60
tests=$((tests + 1))
if slurm_wait_job "$job" 600; then echo "ok: every task finished"; else
  echo "FAIL: the array is still queued"; squeue; slurm_cluster_logs; failures=$((failures + 1)); fi
slurm_task_states "$job" >"$TMP/states"
tests=$((tests + 1))
[ "$(tr '\n' ' ' <"$TMP/states")" = "0 COMPLETED 1 COMPLETED 2 COMPLETED " ] && echo "ok: three tasks completed" ||
  { echo "FAIL: states: $(cat "$TMP/states")"; scontrol show job "$job" | grep -E 'JobId=|JobState=|Restarts='
    grep -E "JobId=[0-9]+ |_1|requeue|REQUEUE" "$SLURM_CLUSTER_DIR/log/slurmctld.log" | tail -20
    grep -v -i pmix "$SLURM_CLUSTER_DIR/log/slurmd.log" | tail -25; failures=$((failures + 1)); }

# Each array index ran its own shard, into its own directory, with its own output.
: >"$TMP/all"
for i in 0 1 2; do
  expect_grep "^cutegen bench: shard $i of 3 into $RUN/shard-$i \(job ${job}_$i, restart 0" "$RUN/slurm/${job}_$i.out" "task $i's output is at slurm/${job}_$i.out"
  expect_exit 0 "report of shard $i" -- "$CUTEGEN" report "$RUN/shard-$i" --format csv --out "$TMP/shard-$i.csv"
  python3 -c 'import csv, sys; [print(r["problem"], sys.argv[2]) for r in csv.DictReader(open(sys.argv[1]))]' \
    "$TMP/shard-$i.csv" "$i" >>"$TMP/all"
done
tests=$((tests + 1))
sort "$TMP/all" -o "$TMP/all"
want=$(for p in $PROBLEMS; do echo "$p.py"; done | sort | tr '\n' ' ')
got=$(awk '{ print $1 }' "$TMP/all" | sort | tr '\n' ' ')
if [ "$got" = "$want" ]; then echo "ok: the shards' problems are disjoint and complete"; else
  echo "FAIL: shards hold: $got; want each once: $want"; sed 's/^/  | /' "$TMP/all"; failures=$((failures + 1)); fi
tests=$((tests + 1))
counts=$(awk '{ n[$2]++ } END { print n[0] + 0, n[1] + 0, n[2] + 0 }' "$TMP/all")
[ "$counts" = "3 2 2" ] && echo "ok: shard sizes 3, 2, 2 (problem i to shard i mod 3)" || { echo "FAIL: shard sizes $counts"; failures=$((failures + 1)); }
tests=$((tests + 1))
wrong=$(for t in 0 1 2; do awk -v t="$t" '{ print $1, t }' "$CALLS/task-$t.log" 2>/dev/null; done | sort -u | grep -v -x -F -f "$TMP/all")
[ -z "$wrong" ] && echo "ok: every task asked the model only about its own shard's problems" || { echo "FAIL: $wrong"; failures=$((failures + 1)); }

# The requeued task resumed its shard.
expect_grep "restart 1" "$RUN/slurm/${job}_1.out" "task 1's second attempt appended to its output"
tests=$((tests + 1))
again=$(awk -v p="$first" '$1 == p && $3 == 1' "$CALLS/task-1.log" | wc -l)
before=$(awk -v p="$first" '$1 == p && $3 == 0' "$CALLS/task-1.log" | wc -l)
if [ -n "$first" ] && [ "$before" -ge 1 ] && [ "$again" -eq 0 ]; then echo "ok: $first, finished before the requeue, was not asked for again"; else
  echo "FAIL: $first: $before calls before the requeue, $again after"; sed 's/^/  | /' "$CALLS/task-1.log"; failures=$((failures + 1)); fi
tests=$((tests + 1))
if [ -n "$held" ] && awk -v p="$held" '$1 == p && $3 == 1 { f = 1 } END { exit !f }' "$CALLS/task-1.log"; then
  echo "ok: $held, interrupted, was finished by the second attempt"; else echo "FAIL: $held was not taken up again"; failures=$((failures + 1)); fi

# The merge sees every problem once, each correct.
expect_exit 0 "report --merge of the shards" -- "$CUTEGEN" report --merge "$RUN/shard-*" --format csv --out "$TMP/merged.csv"
tests=$((tests + 1))
merged=$(python3 -c 'import csv, sys; r = list(csv.DictReader(open(sys.argv[1])))
print(len(r), len({x["problem"] for x in r}), sum(x["correct"] in ("1", "yes", "true") for x in r))' "$TMP/merged.csv")
[ "$merged" = "7 7 7" ] && echo "ok: the merged report has 7 problems, each once, each correct" || { echo "FAIL: merged report: $merged"; failures=$((failures + 1)); }
expect_exit 0 "report --merge, markdown" -- "$CUTEGEN" report --merge "$RUN/shard-*"
expect_grep '^\| all \| 7 \| 7 \(100%\)' "$TMP/out" "the merged summary counts seven"
finish
