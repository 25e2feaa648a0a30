#!/usr/bin/env bash
# tests/gpu/l2_persist.sh: can a kernel keep its inputs in L2 from one timed call to the
# next? tests/kernels/adversarial/l2_persist.cu reads its 24 MiB input evict-last
# (persisting); its plain twin (ROWSUM_PERSIST 0, made here by sed) reads it without a
# policy. Both through `cutegen eval --final` (the worker's timing, then the reference
# process's interleaved one), with the harness's reset of persisting lines before each flush
# (the default) and, to show what the reset prevents, without it (CUTEGEN_L2_RESET=0).
# Passes when, with the reset, the persisting kernel is no faster than 0.85x its twin's time
# in both timings (GPU host).
#   tests/gpu/l2_persist.sh      prints "ok|FAIL l2_persist: ..." and the four times
set -uo pipefail
cd "$(dirname "$0")/../.."
CG=${CG:-build/cutegen}
k=tests/kernels/adversarial/l2_persist.cu
task=tests/gpu/problems/rowsum_l2.py
W=$(mktemp -d /tmp/l2persist.XXXXXX)
trap 'rm -rf "$W"' EXIT
sed 's/^#define ROWSUM_PERSIST 1.*/#define ROWSUM_PERSIST 0/' "$k" >"$W/rowsum_plain.cu"
grep -q '^#define ROWSUM_PERSIST 0' "$W/rowsum_plain.cu" || { echo "FAIL l2_persist: no ROWSUM_PERSIST line in $k"; exit 1; }
# times KERNEL: "VERDICT WORKER_MS FINAL_MS"
times() {
  $CG eval --task "$task" --kernel "$1" --no-baseline --final --final-rounds 6 --final-iters 10 \
    --trials 2 --warmup 5 --iters 60 -q --json 2>"$W/err" | python3 -c 'import json,sys
try:
    r = json.loads(sys.stdin.read())
except ValueError:
    print("unparsable nan nan"); sys.exit()
k = (r.get("kernel_time") or {}).get("median_ms", float("nan"))
f = ((r.get("final") or {}).get("kernel_time") or {}).get("median_ms", float("nan"))
print(r.get("verdict", "?"), k, f)'
}
read -r pv pw pf < <(times "$W/rowsum_plain.cu")
read -r xv xw xf < <(times "$k")
read -r nv nw nf < <(CUTEGEN_L2_RESET=0 times "$k")
printf 'l2_persist: plain twin %s worker %.4f ms final %.4f ms\n' "$pv" "$pw" "$pf"
printf 'l2_persist: evict-last %s worker %.4f ms final %.4f ms (reset before each flush)\n' "$xv" "$xw" "$xf"
printf 'l2_persist: evict-last %s worker %.4f ms final %.4f ms (no reset: CUTEGEN_L2_RESET=0)\n' "$nv" "$nw" "$nf"
python3 - "$pv" "$pw" "$pf" "$xv" "$xw" "$xf" "$nw" "$nf" <<'PY'
import math, sys
pv, pw, pf, xv, xw, xf, nw, nf = sys.argv[1], *map(float, sys.argv[2:4]), sys.argv[4], *map(float, sys.argv[5:9])
bad = []
if pv != "ok" or xv != "ok":
    bad.append("verdicts %s / %s (both should be ok)" % (pv, xv))
for name, x, p in (("worker", xw, pw), ("final", xf, pf)):
    if not (math.isfinite(x) and math.isfinite(p)) or x < 0.85 * p:
        bad.append("%s: %.4f ms against the twin's %.4f (%.2fx)" % (name, x, p, x / p if p else float("nan")))
kept = "without the reset it read %.2fx / %.2fx of the twin's time (worker / final)" % (nw / pw, nf / pf)
print(("FAIL l2_persist: " + "; ".join(bad) if bad else "ok   l2_persist: with the reset it times like its twin") + "; " + kept)
sys.exit(1 if bad else 0)
PY
