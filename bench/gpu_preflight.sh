#!/usr/bin/env bash
# bench/gpu_preflight.sh: checks here, before device time is spent, what a call of
# bench/gpu_session.sh will need: the same environment (SAN, LABS, LABS_ELSE, NCU, LIST,
# LIST_ELSE) and the carry list as arguments. Says what is missing (a lab folder without
# builds, an ncu build or problem that is not there, a list naming problems with no
# KernelBench file) and the carry's size against the device tool's 64 MiB a call.
#   SAN=... LABS=... NCU=... LIST=... bench/gpu_preflight.sh build .deps/kernelbench .deps/lab53 ...
# Exit 0 when all is there and the carry fits, 1 otherwise.
set -uo pipefail
cd "$(dirname "$0")/.."
bad=0
miss() { echo "preflight: $*"; bad=$((bad + 1)); }
# a problem ("level1/40") in the KernelBench copy the call carries
has_problem() { ls ".deps/kernelbench/${1%%/*}/${1##*/}"*.py >/dev/null 2>&1; }
kb_hint="(copy ../shared/kernelbench to .deps/kernelbench, or fix the name)"
[ -x build/cutegen ] || miss "build/cutegen is missing: build the project (scripts/setup.sh)"
for f in ${SAN:-}; do [ -f "$f" ] || miss "SAN: no problem file $f (tests/gpu/problems/*.py are the sanitizer's)"; done
for lab in ${LABS:-} ${LABS_ELSE:-}; do
  [ -d "$lab" ] || { miss "no lab folder $lab (its bench/labs script builds it)"; continue; }
  n=$(ls "$lab"/*/*.so 2>/dev/null | wc -l)
  [ "$n" -gt 0 ] || miss "lab $lab holds no builds (run its bench/labs script first)"
  for d in "$lab"/*/; do [ -f "$d/task" ] || miss "lab $d has no task file naming its problem (bench/labs/lib.sh writes it: rebuild with the lab script)"; done
done
for item in ${NCU:-}; do
  IFS=: read -r t so re <<<"$item"
  [ -f "$so" ] || miss "NCU: no build $so (run its bench/labs script first)"
  has_problem "${t}_" || miss "NCU: no problem $t in .deps/kernelbench $kb_hint"
  [ -n "$re" ] || echo "preflight: NCU $so: no kernel regex, the first launch is profiled"
done
for list in ${LIST:-} ${LIST_ELSE:-}; do
  [ -f "$list" ] || { miss "no list $list (bench/sweeps/*.txt are lists)"; continue; }
  for t in $(grep -v '^#' "$list"); do
    has_problem "$t" || miss "$list: no problem $t in .deps/kernelbench $kb_hint"
  done
  echo "preflight: $list: $(grep -v '^#' "$list" | wc -w) problems"
done
total=0
for c in "$@"; do
  [ -e "$c" ] || { miss "carry: $c is not here (build it, or leave it out of the carry list)"; continue; }
  kb=$(du -sk "$c" | cut -f1)
  total=$((total + kb))
  printf 'preflight: carry %-50s %6d KiB\n' "$c" "$kb"
done
# the working tree travels too (tracked and untracked files that git does not ignore)
tree=$(git ls-files -co --exclude-standard -z | du -ck --files0-from=- 2>/dev/null | tail -1 | cut -f1)
total=$((total + ${tree:-0}))
echo "preflight: working tree ${tree:-?} KiB; in all $((total / 1024)) MiB of 64"
[ "$total" -le $((64 * 1024)) ] || miss "the carry and the tree are $((total / 1024)) MiB, over the device tool's 64 MiB: carry less"
[ "$bad" -eq 0 ] && echo "preflight: ready" || echo "preflight: $bad problem(s)"
[ "$bad" -eq 0 ]
