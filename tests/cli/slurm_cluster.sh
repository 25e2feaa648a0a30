# A real single-node Slurm cluster for a CLI test. Source it after lib.sh, then:
#
#   slurm_cluster_start [CPUS [GPUS]]
#
# starts munged, slurmctld and slurmd (as root: slurmd runs jobs as their user) with
# every key, socket, state, spool, log and pid file under one temporary directory, on
# ports nobody holds, with this host as the only node: CPUS CPUs (default 8, whatever the
# hardware has; SlurmdParameters=config_overrides) and GPUS GPUs (default 4: gres/gpu
# devices that are links to /dev/null, so that --gres=gpu:G is scheduled and counted
# for real and each task gets its own CUDA_VISIBLE_DEVICES), in one partition, "debug".
# It exports SLURM_CONF (sbatch, squeue, scontrol, sinfo and scancel then talk to this
# cluster), waits until sinfo shows the node idle, and stops everything at exit: jobs
# cancelled, then the daemons, by their process ids (a watchdog does it too if the test
# is killed outright). It skips the test (lib.sh's skip: a SKIP line, exit 77) when Slurm
# or munge is not installed, when not root, or when a daemon does not start, saying which
# and why, with the end of its log.
#
# Sets SLURM_CLUSTER_DIR, SLURM_NODE, SLURM_PARTITION and SLURM_CLUSTER_START_S (how long
# the start took). Also here: slurm_wait_job, slurm_release_requeued, slurm_task_states,
# slurm_cluster_logs.
# Accounting is off (no slurmdbd), so there is no sacct: finished jobs stay visible to
# squeue --states=all and scontrol for MinJobAge (an hour).

_slurm_pids=""      # munged slurmctld slurmd, in start order
_slurm_watchdog=""
_slurm_own_dir=""   # the cluster's directory when it is not under $TMP (removed at exit)

_slurm_tail() {  # FILE...: the end of each log, indented
  local f
  for f in "$@"; do
    [ -s "$f" ] || continue
    echo "  --- $(basename "$f"):"
    grep -v -E 'pmix|MPI: Cannot create context' "$f" | tail -n 8 | sed 's/^/  | /'
  done
}

