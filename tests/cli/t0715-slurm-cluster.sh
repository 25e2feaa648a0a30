#!/usr/bin/env bash
# The one-node Slurm cluster of tests/cli/slurm_cluster.sh, and the Slurm behaviour that
# `cutegen bench --slurm`'s batch script relies on, checked on the real daemons: array
# indexing, --gres=gpu:G scheduled per task, #SBATCH values quoted as sbatch reads them
# (a space, '#', '%%' in an output path), output appended across a requeue,
# SLURM_RESTART_COUNT, a requeue of a running task ending its whole process tree (a
# child in its own session too, as cutegen's children are), and the daemons gone after
# slurm_cluster_stop. Also: the helper skips with its reason when it cannot run.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/slurm_cluster.sh"

# Not root: a SKIP line that says why (checked first: it needs no cluster).
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null && command -v slurmd >/dev/null 2>&1; then
  tests=$((tests + 1))
  out=$(cd / && setpriv --reuid=65534 --regid=65534 --clear-groups env TMPDIR=/tmp bash -c \
    ". '$SRC/tests/cli/lib.sh'; . '$SRC/tests/cli/slurm_cluster.sh'; slurm_cluster_start" 2>&1)
  rc=$?
  if [ "$rc" -eq 77 ] && echo "$out" | grep -q '^SKIP: Slurm test cluster: slurmd must run as root'; then
    echo "ok: not root, the helper skips and says why"
  else
    echo "FAIL: not root: exit $rc: $out"; failures=$((failures + 1))
  fi
fi

# A process that is gone or a zombie (where nothing reaps orphans) is not running.
running() { [ -r "/proc/$1/stat" ] && [ "$(sed 's/.*) //' "/proc/$1/stat" | cut -c1)" != Z ]; }

slurm_cluster_start 8 4
tests=$((tests + 1))
if awk -v s="$SLURM_CLUSTER_START_S" 'BEGIN { exit !(s < 30) }'; then echo "ok: the cluster started in $SLURM_CLUSTER_START_S s"; else
  echo "FAIL: the cluster took $SLURM_CLUSTER_START_S s to start"; failures=$((failures + 1)); fi
sinfo -h -o '%c %G %P %t' >"$TMP/sinfo"
expect_grep '^8 gpu:4 debug\* idle$' "$TMP/sinfo" "sinfo: one idle node, 8 CPUs, 4 GPUs, the default partition"

# An array of three, one GPU each, output to a directory whose name needs quoting.
OUTD="$TMP/out dir #1 100%"
mkdir -p "$OUTD"
cat >"$TMP/array.sh" <<EOF
#!/bin/sh
#SBATCH --array=0-2
#SBATCH --requeue
#SBATCH --open-mode=append
#SBATCH --gres=gpu:1
#SBATCH --output="$TMP/out dir #1 100%%/%A_%a.out"
echo "task \$SLURM_ARRAY_TASK_ID of \$SLURM_ARRAY_JOB_ID restart \${SLURM_RESTART_COUNT:-0} gpu \$CUDA_VISIBLE_DEVICES"
sleep 1
EOF
expect_exit 0 "sbatch an array job" -- sbatch --parsable "$TMP/array.sh"
job=$(cat "$TMP/out")
tests=$((tests + 1))
if slurm_wait_job "$job" 60; then echo "ok: the array finished"; else echo "FAIL: the array is still queued"; squeue; failures=$((failures + 1)); fi
slurm_task_states "$job" >"$TMP/states"
tests=$((tests + 1))
[ "$(tr '\n' ' ' <"$TMP/states")" = "0 COMPLETED 1 COMPLETED 2 COMPLETED " ] && echo "ok: three tasks completed" ||
  { echo "FAIL: states: $(cat "$TMP/states")"; failures=$((failures + 1)); }
for i in 0 1 2; do
  expect_grep "^task $i of $job restart 0 gpu [0-3]$" "$OUTD/${job}_$i.out" "task $i wrote its own output, with a GPU"
