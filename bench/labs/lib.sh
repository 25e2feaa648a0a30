# bench/labs/lib.sh: helpers the dated lab scripts share (sourced; not run on its own).
# Expects OUT (where the builds go) set before it is sourced; run from the project root.
#   b DIR TASK SPEC VARIANT NAME [EDIT...]: builds variant VARIANT of SPEC with the edits
#     (bench/lab_build.sh) as OUT/DIR/NAME.so, with its ptxas summary; OUT/DIR/task names
#     the problem (level1/34) for tests/gpu/evidence.sh's lab section
#   def NAME VALUE: the sed edit that sets "#define CGR_NAME" (a comment after it goes too)
b() {
  local d=$OUT/$1 t=$2 spec=$3 v=$4 name=$5; shift 5
  mkdir -p "$d"; echo "$t" >"$d/task"
  LAB_PTXAS=1 bench/lab_build.sh "$d" "$spec" "$v" "$name" "$@" >/dev/null || echo "FAILED $t $name"
}
def() { echo "s/^#define CGR_$1 [0-9]*\\( .*\\)\\?\$/#define CGR_$1 $2/"; }
#   k DIR TASK SRC NAME [DEFINE...]: builds the lab kernel SRC (bench/labs/kernels/) with
#     each DEFINE ("LAB_THREADS 256") put in front of it, as OUT/DIR/NAME.so, with its
#     ptxas summary
k() {
  local d=$OUT/$1 t=$2 src=$3 name=$4; shift 4
  mkdir -p "$d"; echo "$t" >"$d/task"
  { for e in "$@"; do echo "#define $e"; done; cat "$src"; } >"$d/$name.cu"
  local json so inc
  json=$("${CG:-build/cutegen}" build --kernel "$d/$name.cu" --arch "${LAB_ARCH:-sm_90a}" --json -q) || { echo "FAILED $t $name: $json"; return; }
  so=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1].splitlines()[-1])["so"])' "$json") && cp "$so" "$d/$name.so"
  inc=$("${CG:-build/cutegen}" doctor 2>/dev/null | sed -n 's/^ok *cutlass \([^ ]*\).*/\1/p' || true)
  nvcc -std=c++17 -O3 -arch="${LAB_ARCH:-sm_90a}" --expt-relaxed-constexpr -Iinclude ${inc:+-I"$inc"} \
    -include cutegen/abi.h -Xptxas -v -c -o /dev/null "$d/$name.cu" 2>&1 |
    grep -E "Compiling entry|registers|spill" | sed 's/ptxas info *: //' > "$d/$name.ptxas" || true
}
