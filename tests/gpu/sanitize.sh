#!/usr/bin/env bash
# GPU test: the built-in recipes' kernels that synchronise through more than a CTA (the
# persistent prefetching clusters, the groups of CTAs exchanging statistics through the
# workspace) under compute-sanitizer's memcheck, racecheck and synccheck. For each problem
# of tests/gpu/problems/ (sized so that those variants come first): `cutegen run` with no
# model (the recipes) judges its first variants, then each judged kernel that uses a
# cluster, a bulk copy or a group runs one correctness trial under each tool.
# Prints a line per (kernel, tool) and exits 0 only if every tool reported no error.
#   tests/gpu/sanitize.sh [--out DIR] [PROBLEM.py...]
# Needs: a GPU, compute-sanitizer, PyTorch, CUTLASS (skips, exit 77, when one is missing).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=/tmp/cutegen-sanitize
if [ "${1:-}" = --out ]; then OUT=$2; shift 2; fi
CG=${CUTEGEN:-$PWD/build/cutegen}
export PATH=/usr/local/cuda/bin:$PATH
problems=("$@")
[ ${#problems[@]} -gt 0 ] || problems=(tests/gpu/problems/*.py)
command -v compute-sanitizer >/dev/null || { echo "SKIP: no compute-sanitizer on PATH"; exit 77; }
"$CG" doctor >/dev/null 2>&1 || { echo "SKIP: cutegen doctor reports something missing (GPU, torch, CUTLASS)"; exit 77; }
mkdir -p "$OUT"
# only the worker (the process that runs the kernel) under the tool, where the tool can say
# so: the reference process's PyTorch under memcheck takes minutes
filter=()
compute-sanitizer --help 2>&1 | grep -q -- --target-processes-filter && filter=(--target-processes-filter cutegen-worker)
fail=0 ran=0
for p in "${problems[@]}"; do
  name=$(basename "$p" .py)
  rm -rf "$OUT/$name"
  env -u CUTEGEN_PROVIDER "$CG" run --task "$p" --run-dir "$OUT/$name" --variants "${SAN_VARIANTS:-2}" --no-final \
    --no-compile -q >"$OUT/$name.run.txt" 2>&1
  echo "== $name: run exit $?: $(grep -E '^(stopped|best):' "$OUT/$name.run.txt" | tr '\n' ' ')"
  for k in "$OUT/$name"/artifacts/nodes/*/kernel.cu; do
    [ -f "$k" ] || continue
    grep -qE '^#define CGR_(ROWS_PREFETCH|PREFETCH) 1|^#define CGR_GROUP [0-9]*[02-9]|^#define CGR_CLUSTER ([2-9]|1[0-6])' "$k" || continue
    node=$(basename "$(dirname "$k")")
    what=$(grep -oE '^#define CGR_(GROUP|CLUSTER|ROWS_PREFETCH|PREFETCH) [0-9]+' "$k" | sed 's/#define CGR_//' | tr '\n' ' ')
    for tool in memcheck racecheck synccheck; do
      log="$OUT/$name.$node.$tool.txt"
      timeout "${SAN_TIMEOUT:-300}" compute-sanitizer --tool "$tool" --target-processes all "${filter[@]}" --error-exitcode 99 \
        "$CG" eval --task "$p" --kernel "$k" --no-time --trials 1 --timeout 240 -q >"$log" 2>&1
      rc=$?
      errs=$(grep -oE 'ERROR SUMMARY: [0-9]+ error' "$log" | awk '{s += $3} END {print s + 0}')
      summaries=$(grep -c 'ERROR SUMMARY' "$log")
      verdict=$(grep -oE '"?verdict"?:? *"?[a-z_]+' "$log" | head -1)
      ran=$((ran + 1))
      if [ "$rc" -ne 0 ] || [ "$errs" -ne 0 ] || [ "$summaries" -eq 0 ]; then
        fail=$((fail + 1)); st=FAIL
      else
        st=ok
      fi
      printf '%-4s %-28s node %-4s %-10s exit %-3s errors %-3s summaries %s  (%s) %s\n' "$st" "$name" "$node" "$tool" \
        "$rc" "$errs" "$summaries" "$what" "$verdict"
    done
  done
done
echo "sanitize: $ran tool runs, $fail failed"
[ "$ran" -gt 0 ] || { echo "sanitize: no kernel with a cluster, a bulk copy or a group was judged"; exit 1; }
[ "$fail" -eq 0 ]
