#!/usr/bin/env bash
# bench/gpu_session.sh: one GPU-host call of a session, in the order its results matter:
# compute-sanitizer on the problems whose device code changed, the variant labs built
# here, then a sweep of `cutegen bench` in whatever time is left. Run by the device tool
# from the project root with the build, the KernelBench copy and the CUTLASS wheel carried:
#   carry: build/cutegen build/cutegen-worker (all it needs of the build folder) .deps/kernelbench
#          .deps/nvidia_cutlass-4.2.0.0-py3-none-any.whl [.deps/labN]
#          [.deps/cache.tar.gz: bench/prebuild.sh's cache, then `tar czf .deps/cache.tar.gz -C .deps/cache .`]
#   SAN="tests/gpu/problems/a.py ..." LABS=".deps/lab48" NCU="level1/40:x.so:regex" LIST=bench/sweeps/x.txt \
#     [SWEEP_GPU=H200 [LIST_ELSE=bench/sweeps/y.txt] [LABS_ELSE=.deps/labN]] TOTAL=540 bench/gpu_session.sh
# Check first, here, with the same variables: bench/gpu_preflight.sh CARRY... (what is
# missing, and the carry's size against the device tool's 64 MiB).
# Each part's summary goes to $OUT (the device tool's folder: it comes back; gpu.txt,
# sanitize.txt, one .txt a lab, bench.txt and the sweep's report) and to stdout; the rest
# (ncu's reports, the sweep's runs) to $OUT/details.tar.gz. TOTAL: seconds this call may take in all (the sweep gets the rest,
# minus a margin for its report); SAN_T, LAB_T: each part's own limit. A part whose input
# is empty is skipped. Lists are read as `cutegen bench`'s BENCH_TASKS (one problem a line,
# "level1/35" or a file), run in their order (--in-order: put first what matters);
# LIST_SKIP=N drops the first N (the second call of a long list).
set -uo pipefail
cd "$(dirname "$0")/.."
t0=$(date +%s)
OUT=${OUT:-/tmp/gpu-session}
mkdir -p "$OUT"
TOTAL=${TOTAL:-540}
left() { echo $((TOTAL - ($(date +%s) - t0))); }
[ -x build/cutegen ] || { echo "gpu_session: build/cutegen missing: carry the build folder" >&2; exit 2; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"

. tests/gpu/cutlass_wheel.sh  # CUTLASS from the carried wheel, before the sanitizer needs it
export PATH=/usr/local/cuda/bin:$PATH

W=${WORK:-/tmp/gpu-session-work}  # builds, run folders: stay on the host
mkdir -p "$W"
# variants built on the development machine (bench/prebuild.sh), carried as a tarball
if [ -f .deps/cache.tar.gz ]; then
  mkdir -p "$W/cache" && tar xzf .deps/cache.tar.gz -C "$W/cache" &&
    export CUTEGEN_CACHE_DIR="$W/cache" &&
    echo "prebuilt cache: $(ls "$W/cache/builds" | wc -l) builds"
fi

# SWEEP_GPU=H200: the sweep only on a GPU whose name contains it (a table is one GPU's; the
# device tool may lend an H100 for an H200); the sanitizer, labs and ncu run on any card.
# LIST_ELSE=bench/sweeps/y.txt: on any other GPU, sweep that list instead (LIST_SKIP applies
# to whichever list runs), and LABS_ELSE=".deps/labN": labs run only on such a GPU (so that
# one call serves whichever card comes: the table's sweep on the one, labs on the other)
if [ -n "${SWEEP_GPU:-}" ] && ! grep -q -- "$SWEEP_GPU" "$OUT/gpu.txt"; then
  gpu_name=$(cut -d, -f1 "$OUT/gpu.txt")
  LABS="${LABS:-} ${LABS_ELSE:-}"
  if [ -n "${LIST_ELSE:-}" ]; then
    echo "gpu_session: this GPU ($gpu_name) is not SWEEP_GPU=$SWEEP_GPU: sweeping LIST_ELSE=$LIST_ELSE instead of ${LIST:-nothing}"
    LIST=$LIST_ELSE
  elif [ -n "${LIST:-}" ]; then
    echo "gpu_session: the sweep of $LIST skipped: this GPU ($gpu_name) is not SWEEP_GPU=$SWEEP_GPU (LIST_ELSE names a list for it)"
    LIST=
  fi
fi

if [ -n "${SAN:-}" ]; then
  # shellcheck disable=SC2086
  SAN_PER_PROBLEM=${SAN_PER_PROBLEM:-1} timeout "${SAN_T:-130}" tests/gpu/sanitize.sh --out "$W/sanitize" $SAN \
    >"$OUT/sanitize.txt" 2>&1
  echo "sanitize (rc $?, $(left) s left):"
  grep -vE "^ " "$OUT/sanitize.txt" | tail -30
fi

for lab in ${LABS:-}; do
  [ -d "$lab" ] || { echo "gpu_session: no lab folder $lab (build it here first: bench/labs/*.sh)"; continue; }
  [ "$(left)" -gt 60 ] || { echo "gpu_session: no time left for lab $lab"; continue; }
  name=$(basename "$lab")
  OUT="$W/$name" LAB="$lab" LAB_TIMEOUT=${LAB_T:-150} timeout "$(( $(left) - 30 ))" tests/gpu/evidence.sh lab \
    >"$W/$name.log" 2>&1
  echo "lab $lab (rc $?, $(left) s left):"
  cp "$W/$name/lab.txt" "$OUT/$name.txt" 2>/dev/null && cat "$OUT/$name.txt" | tail -60
done

# NCU="level1/40:.deps/lab48/l40/new-ring-g128-6x4.so:rows_ring ...": one kernel launch of
# each build under ncu (speed of light, memory, occupancy, warp states), after the labs. The
# regex is matched against the kernel's demangled name, template arguments and parameters
# included ("presplit_kernel<1>" picks one instantiation; "rows_ring" any; session 24's
# "presplit_kernel.1" matched nothing: without --kernel-name-base demangled ncu matches the
# bare function name), and ncu lists the kernels it saw when none matched. NCU_ARGS: more of
# ncu's collection options after the sections ("--section SourceCounters", "--metrics
# dram__bytes_read.sum,dram__bytes_write.sum"); NCU_PRINT: another print of the saved report
# ("--page source --print-source sass": which SASS lines the warps stall on), to
# ncu-*-print.txt in details.tar.gz.
for item in ${NCU:-}; do
  IFS=: read -r t so re <<<"$item"
  [ "$(left)" -gt 90 ] || { echo "gpu_session: no time left for ncu on $so"; break; }
  task=$(ls ".deps/kernelbench/${t%%/*}/${t##*/}_"*.py 2>/dev/null | head -1)
  [ -n "$task" ] && [ -f "$so" ] || { echo "gpu_session: ncu: no problem $t or no build $so"; continue; }
  name=ncu-$(basename "$(dirname "$so")")-$(basename "$so" .so)
  mkdir -p "$W/ncu"
  timeout "${NCU_T:-90}" ncu --kernel-name-base demangled --kernel-name "regex:${re:-.}" --launch-count 1 --section SpeedOfLight \
    --section MemoryWorkloadAnalysis --section Occupancy --section WarpStateStats --section LaunchStats ${NCU_ARGS:-} \
    -f -o "$W/ncu/$name" python3 bench/variant_lab.py --task "$task" --rounds 1 --iters 1 --warmup 0 "$so" \
    >"$W/ncu/$name.log" 2>&1
  echo "ncu $so (rc $?, $(left) s left):"
  # the report read back: its details page, and NCU_PRINT's pages (the source page:
  # NCU_PRINT="--page source --print-source sass" with NCU_ARGS="--section SourceCounters")
  if [ ! -f "$W/ncu/$name.ncu-rep" ]; then
    echo "gpu_session: ncu wrote no report for $so (timed out at NCU_T=${NCU_T:-90} s, or no kernel matched '${re:-.}':" \
      "raise NCU_T, or fix the item's regex from the kernel names below): its output, last lines:"
    tail -5 "$W/ncu/$name.log"; continue
  fi
  ncu -i "$W/ncu/$name.ncu-rep" --page details >"$W/ncu/$name.txt" 2>&1
  [ -z "${NCU_PRINT:-}" ] || ncu -i "$W/ncu/$name.ncu-rep" $NCU_PRINT >"$W/ncu/$name-print.txt" 2>&1
  grep -E "Duration|DRAM Throughput|Memory Throughput|L2 Hit|Achieved Occupancy|Registers Per|Stall|Warp Cycles Per Issued|dram__|lts__" \
    "$W/ncu/$name.txt" | head -32
done

if [ -n "${LIST:-}" ] && [ "$(left)" -le 120 ]; then
  echo "gpu_session: the sweep of $LIST skipped: $(left) s left, a sweep needs more than 120 (raise TOTAL)"
elif [ -n "${LIST:-}" ]; then
  tasks=$(grep -v '^#' "$LIST" | tr ' ' '\n' | sed '/^$/d' | tail -n +"$(( ${LIST_SKIP:-0} + 1 ))")
  OUT="$W/bench" BENCH_TIMEOUT=$(( $(left) - 45 )) BENCH_TASKS="$tasks" BENCH_JOBS=${BENCH_JOBS:-8} \
    BENCH_RUN_ARGS=${BENCH_RUN_ARGS:---variants 2 --trials 3} tests/gpu/evidence.sh bench >"$OUT/bench.txt" 2>&1
  echo "bench $LIST (rc $?, $(left) s left):"
  for f in bench-report.json bench-report.md; do cp "$W/bench/$f" "$OUT/" 2>/dev/null; done
  tail -30 "$OUT/bench.txt"
fi
# The rest in one file (the device tool brings back at most 8): ncu's whole reports, the
# labs' and the sanitizer's folders, the sweep's runs (run.db, each node's kernel and eval
# reports, bench.out/err), no shared objects or build cache; without the kernels' sources
# if that is over 15 MiB.
details() { tar czf "$OUT/details.tar.gz" -C "$W" --exclude='*.so' --exclude='*.ncu-rep' --exclude=evidence.tar.gz --exclude=./cache "$@" . 2>/dev/null; }
details
if [ "$(stat -c %s "$OUT/details.tar.gz" 2>/dev/null || echo 0)" -gt $((15 << 20)) ]; then details --exclude='kernel.cu'; fi
echo "gpu_session: $(( $(date +%s) - t0 )) s; details.tar.gz $(du -h "$OUT/details.tar.gz" 2>/dev/null | cut -f1)"