slurm_cluster_logs() {  # the end of every daemon's log (for a failure message)
  [ -n "${SLURM_CLUSTER_DIR:-}" ] && _slurm_tail "$SLURM_CLUSTER_DIR"/log/*
}

slurm_cluster_stop() {
  [ -n "${SLURM_CLUSTER_DIR:-}" ] || return 0
  local p i alive
  if [ -n "$_slurm_pids" ] && [ -n "${SLURM_CONF:-}" ]; then
    # Jobs first, so that no job step outlives its slurmd.
    squeue -h --states=PENDING,RUNNING,SUSPENDED,COMPLETING,REQUEUED,CONFIGURING -o %A 2>/dev/null |
      sort -u | xargs -r scancel 2>/dev/null
    for i in $(seq 1 50); do
      [ -z "$(squeue -h -o %A 2>/dev/null)" ] && break
      sleep 0.1
    done
  fi
  # slurmd, slurmctld, munged: the reverse of the start order.
  for p in $(echo "$_slurm_pids" | awk '{ for (i = NF; i > 0; i--) print $i }'); do
    kill -TERM "$p" 2>/dev/null || continue
    for i in $(seq 1 50); do
      kill -0 "$p" 2>/dev/null || break
      sleep 0.1
    done
    alive=$(kill -0 "$p" 2>/dev/null && echo yes)
    [ -n "$alive" ] && kill -KILL "$p" 2>/dev/null
    wait "$p" 2>/dev/null
  done
  _slurm_pids=""
  [ -n "$_slurm_watchdog" ] && kill -KILL "$_slurm_watchdog" 2>/dev/null
  _slurm_watchdog=""
  [ -n "$_slurm_own_dir" ] && rm -rf "$_slurm_own_dir"
  _slurm_own_dir=""
}

# Puts slurm_cluster_stop before whatever the EXIT trap already does (lib.sh removes $TMP),
# and turns TERM and INT into an exit so that the trap runs when ctest times the test out.
_slurm_trap() {
  local prev=""
  eval "set -- $(trap -p EXIT)"
  [ $# -ge 3 ] && prev=$3
  trap "slurm_cluster_stop; $prev" EXIT
  trap 'exit 143' TERM
  trap 'exit 130' INT
}

_slurm_free_ports() {  # prints two TCP ports that are free now
  python3 -c 'import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("", 0))
print(" ".join(str(x.getsockname()[1]) for x in s))'
}

_slurm_alive_or_skip() {  # PID NAME LOG
  kill -0 "$1" 2>/dev/null && return 0
  wait "$1" 2>/dev/null
  local rc=$?
  echo "$2 exited (status $rc) while the cluster was starting; its log:"
  _slurm_tail "$3"
  skip "Slurm test cluster: $2 could not start (status $rc; its log is above)"
}

slurm_cluster_start() {
  local cpus=${1:-8} gpus=${2:-4} t0 missing="" c
  t0=$(date +%s.%N)
  for c in munged munge slurmctld slurmd sbatch squeue scontrol sinfo scancel python3; do
    command -v "$c" >/dev/null 2>&1 || [ -x "/usr/sbin/$c" ] || missing="$missing $c"
  done
  [ -z "$missing" ] || skip "Slurm test cluster: not installed:$missing (apt-get install slurmctld slurmd slurm-client munge; scripts/setup.sh installs them)"
  [ "$(id -u)" -eq 0 ] || skip "Slurm test cluster: slurmd must run as root to start jobs, and this test runs as $(id -un)"
  export PATH="$PATH:/usr/sbin:/sbin"

  # A short path: the munge socket's must fit in a sockaddr_un (108 bytes).
  local d=$TMP/slurm
  if [ ${#d} -gt 60 ]; then
    d=$(mktemp -d /tmp/cg-slurm.XXXXXX) || skip "Slurm test cluster: mktemp failed"
    _slurm_own_dir=$d
  fi
  mkdir -p "$d"/munge "$d"/state "$d"/spool "$d"/log "$d"/dev || skip "Slurm test cluster: cannot create $d"
  chmod 711 "$d" "$d"/munge
  SLURM_CLUSTER_DIR=$d
  _slurm_trap

  # Whatever Slurm settings the caller's environment holds (a test run inside a Slurm
  # job, say) must not reach this cluster.
  local v
  for v in $(env | sed -n 's/^\(SLURM_[A-Za-z0-9_]*\|SBATCH_[A-Za-z0-9_]*\|SQUEUE_[A-Za-z0-9_]*\|SCONTROL_[A-Za-z0-9_]*\|SINFO_[A-Za-z0-9_]*\)=.*/\1/p'); do
    case $v in SLURM_CLUSTER_*) ;; *) unset "$v" ;; esac
  done

  # munge: a fresh key and a daemon of our own on its own socket.
  head -c 1024 /dev/urandom >"$d/munge/munge.key" && chmod 400 "$d/munge/munge.key"
  munged --foreground --force --key-file="$d/munge/munge.key" --socket="$d/munge/munge.sock" \
    --pid-file="$d/munge/munged.pid" --seed-file="$d/munge/munged.seed" \
    </dev/null >"$d/log/munged.log" 2>&1 &
  _slurm_pids=$!
  local i
  for i in $(seq 1 50); do
    [ -S "$d/munge/munge.sock" ] && break
    _slurm_alive_or_skip "$_slurm_pids" munged "$d/log/munged.log"
    sleep 0.1
  done
  munge -n -S "$d/munge/munge.sock" 2>"$d/log/munge-check.log" | unmunge -S "$d/munge/munge.sock" >/dev/null 2>>"$d/log/munge-check.log" || {
    _slurm_tail "$d/log/munged.log" "$d/log/munge-check.log"
    skip "Slurm test cluster: munged started but a credential does not round-trip (its log is above)"
  }

  local ports ctld_port d_port node gres=""
  ports=$(_slurm_free_ports) || skip "Slurm test cluster: python3 could not find free TCP ports"
  read -r ctld_port d_port <<EOF
$ports
EOF
  node=$(hostname -s 2>/dev/null || hostname)
  [ -n "$node" ] || skip "Slurm test cluster: this host has no name (hostname prints nothing)"
  if [ "$gpus" -gt 0 ]; then
    for i in $(seq 0 $((gpus - 1))); do ln -s /dev/null "$d/dev/gpu$i"; done
    gres="Gres=gpu:$gpus"
    printf 'AutoDetect=off\nNodeName=%s Name=gpu File=%s/dev/gpu[0-%d]\n' "$node" "$d" $((gpus - 1)) >"$d/gres.conf"
  fi
  cat >"$d/slurm.conf" <<EOF
