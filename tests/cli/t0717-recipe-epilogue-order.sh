#!/usr/bin/env bash
# cutegen recipe: the epilogues load their inputs ahead of their stores (CGR_EPI_CHUNK,
# session 32). A global load after a global store stays after it in the machine code (the
# read-only LDG.E.CONSTANT too), so an epilogue that loads an output's inputs and stores it,
# output after output, waits a memory round trip for each (level 2 #26: 4.94 ms on the H200
# where its bytes take 0.5). For a transposed convolution whose epilogue reads a full-size
# tensor and the bias (the WGMMA kernel, tests/data/recipe/convt_l2_26_add_hardswish.json)
# and a GEMM with a bias (the WGMMA GEMM, l2_gemm_add_relu.json), the first variant is built
# for sm_90a and its kernel's SASS read (cuobjdump): its longest run of global stores with no
# global load between must be at least 8. The same kernel built with the old order
# (CGR_EPI_CHUNK 1) must show runs of at most 2, so that the check can tell the two apart.
# Needs nvcc, CUTLASS and cuobjdump (the toolkit's, or PyPI's nvidia-cuda-cuobjdump, which
# scripts/setup.sh installs); skips, saying so, without them.
. "$(dirname "$0")/lib.sh"

nvcc=$(command -v nvcc || ls "${CUDA_HOME:-/nonexistent}/bin/nvcc" /usr/local/cuda/bin/nvcc 2>/dev/null | head -1)
[ -n "$nvcc" ] || skip "nvcc not found (CUDA_HOME, PATH, /usr/local/cuda): the builds need it"
need_cutlass
objdump=$(command -v cuobjdump || ls "${CUDA_HOME:-/nonexistent}/bin/cuobjdump" /usr/local/cuda/bin/cuobjdump 2>/dev/null | head -1)
if [ -z "$objdump" ]; then
  pkg=$(python3 -c "import importlib.util as u; s=u.find_spec('nvidia'); print(s.submodule_search_locations[0] if s else '')" 2>/dev/null)
  objdump=$(ls "$pkg"/cu*/bin/cuobjdump 2>/dev/null | head -1)
fi
[ -n "$objdump" ] || skip "cuobjdump not found (the CUDA toolkit's, or: pip install nvidia-cuda-cuobjdump==13.5.37 nvidia-cuda-nvdisasm==13.5.37)"
[ -x "$(dirname "$objdump")/nvdisasm" ] || command -v nvdisasm >/dev/null ||
  skip "nvdisasm not found beside $objdump (cuobjdump -sass runs it: pip install nvidia-cuda-nvdisasm==13.5.37)"
export PATH="$(dirname "$nvcc"):$(dirname "$objdump"):$PATH" CUTLASS_DIR="${cutlass%/include}" CUTEGEN_CACHE_DIR="$TMP/cache"
mkdir -p "$TMP/gen" "$TMP/log"

# longest run of global stores (STG) with no global load (LDG) between, in kernel $2 of $1
# (-1: no such kernel in the SASS, or cuobjdump failed)
store_run() {
  "$objdump" -sass "$1" 2>"$TMP/log/cuobjdump.err" | awk -v fn="$2" '
    /Function :/ { inside = index($0, fn) > 0; if (inside) found = 1; run = 0; next }
    !inside { next }
    /[^A-Z]LDG[.E ]/ { run = 0; next }
    /[^A-Z]STG[.E ]/ { run++; if (run > best) best = run }
    END { print found ? best + 0 : -1 }'
}

check() {  # SPEC PATTERN KERNEL: the variant listed as PATTERN, chunked and not
  local spec=$SRC/tests/data/recipe/$1 pattern=$2 kernel=$3 name v
  name=$(basename "$1" .json)
  v=$("$CUTEGEN" recipe --spec "$spec" --list | grep -m 1 "^variant [0-9]*: $pattern" | sed 's/^variant \([0-9]*\):.*/\1/')
  tests=$((tests + 1))
  [ -n "$v" ] || { echo "FAIL: $name lists no '$pattern' variant"; failures=$((failures + 1)); return; }
  gen_variant "$spec" "$v" "$name" || return
  grep -q '^#define CGR_EPI_CHUNK 0\b' "$TMP/gen/$name.cu" ||
    { echo "FAIL: $name: the template's CGR_EPI_CHUNK 0 (by the inputs) is not in the generated source"; failures=$((failures + 1)); return; }
  sed 's/^#define CGR_EPI_CHUNK 0\b.*$/#define CGR_EPI_CHUNK 1/' "$TMP/gen/$name.cu" >"$TMP/gen/$name-old.cu"
  for form in "$name" "$name-old"; do
    if ! "$CUTEGEN" build --arch sm_90a --timeout 1500 --json -q --kernel "$TMP/gen/$form.cu" >"$TMP/log/$form.json" 2>&1; then
      echo "FAIL: build $form"; tail -5 "$TMP/log/$form.json" | sed 's/^/  /'; failures=$((failures + 1)); return
    fi
  done
  local so so_old run run_old
  so=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["so"])' "$TMP/log/$name.json")
  so_old=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["so"])' "$TMP/log/$name-old.json")
  run=$(store_run "$so" "$kernel") run_old=$(store_run "$so_old" "$kernel")
  if [ "$run" -lt 0 ] || [ "$run_old" -lt 0 ]; then
    echo "FAIL: $name: no kernel $kernel in cuobjdump's SASS of $so:"; head -3 "$TMP/log/cuobjdump.err" | sed 's/^/  /'
    failures=$((failures + 1)); return
  fi
  if [ "$run" -ge 8 ] && [ "$run_old" -le 2 ]; then
    echo "ok: $name ($pattern, $kernel): stores in runs of up to $run with the chunk, $run_old with the old order"
  else
    echo "FAIL: $name ($pattern, $kernel): longest store run $run with the chunk (want >= 8), $run_old with CGR_EPI_CHUNK 1 (want <= 2)"
    failures=$((failures + 1))
  fi
}

check convt_l2_26_add_hardswish.json "conv wgmma" conv_wgmma_kernel
check l2_gemm_add_relu.json "gemm wgmma" gemm_kernel
finish