done
tests=$((tests + 1))
gpus=$(cat "$OUTD/${job}"_*.out | awk '{ print $NF }' | sort -u | wc -l)
[ "$gpus" -eq 3 ] && echo "ok: each task had its own GPU" || { echo "FAIL: $gpus distinct GPUs"; failures=$((failures + 1)); }

# Requeue a finished task: it runs again (a requeued job waits ~2 min to be eligible;
# StartTime=now lifts that), its output appended.
expect_exit 0 "scontrol requeue of a finished task" -- scontrol requeue "${job}_1"
slurm_release_requeued "${job}_1" 30
tests=$((tests + 1))
if slurm_wait_job "$job" 60; then echo "ok: the requeued task finished"; else echo "FAIL: the requeued task is still queued"; failures=$((failures + 1)); fi
tests=$((tests + 1))
if [ "$(grep -c . "$OUTD/${job}_1.out")" -eq 2 ] && grep -q "^task 1 of $job restart 1 " "$OUTD/${job}_1.out"; then
  echo "ok: the second attempt appended to the same output, SLURM_RESTART_COUNT=1"
else echo "FAIL: output after requeue:"; sed 's/^/  | /' "$OUTD/${job}_1.out"; failures=$((failures + 1)); fi

# Requeue a running array task: its whole tree ends, a child in a session of its own
# included, and it runs again (released at once: slurm_release_requeued waits out the
# second in which slurmd revoked the task's credential, or the launch would fail).
cat >"$TMP/hold.sh" <<EOF
#!/bin/sh
#SBATCH --array=0
#SBATCH --requeue
#SBATCH --output=$TMP/hold-%A.out
if [ "\${SLURM_RESTART_COUNT:-0}" -eq 0 ]; then
  setsid sleep 300 </dev/null >/dev/null 2>&1 &
  echo \$! >$TMP/hold-child.pid
  sleep 300
fi
echo "attempt \${SLURM_RESTART_COUNT:-0}"
EOF
hold=$(sbatch --parsable "$TMP/hold.sh")
for i in $(seq 1 100); do [ -s "$TMP/hold-child.pid" ] && break; sleep 0.2; done
child=$(cat "$TMP/hold-child.pid" 2>/dev/null)
tests=$((tests + 1))
if [ -n "$child" ] && running "$child"; then echo "ok: the held task runs, its detached child is $child"; else
  echo "FAIL: the held task did not start"; squeue; failures=$((failures + 1)); fi
expect_exit 0 "scontrol requeue of a running task" -- scontrol requeue "${hold}_0"
tests=$((tests + 1))
slurm_release_requeued "${hold}_0" 30 && echo "ok: released once its old attempt was gone" || { echo "FAIL: the requeued task never came back to the queue"; failures=$((failures + 1)); }
for i in $(seq 1 100); do running "$child" || break; sleep 0.2; done
tests=$((tests + 1))
if [ -n "$child" ] && ! running "$child"; then echo "ok: the requeue ended the task's detached child too"; else
  echo "FAIL: process $child outlived its requeued task"; failures=$((failures + 1)); fi
slurm_wait_job "$hold" 60
expect_grep '^attempt 1$' "$TMP/hold-$hold.out" "the requeued task ran again"
tests=$((tests + 1))
[ "$(slurm_task_states "$hold")" = "0 COMPLETED" ] && echo "ok: and completed" || { echo "FAIL: $(slurm_task_states "$hold")"; failures=$((failures + 1)); }

pids=$_slurm_pids
slurm_cluster_stop
tests=$((tests + 1))
left=""
for p in $pids; do kill -0 "$p" 2>/dev/null && left="$left $p"; done
[ -z "$left" ] && echo "ok: slurm_cluster_stop ended munged, slurmctld and slurmd" || { echo "FAIL: still running:$left"; failures=$((failures + 1)); }
finish
