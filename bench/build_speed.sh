#!/usr/bin/env bash
# bench/build_speed.sh: build time of each examples/kernels/*.cu, side by side:
#   cutegen build (cold cache, split mode), cutegen build --build-mode plain (cold),
#   nvcc -cubin of the same file with the same flags (device code only: the floor),
#   and PyTorch load_inline of an equivalent extension (skipped without torch).
# Prints a table with each time's ratio to the -cubin time. Self-contained: run it on
# the GPU host from the source tree after building cutegen.
#   usage: bench/build_speed.sh [CUTEGEN_BIN] [ARCH]   (defaults: build/cutegen, the GPU's)
set -u
SRC=$(cd "$(dirname "$0")/.." && pwd)
CUTEGEN=${1:-$SRC/build/cutegen}
[ -x "$CUTEGEN" ] || { echo "cutegen binary '$CUTEGEN' not found: build it, or pass its path" >&2; exit 2; }
NVCC=$(command -v nvcc || ls "${CUDA_HOME:-/nonexistent}/bin/nvcc" /usr/local/cuda/bin/nvcc 2>/dev/null | head -1)
[ -n "$NVCC" ] || { echo "nvcc not found: install the CUDA toolkit or set CUDA_HOME" >&2; exit 8; }
ARCH=${2:-}
if [ -z "$ARCH" ]; then
  cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')
  case "$cc" in 90) ARCH=sm_90a ;; "") ARCH=sm_90a; echo "no GPU found: sm_90a" >&2 ;; *) ARCH=sm_$cc ;; esac
fi
CUTLASS=${CUTLASS_DIR:-$(python3 -c "import importlib.util as u; s=u.find_spec('cutlass_library'); print(s.submodule_search_locations[0]+'/source' if s else '')" 2>/dev/null)}
[ -d "$CUTLASS/include/cute" ] || { echo "CUTLASS not found: set CUTLASS_DIR or pip install nvidia-cutlass" >&2; exit 6; }
INC="-I$SRC/include -I$CUTLASS/include"
FLAGS="-std=c++17 -O3 -lineinfo --expt-relaxed-constexpr -gencode=arch=compute_${ARCH#sm_},code=$ARCH"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cutegen-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
HAVE_TORCH=1
python3 -c "import torch.utils.cpp_extension" 2>/dev/null || { HAVE_TORCH=0; echo "torch not importable: the load_inline column is skipped" >&2; }

secs() { python3 -c "import time; print(f'{time.time():.3f}')"; }
elapsed() { python3 -c "print(f'{$2 - $1:.2f}')"; }

cutegen_cold() { # mode kernel
  local cache="$TMP/cache-$1-$RANDOM" t0 t1
  t0=$(secs); CUTEGEN_CACHE_DIR=$cache "$CUTEGEN" build -q --arch "$ARCH" --cutlass "$CUTLASS" \
    --build-mode "$1" --jobs 1 --kernel "$2" >"$TMP/log" 2>&1 || { echo fail; return; }
  t1=$(secs); elapsed "$t0" "$t1"
}

cubin() {
  local t0 t1
  t0=$(secs); "$NVCC" $FLAGS $INC -include cutegen/abi.h -cubin -o "$TMP/k.cubin" "$1" >"$TMP/log" 2>&1 || { echo fail; return; }
  t1=$(secs); elapsed "$t0" "$t1"
}

load_inline() {
  [ $HAVE_TORCH = 1 ] || { echo "-"; return; }
  python3 - "$1" "$SRC/include" "$CUTLASS/include" "$FLAGS" "$TMP/ext-$RANDOM" <<'PY' 2>"$TMP/log" || echo fail
import os, sys, time
from torch.utils.cpp_extension import load_inline
kernel, abi, cutlass, flags, build = sys.argv[1:6]
os.makedirs(build)
src = open(kernel).read() + "\nint cg_probe() { return 0; }\n"
t0 = time.time()
load_inline(name="cg_bench_" + str(os.getpid()), cpp_sources="int cg_probe();",
            cuda_sources=src, functions=["cg_probe"], extra_include_paths=[abi, cutlass],
            extra_cuda_cflags=flags.split() + ["-include", "cutegen/abi.h"],
            build_directory=build, verbose=False)
print(f"{time.time() - t0:.2f}")
PY
}

ratio() { case "$1$2" in *fail*|*-*) echo "-" ;; *) python3 -c "print(f'{$1 / $2:.2f}x')" ;; esac; }

echo "# build_speed: $(date -u +%Y-%m-%dT%H:%MZ), $(hostname), $(nproc) cores, $("$NVCC" --version | grep -o 'V[0-9][0-9.]*' | tail -1), arch $ARCH"
printf "%-16s %8s %8s %8s %8s %10s %10s %10s\n" kernel cubin split plain inline split/cub plain/cub inline/cub
for k in "$SRC"/examples/kernels/*.cu; do
  c=$(cubin "$k"); s=$(cutegen_cold split "$k"); p=$(cutegen_cold plain "$k"); l=$(load_inline "$k")
  printf "%-16s %8s %8s %8s %8s %10s %10s %10s\n" "$(basename "$k")" "$c" "$s" "$p" "$l" \
    "$(ratio "$s" "$c")" "$(ratio "$p" "$c")" "$(ratio "$l" "$c")"
done
