#!/usr/bin/env bash
# tests/gpu/harness_checks.sh: the judging cases added on 2026-12-03, one cutegen eval
# each with the verdict expected (GPU host): a 0-dim output (a loss), a kernel more exact
# than PyTorch's fp32 reference (passes through the float64 arbitration), the same kernel
# made 1e-3 relative wrong (must still fail), and two old adversarial kernels.
#   tests/gpu/harness_checks.sh [KB_DIR]      prints "ok|FAIL kernel: verdict (expected ...)"
set -uo pipefail
cd "$(dirname "$0")/../.."
KB=${1:-.deps/kernelbench}
CG=${CG:-build/cutegen}
pass=0 fail=0
for k in tests/kernels/good/huber_scalar.cu tests/kernels/good/rowsum_f64.cu \
         tests/kernels/adversarial/rowsum_off.cu tests/kernels/adversarial/fp16_compute.cu \
         tests/kernels/adversarial/zeros.cu; do
  p=$(sed -n 's|^// problem: *\([^ ]*\).*|\1|p' "$k" | head -1)
  want=$(sed -n 's|^// expect: *\([a-z_]*\).*|\1|p' "$k" | head -1)
  case "$p" in level*) p="$KB/$p" ;; esac
  json=$(timeout 300 $CG eval --task "$p" --kernel "$k" --no-baseline --iters 5 --warmup 1 --trials 2 -q --json 2>&1)
  got=$(printf '%s' "$json" | python3 -c 'import json,sys
try:
    r = json.loads(sys.stdin.read()); print(r.get("verdict", "?"))
except ValueError:
    print("unparsable")')
  why=$(printf '%s' "$json" | python3 -c 'import json,sys
try:
    r = json.loads(sys.stdin.read())
except ValueError:
    sys.exit()
for t in r.get("trials", []):
    for o in t.get("outputs", []):
        print("   ", o.get("against", "float32"), "max abs err %.3g" % o.get("max_abs_err", -1),
              "reference err %s" % o.get("reference_max_abs_err", "-"), "bad", o.get("bad_count"))' | head -2)
  if [ "$got" = "$want" ]; then pass=$((pass + 1)); echo "ok   $(basename "$k"): $got"; else
    fail=$((fail + 1)); echo "FAIL $(basename "$k"): $got (expected $want)"; printf '%s\n' "$json" | tail -c 1500; fi
  [ -n "$why" ] && echo "$why"
done
echo "harness checks: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
