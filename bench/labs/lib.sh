# bench/labs/lib.sh: helpers the dated lab scripts share (sourced; not run on its own).
# Expects OUT (where the builds go) set before it is sourced; run from the project root.
#   b DIR TASK SPEC VARIANT NAME [EDIT...]: builds variant VARIANT of SPEC (or the kernel
#     SPEC when it is a .cu file) with the edits
#     (bench/lab_build.sh) as OUT/DIR/NAME.so, with its ptxas summary; OUT/DIR/task names
#     the problem (level1/34) for tests/gpu/evidence.sh's lab section
#   def NAME VALUE: the sed edit that sets "#define CGR_NAME" (a comment after it goes too)
b() {
  local d=$OUT/$1 t=$2 spec=$3 v=$4 name=$5; shift 5
  mkdir -p "$d"; echo "$t" >"$d/task"
  LAB_PTXAS=${LAB_PTXAS:-1} bench/lab_build.sh "$d" "$spec" "$v" "$name" "$@" >/dev/null || echo "FAILED $t $name"
}
#   listed SPEC PATTERN: the first variant of SPEC whose `cutegen recipe --list` line
#     contains PATTERN ("gemm wgmma"): for b's VARIANT where the list order may change
listed() { "${CG:-build/cutegen}" recipe --spec "$1" --list | grep "^variant [0-9]*: .*$2" | head -1 | sed 's/^variant \([0-9]*\):.*/\1/'; }
def() { echo "s/^#define CGR_$1 [0-9]*\\( .*\\)\\?\$/#define CGR_$1 $2/"; }
#   p DIR TASK SPEC VARIANT NAME [EDIT...]: b in the background, unless OUT/DIR/NAME.so is
#     already there, at most JOBS (default: the cores) at once; `wait` after the last
p() {
  [ -f "$OUT/$1/$5.so" ] && return 0
  while [ "$(jobs -r | wc -l)" -ge "${JOBS:-$(nproc)}" ]; do wait -n; done
  b "$@" &
}
#   k DIR TASK SRC NAME [DEFINE...]: b for the lab kernel SRC (bench/labs/kernels/), each
#     DEFINE ("LAB_THREADS 256") put in front of it
k() { b "$1" "$2" "$3" 0 "$4" "${@:5}"; }
#   lab_spec TASK PREFIX: sets spec (TASK's spec in SPECS, "level1/63") and d (its build
#     folder, PREFIX1-63); says so and returns 1 where there is no spec (a staged plan's
#     whole-plan variants are numbered from 0 as they are listed: pass the number to p)
lab_spec() {
  local t=$1 specs=${SPECS:-.deps/specs/specs}
  spec=$(ls "$specs"/${t%%/*}/${t##*/}_*.json 2>/dev/null | head -1)
  [ -n "$spec" ] || { echo "lab: no spec for $t in $specs (unpack bench/results/*-specs.tar.gz into .deps/specs)"; return 1; }
  d=${t#level}; d=$2${d/\//-}
}
#   lab_task TASK PREFIX PATTERN: lab_spec, and w (its first variant whose --list line
#     matches PATTERN); says which is missing and returns 1 (the caller's `|| continue`)
lab_task() {
  lab_spec "$1" "$2" || return 1
  local t=$1
  w=$(listed "$spec" "$3")
  [ -n "$w" ] || { echo "lab: $t lists no variant matching '$3'"; return 1; }
}
