#!/usr/bin/env bash
# GPU tests: run on a machine with an NVIDIA GPU, CUDA, PyTorch and CUTLASS.
# Judges every example kernel against its KernelBench problem, every adversarial kernel
# (each must get the verdict its `// expect:` line names) and every good kernel (ok),
# then prints a table of what ran and what it gave. Exit 0 only if every expectation held.
# "final": the final timing (`cutegen eval --final`: the kernel loaded into the reference
# process and timed there interleaved with PyTorch) of examples/kernels/relu.cu (or
# $FINAL_KERNELS), its speedup printed next to the two-process one.
#
#   tests/gpu/run.sh [--kernelbench DIR] [--only adversarial|good|examples|final] [--out DIR]
# Environment: CUTEGEN (the binary, default build/cutegen), CUTLASS_DIR, CUTEGEN_PYTHON.
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
KB=${KB:-../shared/kernelbench}
ONLY=""
JOBS=${JOBS:-1}
OUT=${OUT_DIR:-/tmp/cutegen-gpu-tests}
while [ $# -gt 0 ]; do
  case "$1" in
    --kernelbench) KB=$2; shift 2 ;;
    --only) ONLY=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    -j|--jobs) JOBS=$2; shift 2 ;;
    *) echo "usage: $0 [--kernelbench DIR] [--only adversarial|good|examples|final] [--out DIR] [-j N]"; exit 2 ;;
  esac
done
CUTEGEN=${CUTEGEN:-$ROOT/build/cutegen}
mkdir -p "$OUT"
if ! "$CUTEGEN" doctor >"$OUT/doctor.txt" 2>&1; then
  cat "$OUT/doctor.txt"
  echo "SKIP: the GPU tests need what 'cutegen doctor' lists as missing"
  exit 77
fi
cat "$OUT/doctor.txt"

