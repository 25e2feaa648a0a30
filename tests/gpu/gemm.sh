#!/usr/bin/env bash
# The GEMM recipe variants on the GPU: for each KernelBench problem the GEMM family covers,
# every variant is generated from the task spec and judged by cutegen eval (correctness
# on fresh trials, then timing against eager PyTorch); one line per variant: verdict,
# kernel median, eager median, speed-up, worst error. Start here on a GPU host:
#   tests/gpu/gemm.sh                      # a first check: 1, 8, 16, 17, 6, 4, 14, l2 86 99 22
#   GEMM_PROBLEMS="level1/1 level2/12" GEMM_VARIANTS="0 3" tests/gpu/gemm.sh
# Specs: $SPECS/<level>/<name>.json (cutegen eval caches them too, as
# ~/.cache/cutegen/tasks/*-spec.json); problems under $KB. Output also in $OUT/gemm.txt.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/cutegen-gemm}
KB=${KB:-.deps/kernelbench}
[ -d "$KB" ] || KB=../shared/kernelbench
SPECS=${SPECS:-/work/kb-specs}
CG=build/cutegen
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p "$OUT"
problems=${GEMM_PROBLEMS:-level1/1 level1/8 level1/16 level1/17 level1/6 level1/4 level1/14 level2/86 level2/99 level2/22}
for pn in $problems; do
  level=${pn%%/*} n=${pn##*/}
  task=$(ls "$KB/$level/${n}_"*.py 2>/dev/null | head -1)
  spec=$(ls "$SPECS/$level/${n}_"*.json 2>/dev/null | head -1)
  [ -n "$task" ] && [ -n "$spec" ] || { echo "== $pn: no task or spec"; continue; }
  echo "== $level/$(basename "$task")" | tee -a "$OUT/gemm.txt"
  $CG recipe --spec "$spec" --list | grep -E '^(product|epilogue|row reduction|variant)' | tee -a "$OUT/gemm.txt"
  nv=$($CG recipe --spec "$spec" --list | grep -c '^variant ')
  for k in ${GEMM_VARIANTS:-$(seq 0 $((nv - 1)))}; do
    cu="$OUT/$(basename "$task" .py).v$k.cu"
    $CG recipe --spec "$spec" --variant "$k" --out "$cu" >/dev/null || continue
    $CG eval --task "$task" --kernel "$cu" --no-compile --json >"$OUT/$(basename "$cu" .cu).json" 2>"$OUT/$(basename "$cu" .cu).err"
    python3 - "$OUT/$(basename "$cu" .cu).json" "$k" <<'PY' | tee -a "$OUT/gemm.txt"
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:  # noqa: BLE001
    print(f"  v{sys.argv[2]}: no report ({e})"); sys.exit()
kt = (r.get("kernel_time") or {}).get("median_ms")
eg = ((r.get("baseline") or {}).get("eager") or {}).get("median_ms")
sp = (r.get("speedup") or {}).get("eager")
err = max([o.get("max_abs_err", 0) or 0 for t in r.get("trials", []) for o in (t.get("outputs") or [])] or [0])
fmt = lambda v: "-" if v is None else f"{v:.3f}"
print(f"  v{sys.argv[2]}: {r.get('verdict')}  kernel {fmt(kt)} ms  eager {fmt(eg)} ms  speed-up {fmt(sp)}  max abs err {err:.3g}  {r.get('message', '')[:80]}")
PY
  done
done
