#!/usr/bin/env bash
# One GPU-host call that gathers what the closing notes report: cutegen doctor, a
# parallel prebuild of every kernel, the GPU test suite (tests/gpu/run.sh), profiler
# digests of an elementwise kernel, a GEMM and a reduction, and the build-speed bench.
# Everything lands in $OUT/evidence.tar.gz; short tables go to stdout.
#   tests/gpu/evidence.sh [suite|good|adversarial|examples] [specs] [agent] [profile] [recipes] [bench] [lab] [kbeval] [buildspeed]
#   (default: suite profile; suite is all three of good, adversarial, examples)
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/cutegen-evidence}
mkdir -p "$OUT/work"
export PATH=/usr/local/cuda/bin:$PATH
export CUTEGEN_CACHE_DIR=${CUTEGEN_CACHE_DIR:-/tmp/cutegen-cache}
KB=${KB:-.deps/kernelbench}
[ -d "$KB" ] || KB=../shared/kernelbench
sections=${*:-suite profile}

. tests/gpu/cutlass_wheel.sh  # CUTLASS from a carried wheel when none is configured
CG=build/cutegen
$CG doctor 2>&1 | tee "$OUT/doctor.txt"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv | tee -a "$OUT/doctor.txt"

case " $sections " in *" suite "*|*" good "*|*" adversarial "*|*" examples "*)
t0=$(date +%s)
$CG build --jobs "$(nproc)" --json -q examples/kernels/*.cu tests/kernels/good/*.cu \
  tests/kernels/adversarial/*.cu >"$OUT/prebuild.jsonl" 2>"$OUT/prebuild.err"
echo "prebuild of $(wc -l <"$OUT/prebuild.jsonl") kernels on $(nproc) cores: $(( $(date +%s) - t0 )) s"
python3 - "$OUT/prebuild.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    try:
        r = json.loads(line)
    except ValueError:
        continue
    print("  %-26s %-14s %-6s %6.2fs" % (r.get("kernel", "?").split("/")[-1], r.get("status"), r.get("mode", ""), r.get("seconds", 0)))
PY
;; esac

# If the default (split) build does not give a working kernel, say so and use plain.
$CG eval --task examples/problems/relu_small.py --kernel tests/kernels/good/relu_basic.cu \
  --no-baseline --iters 5 --warmup 1 --trials 1 -q --json >"$OUT/sanity.json" 2>&1
if ! grep -q '"verdict": "ok"' "$OUT/sanity.json"; then
  echo "WARNING: the split build failed the sanity eval; using CUTEGEN_BUILD_MODE=plain"
  head -c 3000 "$OUT/sanity.json"
  export CUTEGEN_BUILD_MODE=plain
else
  echo "sanity eval ok (split build): $(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["seconds"])' "$OUT/sanity.json")"
fi

# The real task specs of every level-1 and level-2 problem (the recipe tests' fixtures
# are checked against them), and which of them the built-in recipes cover.
case " $sections " in *" specs "*)
  timeout 400 python3 tests/gpu/dump_specs.py "$OUT/specs/level1" "$KB"/level1/*.py --budget-seconds ${SPEC_BUDGET:-150} \
    >"$OUT/specs-level1.log" 2>&1
  timeout 400 python3 tests/gpu/dump_specs.py "$OUT/specs/level2" "$KB"/level2/*.py --budget-seconds ${SPEC_BUDGET:-150} \
    >"$OUT/specs-level2.log" 2>&1
  tail -1 "$OUT/specs-level1.log"; tail -1 "$OUT/specs-level2.log"
  grep FAILED "$OUT"/specs-level*.log | head
  for f in "$OUT"/specs/level*/*.json; do
    printf '%s\t%s\n' "$(basename "$(dirname "$f")")/$(basename "$f" .json)" \
      "$($CG recipe --spec "$f" 2>&1 | grep -E '^(family|not covered)' | head -1)"
  done >"$OUT/coverage.tsv"
  echo "covered: $(grep -c 'family' "$OUT/coverage.tsv") of $(wc -l <"$OUT/coverage.tsv")" ;;
esac

case " $sections " in *" agent "*)
  OUT=$OUT/agent tests/gpu/agent.sh "$KB" 2>&1 | tee "$OUT/agent.log" | grep -v '^ok:' ;;
esac

case " $sections " in *" suite "*)
  KB=$KB tests/gpu/run.sh --kernelbench "$KB" --out "$OUT/suite" -j "${JOBS:-3}" >"$OUT/suite.log" 2>&1
  echo "suite exit $?"; cat "$OUT/suite/table.txt"; tail -1 "$OUT/suite.log" ;;
esac

for part in good adversarial examples; do
  case " $sections " in *" $part "*)
    KB=$KB tests/gpu/run.sh --kernelbench "$KB" --only "$part" --out "$OUT/$part" -j "${JOBS:-3}" >"$OUT/$part.log" 2>&1
    echo "$part exit $?"; cat "$OUT/$part/table.txt"; tail -1 "$OUT/$part.log" ;;
  esac
done

