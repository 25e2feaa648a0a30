#!/usr/bin/env bash
# bench/lab_build.sh: builds recipe variants for bench/variant_lab.py, here (no GPU needed).
#   bench/lab_build.sh OUTDIR SPEC VARIANT [NAME [EDIT...]]
# writes OUTDIR/NAME.so (NAME default: <spec>.v<VARIANT>) from `cutegen recipe` for the
# variant (or, when SPEC is a .cu file, from that kernel; VARIANT is then ignored) with
# each EDIT applied: "s/from/to/" is a sed expression on the generated file,
# anything else ("CGR_PROMOTE 2") a #define put in front of it. Built through `cutegen
# build` (sm_90a unless LAB_ARCH says otherwise). LAB_GPU=NAME: the variants
# `cutegen recipe --gpu NAME` lists (an A100's SM80-class paths, built to run here). With LAB_PTXAS=1 also writes
# OUTDIR/NAME.ptxas: registers and spills of each kernel (nvcc -Xptxas -v).
set -euo pipefail
out=$1 spec=$2 v=$3
name=${4:-$(basename "$spec" .json).v$v}
shift 3; [ $# -gt 0 ] && shift
CG=${CG:-build/cutegen}
mkdir -p "$out"
cu="$out/$name.cu"
case $spec in
  *.cu) cp "$spec" "$cu.tmp" ;;
  *) "$CG" recipe --spec "$spec" --variant "$v" ${LAB_GPU:+--gpu "$LAB_GPU"} --out "$cu.tmp" >/dev/null ;;
esac
for e in "$@"; do
  case $e in s/*|s\|*) sed -i -e "$e" "$cu.tmp" ;; esac
done
{ for e in "$@"; do case $e in s/*|s\|*) ;; *) echo "#define $e" ;; esac; done; cat "$cu.tmp"; } > "$cu"
rm -f "$cu.tmp"
json=$("$CG" build --kernel "$cu" --arch "${LAB_ARCH:-sm_90a}" --timeout "${LAB_BUILD_TIMEOUT:-900}" --json -q) || { echo "lab_build: $name failed: $json" >&2; exit 1; }
so=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1].splitlines()[-1])["so"])' "$json" 2>/dev/null) || { echo "lab_build: $name: no shared object in cutegen build's answer (see its build.log): $json" >&2; exit 1; }
cp "$so" "$out/$name.so"
case " $* " in *"CGR_PROMOTE 2"*) LAB_PTXAS=${LAB_PTXAS:-1} ;; esac
if [ "${LAB_PTXAS:-0}" = 1 ]; then
  inc=$("$CG" doctor 2>/dev/null | sed -n 's/^ok *cutlass \([^ ]*\).*/\1/p' || true)
  nvcc -std=c++17 -O3 -arch="${LAB_ARCH:-sm_90a}" --expt-relaxed-constexpr -Iinclude ${inc:+-I"$inc"} \
    -include cutegen/abi.h -Xptxas -v -c -o /dev/null "$cu" 2>&1 |
    grep -E "Compiling entry|registers|spill" | sed 's/ptxas info *: //' > "$out/$name.ptxas" || true
fi
echo "$out/$name.so"
