#!/usr/bin/env bash
# cutegen recipe, POINTWISE family: the broadcast inputs' offsets (recipes/pointwise.cu's
# bcast_off, dividing by the generated shape's constants since 12-07) of every pointwise
# fixture with a broadcast input (a middle dim, leading dims absent, size-1 dims inserted,
# rows that are not whole vectors, an output past 2^31 elements), compiled with the host C++
# compiler into tests/cli/recipe_pw_emu.cpp against offsets unravelled there; and the same
# kernels with the run-time extents (CGR_PW_CONST_SHAPE 0, the lab form). Needs a C++17
# compiler, CUTLASS and the CUDA headers; skips, saying so, without them.
. "$(dirname "$0")/lib.sh"

need_host_cute

for name in chain_bcast chain_bcast_odd chain_bcast_big diag_matmul module_chain \
            reshape_param_tuple unsqueeze_twice view_param_bcast; do
  spec=$SRC/tests/data/recipe/$name.json
  tests=$((tests + 1))
  gen_first "$spec" "threads=" "the pointwise kernel" || continue
  grep -q "CGR_BCAST, CG_" "$TMP/gen/$name.cu" ||
    { echo "FAIL: $name: no broadcast input in the generated kernel"; failures=$((failures + 1)); continue; }
  run_emulator "$name" recipe_pw_emu.cpp "$first"
  tests=$((tests + 1))
  sed 's/^#define CGR_GENERATED 1$/&\n#define CGR_PW_CONST_SHAPE 0/' "$TMP/gen/$name.cu" >"$TMP/gen/$name-runtime.cu"
  run_emulator "$name-runtime" recipe_pw_emu.cpp "run-time extents"
done
finish