mkdir -p "$OUT/results"
rm -f "$OUT"/results/*
# judge KERNEL TASK EXPECT [extra eval flags...]
judge() {
  local kernel=$1 task=$2 expect=$3; shift 3
  local name; name=$(basename "$kernel" .cu)
  local json="$OUT/${TAG:-}$(basename "$(dirname "$kernel")")-$name.json"
  local t0; t0=$(date +%s%N)
  "$CUTEGEN" eval --task "$task" --kernel "$kernel" --json -q "$@" >"$json" 2>"$json.err"
  local rc=$?
  local secs; secs=$(( ($(date +%s%N) - t0) / 1000000 ))
  local got; got=$(python3 -c 'import json,sys
try:
    r=json.load(open(sys.argv[1]))
except Exception:
    print("none"); sys.exit()
print(r.get("verdict") or ("no_entry_point" if r.get("no_entry_point") else "error:%s" % r.get("exit_code")))' "$json")
  if [ "$expect" = "no_entry_point" ] && grep -q '"no_entry_point": true' "$json"; then got=no_entry_point; fi
  local speed; speed=$(python3 -c 'import json,sys
try:
    r=json.load(open(sys.argv[1])); s=r.get("speedup",{}); k=r.get("kernel_time",{})
    print("%.4f ms  eager %.3fx  compile %s" % (k.get("median_ms",float("nan")), s.get("eager",float("nan")), ("%.3fx" % s["compile"]) if "compile" in s else "-"))
except Exception:
    print("-")' "$json")
  local ok=FAIL
  [ "$got" = "$expect" ] && ok=ok
  local table="$OUT/results/${TAG:-}$(basename "$(dirname "$kernel")")-$name.txt"
  printf '%-5s %-28s expect %-15s got %-15s rc=%-2s %7sms  %s\n' "$ok" "$name" "$expect" "$got" "$rc" "$secs" "$speed" | tee -a "$table"
  if [ "$ok" = FAIL ]; then
    python3 -c 'import json,sys
try:
    r=json.load(open(sys.argv[1])); print("      message:", (r.get("message") or r.get("error") or "")[:600])
except Exception: pass' "$json" | tee -a "$table"
    tail -5 "$json.err" | sed 's/^/      /' | tee -a "$table"
  fi
}

expect_of() { sed -n 's|^// expect: *\([a-z_]*\).*|\1|p' "$1" | head -1; }
problem_of() { sed -n 's|^// problem: *\([^ ]*\).*|\1|p' "$1" | head -1; }

if [ -z "$ONLY" ] || [ "$ONLY" = examples ]; then
  for k in examples/kernels/*.cu; do
    p=$(problem_of "$k")
    [ -n "$p" ] || { echo "SKIP $k: no '// problem:' line"; continue; }
    case "$p" in level*) task="$KB/$p" ;; *) task="$p" ;; esac
    [ -f "$task" ] || { echo "SKIP $k: problem $task not found"; continue; }
    judge "$k" "$task" ok --trials "${TRIALS:-5}"
  done
fi
if [ -z "$ONLY" ] || [ "$ONLY" = final ]; then
  for k in ${FINAL_KERNELS:-examples/kernels/relu.cu}; do
    p=$(problem_of "$k")
    case "$p" in level*) task="$KB/$p" ;; *) task="${p:-$small}" ;; esac
    [ -f "$task" ] || { echo "SKIP final $k: problem $task not found"; continue; }
    TAG=final- judge "$k" "$task" ok --trials 3 --final
    python3 - "$OUT/final-$(basename "$(dirname "$k")")-$(basename "$k" .cu).json" <<'PY' | tee -a "$OUT/results/final-$(basename "$(dirname "$k")")-$(basename "$k" .cu).txt"
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:
    print("      final: no report (%s)" % e); sys.exit()
f, s, k = r.get("final") or {}, r.get("speedup") or {}, r.get("kernel_time") or {}
if f.get("verdict") != "ok":
    print("      final: %s" % (f.get("error") or f.get("message") or "not run")); sys.exit()
i, fs = f["interleaved"], f.get("speedup") or {}
def side(name):
    st = i["speedup"].get(name)
    if not st:
        return "%s -" % name
    return "%s %.3fx [%.3f..%.3f over %d rounds]" % (name, st["median"], st["min"], st["max"], len(st["rounds"]))
print("      final (one process, interleaved): kernel %.4f ms, %s, %s" % (f["kernel_time"]["median_ms"], side("eager"), side("compile")))
print("      two processes (worker, reference): kernel %.4f ms, eager %.3fx, compile %s" % (
    k.get("median_ms", float("nan")), s.get("eager", float("nan")),
    ("%.3fx" % s["compile"]) if "compile" in s else "-"))
PY
  done
fi
small=examples/problems/relu_small.py
if [ -z "$ONLY" ] || [ "$ONLY" = good ]; then
  for k in tests/kernels/good/*.cu; do
    p=$(problem_of "$k"); task=${p:-$small}
    case "$task" in level*) task="$KB/$task" ;; esac
    judge "$k" "$task" "$(expect_of "$k")" --no-compile --iters 20 --warmup 3 --timeout 20 &
    while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
  done
  wait
fi
if [ -z "$ONLY" ] || [ "$ONLY" = adversarial ]; then
  for k in tests/kernels/adversarial/*.cu; do
    p=$(problem_of "$k"); task=${p:-$small}
    case "$task" in level*) task="$KB/$task" ;; esac
    judge "$k" "$task" "$(expect_of "$k")" --no-compile --iters 20 --warmup 3 --timeout 20 &
    while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
  done
  wait
  # and by its timing: l2_persist.cu, evict-last loads, against its plain twin (alone on the GPU)
  CG="$CUTEGEN" tests/gpu/l2_persist.sh >"$OUT/l2_persist.txt" 2>&1
  tail -1 "$OUT/l2_persist.txt" >"$OUT/results/timing-l2_persist.txt"
fi
cat "$OUT"/results/*.txt >"$OUT/table.txt" 2>/dev/null
pass=$(grep -c '^ok ' "$OUT/table.txt")
fail=$(grep -c '^FAIL ' "$OUT/table.txt")
echo
echo "GPU tests: $pass passed, $fail failed (table: $OUT/table.txt)"
[ "$fail" -eq 0 ]