case " $sections " in *" profile "*)
  for spec in "relu examples/kernels/relu.cu examples/problems/relu_small.py" \
              "matmul examples/kernels/matmul.cu $KB/level1/1_Square_matrix_multiplication_.py" \
              "sum_dim examples/kernels/sum_dim.cu $KB/level1/47_Sum_reduction_over_a_dimension.py"; do
    set -- $spec
    t1=$(date +%s%N)
    timeout 300 $CG profile --task "$3" --kernel "$2" --work-dir "$OUT/work/profile-$1" -q \
      >"$OUT/profile-$1.txt" 2>&1
    rc=$?
    echo "== profile $1: exit $rc, $(( ($(date +%s%N) - t1) / 1000000 )) ms wall"
    cat "$OUT/profile-$1.txt" | head -40
  done ;;
esac

# The built-in recipes on the level-1 problems they cover (no model configured: run
# autotunes the recipe variants), then one report over all of them.
case " $sections " in *" recipes "*)
  mkdir -p "$OUT/runs"
  for n in ${RECIPE_PROBLEMS:-19 20 21 22 23 24 25 26 27 28 29 30 31 32 47 48 49 51 52 53 88}; do
    p=$(ls "$KB"/level1/${n}_*.py 2>/dev/null | head -1)
    [ -n "$p" ] || continue
    env -u CUTEGEN_PROVIDER timeout 600 $CG run --task "$p" --run-dir "$OUT/runs/$(basename "$p" .py)" -q \
      >"$OUT/runs/$(basename "$p" .py).txt" 2>&1
    echo "== recipes $(basename "$p"): exit $?: $(grep -E '^(stopped|best):' "$OUT/runs/$(basename "$p" .py).txt" | tr '\n' ' ')"
  done
  $CG report "$OUT"/runs/*/ --format md >"$OUT/recipes-report.md" 2>&1
  $CG report "$OUT"/runs/*/ --format html --out "$OUT/recipes-report.html" >/dev/null 2>&1
  sed -n '1,40p' "$OUT/recipes-report.md" ;;
esac

# BENCH_LIST=bench/sweeps/NAME.txt: the problems of a tracked list (it travels with the
# call, unlike an ignored file), one "level1/19_" a line.
if [ -n "${BENCH_LIST:-}" ]; then
  [ -f "$BENCH_LIST" ] || { echo "bench: no list $BENCH_LIST (see bench/sweeps/)"; BENCH_TASKS=""; }
  [ -f "$BENCH_LIST" ] && BENCH_TASKS=$(grep -v '^#' "$BENCH_LIST")
fi

# A BENCH_TASKS that is set but empty is a mistake (a list file that did not travel with
# the call, say): say so and skip the sweep rather than run all 200 problems.
if [ -n "${BENCH_TASKS+set}" ] && [ -z "${BENCH_TASKS//[[:space:]]/}" ]; then
  case " $sections " in *" bench "*)
    echo "bench: BENCH_TASKS is set but empty (did the file it was read from travel with the call?); skipping the sweep"
    sections=" ${sections} "; sections=${sections// bench / } ;;
  esac
fi

# A sweep with the built-in proposer (no model): cutegen bench over level-1 and level-2
# problems, its report, the export, and KernelBench's own eval of a few exported kernels.
case " $sections " in *" bench "*)
  t0=$(date +%s)
  # BENCH_TASKS="level1/19_ReLU level2/12_Gemm..." (or BENCH_LIST) picks problems one by
  # one, run in that order (--in-order: a list puts first what matters if the call is cut);
  # otherwise BENCH_LEVELS and BENCH_PROBLEMS (numbers) select from the tree.
  if [ -n "${BENCH_TASKS:-}" ]; then
    sel=(--in-order); for t in $BENCH_TASKS; do sel+=(--task "$(ls "$KB"/$t*.py | head -1)"); done
  else
    sel=(--kernelbench "$KB" --problems "${BENCH_PROBLEMS:-1-100}" --level "${BENCH_LEVELS:-1,2}")
  fi
  cpu0=$(head -1 /proc/stat)
  env -u CUTEGEN_PROVIDER timeout ${BENCH_TIMEOUT:-480} $CG bench "${sel[@]}" --jobs "${BENCH_JOBS:-6}" \
    --run-dir "$OUT/bench" --problem-timeout 300 ${BENCH_RUN_ARGS:-} >"$OUT/bench.out" 2>"$OUT/bench.err"
  echo "bench exit $? after $(( $(date +%s) - t0 )) s"
  cpu1=$(head -1 /proc/stat)
  python3 -c 'import sys
