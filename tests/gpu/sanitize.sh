#!/usr/bin/env bash
# GPU test: the built-in recipes' kernels that synchronise through more than a CTA (the
# persistent prefetching clusters of recipes/norm.cu and recipes/softmax_cluster.cu, and
# norm.cu's groups of CTAs exchanging statistics through the workspace), and the scans'
# double-buffered shared memory (recipes/scan.cu; a problem's "sanitize-variants: REGEX"
# line picks its variants), under
# compute-sanitizer's memcheck, racecheck and synccheck. For each problem of
# tests/gpu/problems/ (sized so that such variants exist, small enough for the tools):
# `cutegen run` with no model computes its spec (and judges variant 0); then the first
# SAN_PER_PROBLEM (2) variants `cutegen recipe --list` shows with a cluster or a prefetch
# are generated, and for the first prefetching cluster also a copy edited into a group of
# CTAs (CGR_CLUSTER 1, CGR_GROUP = its cluster size: the workspace exchange, which no small
# problem's variants reach); each runs one correctness trial under each tool.
# Prints a line per (kernel, tool); exits 0 only if every run passed its trial and the tool
# reported no error.
#   tests/gpu/sanitize.sh [--out DIR] [PROBLEM.py...]
#   (SAN_PER_PROBLEM=N variants a problem; SAN_PATTERN=REGEX picks them instead of the
#   default or the problem's own line; SAN_TIMEOUT=S a tool run; SAN_ALSO="CGR_A 1;CGR_B 2":
#   each variant also with each of those #defines, lab forms: in place of every line
#   defining the same macro (the generator's and the template's default), else in front,
#   after those of the problem's own "sanitize-also: CGR_A 1;..." line;
#   SAN_TOOLS="memcheck": the tools, default all three)
# Needs: a GPU, compute-sanitizer, PyTorch, CUTLASS (skips, exit 77, when one is missing).
# The tool wraps only the worker (CUTEGEN_WORKER, below): session 8's run of the whole
# `cutegen eval` under the tool checked nothing (docs/perf.md, 2026-12-03 13:36).
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
# Only the worker (the process that runs the kernel) runs under the tool: CUTEGEN_WORKER
# points cutegen eval at a wrapper that starts build/cutegen-worker under compute-sanitizer,
# with the tool's report in a log file a process (the worker's stdout carries its replies).
# Running `compute-sanitizer cutegen eval` instead reaches the worker only through the
# tool's child-process injection, which disabled itself on the H200 ("CUDA initialized
# before the Sanitizer", session 8); the reference process's PyTorch is never instrumented.
WORKER=${CUTEGEN_WORKER:-$(dirname "$CG")/cutegen-worker}
[ -x "$WORKER" ] || { echo "SKIP: no worker at $WORKER (build first, or set CUTEGEN_WORKER)"; exit 77; }
fail=0 ran=0
sanitize() {  # sanitize PROBLEM KERNEL LABEL
  local p=$1 k=$2 label=$3 tool base log rc errs summaries st why wrap
  for tool in ${SAN_TOOLS:-memcheck racecheck synccheck}; do
    base="$OUT/$(echo "$label" | tr -c 'A-Za-z0-9._-' '_').$tool"
    log="$base.txt"
    rm -f "$base".pid*.log
    wrap="$base.worker.sh"
    printf '#!/bin/sh\nexec compute-sanitizer --tool %s --error-exitcode 99 --log-file "%s.pid%%p.log" "%s" "$@"\n' \
      "$tool" "$base" "$WORKER" >"$wrap"
    chmod +x "$wrap"
    CUTEGEN_WORKER="$wrap" timeout "${SAN_TIMEOUT:-300}" "$CG" eval --task "$p" --kernel "$k" --no-time --trials 1 \
      --timeout 240 -q >"$log" 2>&1
    rc=$?
    cat "$base".pid*.log >>"$log" 2>/dev/null
    # memcheck and synccheck end with "ERROR SUMMARY: N errors", racecheck with "RACECHECK
    # SUMMARY: N hazards displayed (E errors, W warnings)"
    errs=$(grep -oE '(ERROR SUMMARY: [0-9]+ error|\([0-9]+ error)' "$log" | grep -oE '[0-9]+' | awk '{s += $1} END {print s + 0}')
    summaries=$(grep -cE '(ERROR|RACECHECK) SUMMARY' "$log")
    why=""
    grep -q 'The Sanitizer will be disabled' "$log" && why="(the tool disabled itself: $(grep -o 'Error: [^.]*' "$log" | head -1))"
    [ "$summaries" -eq 0 ] && why="$why (no tool summary: the worker did not run under the tool)"
    grep -q '^verdict: *ok' "$log" || why="$why (the trial did not pass: $(grep -m1 '^verdict' "$log"))"
    ran=$((ran + 1))
    if [ "$rc" -ne 0 ] || [ "$errs" -ne 0 ] || [ -n "$why" ]; then
      fail=$((fail + 1)); st=FAIL
    else
      st=ok
    fi
    printf '%-4s %-44s %-10s exit %-3s errors %-3s tool runs %-2s %s\n' "$st" "$label" "$tool" "$rc" "$errs" "$summaries" "$why"
  done
}
for p in "${problems[@]}"; do
  name=$(basename "$p" .py)
  rm -rf "$OUT/$name"
  env -u CUTEGEN_PROVIDER "$CG" run --task "$p" --run-dir "$OUT/$name" --variants 1 --no-final --no-compile -q \
    >"$OUT/$name.run.txt" 2>&1
  echo "== $name: run exit $?: $(grep -E '^(stopped|best):' "$OUT/$name.run.txt" | tr '\n' ' ')"
  python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("select spec_json from tasks").fetchone()[0])' \
    "$OUT/$name/run.db" >"$OUT/$name.spec.json" || { echo "FAIL $name: no spec in its run"; fail=$((fail + 1)); continue; }
  "$CG" recipe --spec "$OUT/$name.spec.json" --list >"$OUT/$name.list.txt" 2>&1
  grouped=0
  # the variants checked: those with a cluster or a bulk copy, or what the problem's
  # "sanitize-variants: REGEX" line asks for
  pat=${SAN_PATTERN:-$(sed -n 's/^ *sanitize-variants: *//p' "$p" | head -1)}
  for v in $(grep -E "^variant [0-9]+: .*(${pat:-cluster=|prefetch})" "$OUT/$name.list.txt" | head -"${SAN_PER_PROBLEM:-2}" |
             sed 's/^variant \([0-9]*\):.*/\1/'); do
    k="$OUT/$name.v$v.cu"
    "$CG" recipe --spec "$OUT/$name.spec.json" --variant "$v" --out "$k" >/dev/null || { echo "FAIL $name v$v: generation"; fail=$((fail + 1)); continue; }
    sanitize "$p" "$k" "$name.v$v ($(grep '^variant '"$v"':' "$OUT/$name.list.txt" | cut -d: -f2 | cut -c2-30))"
    # the problem's "sanitize-also: CGR_A 1;..." line, then SAN_ALSO's
    own=$(sed -n 's/^ *sanitize-also: *//p' "$p" | head -1)
    IFS=';' read -r -a also <<<"${own}${own:+${SAN_ALSO:+;}}${SAN_ALSO:-}"
    for i in "${!also[@]}"; do  # lab forms of the same kernel: the #define replaced, or put in front
      macro=${also[$i]%% *}
      if grep -q "^#define $macro " "$k"; then
        sed "s|^#define $macro .*|#define ${also[$i]}|" "$k" >"$OUT/$name.v$v.also$i.cu"
      else
        { echo "#define ${also[$i]}"; cat "$k"; } >"$OUT/$name.v$v.also$i.cu"
      fi
      sanitize "$p" "$OUT/$name.v$v.also$i.cu" "$name.v$v with ${also[$i]}"
    done
    cl=$(sed -n 's/^#define CGR_CLUSTER \([0-9]*\).*/\1/p' "$k" | head -1)
    if [ "$grouped" = 0 ] && grep -q '^#define CGR_ROWS_PREFETCH 1' "$k" && [ "${cl:-1}" -gt 1 ]; then
      g="$OUT/$name.v$v.group$cl.cu"
      { echo "#define CGR_GROUP $cl"; sed "s/^#define CGR_CLUSTER [0-9]*/#define CGR_CLUSTER 1/" "$k"; } >"$g"
      sanitize "$p" "$g" "$name.v$v as a group of $cl"
      grouped=1
    fi
  done
done
echo "sanitize: $ran tool runs, $fail failed"
[ "$ran" -gt 0 ] || { echo "sanitize: no kernel with a cluster, a bulk copy or a group was found"; exit 1; }
[ "$fail" -eq 0 ]