# A one-node cluster for cutegen's tests (tests/cli/slurm_cluster.sh).
ClusterName=cgtest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$d_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$d/munge/munge.sock
CredType=cred/munge
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/slurmd.pid
SlurmctldLogFile=$d/log/slurmctld.log
SlurmdLogFile=$d/log/slurmd.log
SlurmdParameters=config_overrides
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
MailProg=/bin/true
ReturnToService=2
MinJobAge=3600
GresTypes=gpu
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=1000 $gres State=UNKNOWN
PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
  export SLURM_CONF=$d/slurm.conf
  SLURM_NODE=$node
  SLURM_PARTITION=debug

  slurmctld -D -i -f "$SLURM_CONF" </dev/null >"$d/log/slurmctld.out" 2>&1 &
  local ctld=$!
  _slurm_pids="$_slurm_pids $ctld"
  slurmd -D -f "$SLURM_CONF" -N "$node" </dev/null >"$d/log/slurmd.out" 2>&1 &
  local sd=$!
  _slurm_pids="$_slurm_pids $sd"

  # A watchdog: if this test dies without running its trap (SIGKILL), the daemons follow.
  local me=$$ pids=$_slurm_pids
  ( trap '' TERM INT
    while kill -0 "$me" 2>/dev/null; do sleep 2; done
    kill -TERM $pids 2>/dev/null ) </dev/null >/dev/null 2>&1 &
  _slurm_watchdog=$!
  disown "$_slurm_watchdog" 2>/dev/null

  local state=""
  for i in $(seq 1 150); do  # 30 s
    _slurm_alive_or_skip "$ctld" slurmctld "$d/log/slurmctld.out"
    _slurm_alive_or_skip "$sd" slurmd "$d/log/slurmd.out"
    state=$(sinfo -h -n "$node" -o %t 2>/dev/null)
    [ "$state" = idle ] && break
    sleep 0.2
  done
  if [ "$state" != idle ]; then
    echo "the node is '${state:-not known to slurmctld}' after 30 s:"
    scontrol show node "$node" 2>&1 | grep -E 'State=|Reason=' | sed 's/^/  | /'
    _slurm_tail "$d/log/slurmctld.log" "$d/log/slurmd.log"
    skip "Slurm test cluster: the node never became idle (state '${state:-unknown}'; the daemons' logs are above)"
  fi
  SLURM_CLUSTER_START_S=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  echo "slurm: a one-node cluster ($node, $cpus CPUs, $gpus GPUs) is up in ${SLURM_CLUSTER_START_S} s ($d)"
}

# slurm_wait_job JOBID SECONDS: waits until no task of the job is pending, running or
# completing; 1 when time runs out.
slurm_wait_job() {
  local i n=$(($2 * 5))
  for i in $(seq 1 "$n"); do
    [ -z "$(squeue -h -j "$1" -o %i 2>/dev/null)" ] && return 0
    sleep 0.2
  done
  return 1
}

# slurm_release_requeued JOB SECONDS: call it right after `scontrol requeue JOB`. A
# requeued job (or array task, JOBID_I) is held for about two minutes before it may start
# again; this makes it eligible at once, but safely: only once it is back in the queue as
# pending, its last attempt's steps are gone from the node (slurmd's step sockets in the
# spool directory), and the clock has left the second of the requeue. slurmd revokes the
# job's credential at the requeue, with a time in whole seconds, and refuses a launch whose
# credential is from that second ("Job N already killed, do not launch batch job": the job
# fails). 1 when that did not happen in time.
slurm_release_requeued() {
  local i n=$(($2 * 5)) st id requeued
  requeued=$(date +%s)
  id=$(squeue -h -j "$1" -o %A 2>/dev/null | head -n 1)
  [ -n "$id" ] || return 1
  for i in $(seq 1 "$n"); do
    st=$(squeue -h -j "$1" -o %T 2>/dev/null)
    if [ "$st" = PENDING ] && ! _slurm_has_steps "$id" && [ "$(date +%s)" -gt "$requeued" ]; then
      scontrol update JobId="$1" StartTime=now >/dev/null 2>&1 && return 0
    fi
    sleep 0.2
  done
  return 1
}

_slurm_has_steps() {  # JOBID: whether slurmd still holds a step of the job
  local f
  for f in "$SLURM_CLUSTER_DIR"/spool/*_"$1".*; do
    [ -e "$f" ] && return 0
  done
  return 1
}

# slurm_task_states JOBID: "TASK STATE" a line for every task of an array job, sorted,
# finished ones included (squeue --states=all, while slurmctld still holds them).
slurm_task_states() {
  squeue -h --states=all -j "$1" -r -o '%K %T' 2>/dev/null | sort -n
}