a = [int(x) for x in sys.argv[1].split()[1:]]; b = [int(x) for x in sys.argv[2].split()[1:]]
d = [y - x for x, y in zip(a, b)]; idle = d[3] + d[4]
print("CPUs busy over the sweep: %.0f%% of %d cores" % (100.0 * (sum(d) - idle) / max(1, sum(d)), int(sys.argv[3])))' \
    "$cpu0" "$cpu1" "$(nproc)"
  grep -v '^  ' "$OUT/bench.out"; grep -c ' done \| FAILED' "$OUT/bench.err"; grep FAILED "$OUT/bench.err" | head
  $CG report "$OUT/bench" --format md >"$OUT/bench-report.md" 2>&1
  $CG report "$OUT/bench" --format html --out "$OUT/bench-report.html" >/dev/null 2>&1
  $CG report "$OUT/bench" --format json --out "$OUT/bench-report.json" >/dev/null 2>&1
  sed -n '/## Summary/,/## Problems/p' "$OUT/bench-report.md"
  # With the specs section in the same call (or SPECS_DIR), the recipe table over all 200
  # problems: coverage from the specs, numbers from this sweep (bench/recipe_table.py).
  specs_dir=${SPECS_DIR:-$OUT/specs}
  if [ -d "$specs_dir/level1" ]; then
    python3 bench/recipe_table.py --specs "$specs_dir" --cutegen "$CG" \
      --report "$OUT/bench-report.json:$(date -u +%H:%M)" >"$OUT/recipe-table.md" 2>"$OUT/recipe-table.err" &&
      tail -5 "$OUT/recipe-table.md"
  fi
  $CG export "$OUT/bench" --format kernelbench --out "$OUT/exported" -q
  if [ -d .deps/KernelBench/src ]; then
    timeout ${KB_EVAL_TIMEOUT:-300} python3 tests/gpu/kb_eval.py --kernelbench-src .deps/KernelBench/src \
      --problems "$KB" --exported "$OUT/exported" --limit "${KB_EVAL_LIMIT:-4}" --out "$OUT/kb_eval.json" 2>&1 |
      grep -v Warning | tail -12
  fi ;;
esac

# The load_inline builds of the kbeval section are CPU work: with KB_PREBUILD=1 they run
# in the background from here on, beside the GPU sections that follow. KernelBench is not
# part of cutegen: its checkout's src/ is carried in .deps/KernelBench/src.
case " $sections " in *" kbeval "*)
  [ -d .deps/KernelBench/src ] || echo "kbeval: no .deps/KernelBench/src (a KernelBench checkout's src/); carry one to run KernelBench's eval"
  [ "${KB_PREBUILD:-0}" = 1 ] && [ -d .deps/KernelBench/src ] && python3 tests/gpu/kb_eval.py --kernelbench-src .deps/KernelBench/src \
    --problems "$KB" --exported "${KB_EXPORTED:-.deps/exported}" --jobs "$(nproc)" \
    --limit "${KB_EVAL_LIMIT:-0}" --prebuild-only >"$OUT/kb_prebuild.txt" 2>&1 & ;;
esac

# Lab: prebuilt variants (bench/lab_build.sh, here or elsewhere) timed against PyTorch in
# one process a problem (bench/variant_lab.py). LAB (default .deps/lab) holds a folder a
# problem, each with a file `task` naming the problem (level1/19) and the .so files.
case " $sections " in *" lab "*)
  for d in "${LAB:-.deps/lab}"/*/; do
    [ -f "$d/task" ] || continue
    ls "$d"/*.so >/dev/null 2>&1 || { echo "lab: no .so files in $d (build them with bench/lab_build.sh)"; continue; }
    t=$(cat "$d/task")  # level1/19, or the path of a problem file (tests/gpu/problems/x.py)
    case $t in *.py) task=$t ;; *) task=$(ls "$KB/${t%%/*}/${t##*/}_"*.py 2>/dev/null | head -1) ;; esac
    [ -n "$task" ] || { echo "lab: no problem $t under $KB"; continue; }
    timeout ${LAB_TIMEOUT:-120} python3 bench/variant_lab.py --task "$task" ${LAB_ARGS:-} "$d"/*.so 2>&1 |
      grep -v Warning | tee -a "$OUT/lab.txt"
  done ;;
esac

# KernelBench's own eval of exported ModelNew files (KB_EXPORTED, default .deps/exported).
case " $sections " in *" kbeval "*)
  wait  # a prebuild started before the lab (KB_PREBUILD=1)
  [ -d .deps/KernelBench/src ] && timeout ${KB_EVAL_TIMEOUT:-300} python3 tests/gpu/kb_eval.py --kernelbench-src .deps/KernelBench/src \
    --problems "$KB" --exported "${KB_EXPORTED:-.deps/exported}" --jobs "$(nproc)" \
    --limit "${KB_EVAL_LIMIT:-0}" --out "$OUT/kb_eval.json" 2>&1 | grep -v Warning | tail -40 ;;
esac

case " $sections " in *" buildspeed "*)
  [ -x bench/build_speed.sh ] && bench/build_speed.sh >"$OUT/build_speed.txt" 2>&1
  tail -30 "$OUT/build_speed.txt" ;;
esac

rm -f "$OUT"/work/*/profile.ncu-rep.tmp* 2>/dev/null
tar -czf /tmp/evidence.tar.gz -C "$OUT" . 2>/dev/null
mkdir -p "${RESULT_DIR:-$OUT}"
cp /tmp/evidence.tar.gz "${RESULT_DIR:-$OUT}/evidence.tar.gz"
ls -la "${RESULT_DIR:-$OUT}/evidence.tar.gz"
