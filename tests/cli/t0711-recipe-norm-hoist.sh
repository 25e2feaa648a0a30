#!/usr/bin/env bash
# cutegen recipe, NORM family: the generator's rewritten expressions (src/recipe_hoist.c:
# reciprocals of row values, row-uniform factors first, derived slots computed once a row)
# against the expressions as recognised (CUTEGEN_RECIPE_PLAIN=1), evaluated on the host by
# tests/cli/recipe_norm_hoist.cpp for every norm fixture (with the broadcast offsets, 32-bit
# against 64-bit, and the runs cgr_run claims); and that the rewrite does what it is for:
# GroupNorm's, RMSNorm's (its streamed columns) and the L2 norm's epilogues take no square root
# or division an element; RMSNorm's column held a thread keeps the plain form.
# Needs a C++17 compiler, the CUDA headers and CUTLASS; skips, saying so, without them.
. "$(dirname "$0")/lib.sh"

need_host_cute

mkdir -p "$TMP/gen" "$TMP/bin" "$TMP/log"
block() {  # the generated parameter block of kernel $1
  sed -n '/^#define CGR_GENERATED 1/,/end of recipe parameters/p' "$1"
}
epi() {  # the generated cgr_epi of kernel $1 (the first one: the template's default follows)
  awk '/^__device__ __forceinline__ float cgr_epi\(/ { on = 1 } on { print } on && /^}/ { exit }' "$1"
}
for name in groupnorm groupnorm_relu layernorm layernorm_bf16 rmsnorm rms_last_weight instancenorm \
            instancenorm_affine l1norm l2norm frobenius normalize_fn broadcast_back batchnorm batchnorm1d \
            small_batchnorm small_groupnorm small_layernorm small_rmsnorm small_l2norm mean_center \
            standardize_std softmax_manual softmax_cols_split; do
  spec=$SRC/tests/data/recipe/$name.json
  tests=$((tests + 1))
  if ! CUTEGEN_RECIPE_PLAIN=1 "$CUTEGEN" recipe --spec "$spec" --out "$TMP/gen/$name.plain.cu" >/dev/null 2>"$TMP/log/$name.gen" ||
     ! "$CUTEGEN" recipe --spec "$spec" --out "$TMP/gen/$name.cu" >/dev/null 2>>"$TMP/log/$name.gen"; then
    echo "FAIL: $name: generation"; sed 's/^/  /' "$TMP/log/$name.gen"; failures=$((failures + 1)); continue
  fi
  if ! "$CUTEGEN" recipe --spec "$spec" 2>&1 | head -1 | grep -q "^family: norm"; then
    echo "FAIL: $name: not a norm plan"; failures=$((failures + 1)); continue
  fi
  block "$TMP/gen/$name.plain.cu" > "$TMP/gen/$name.plain.h"
  block "$TMP/gen/$name.cu" > "$TMP/gen/$name.hoist.h"
  build_and_run "$name" "$name" -DPLAIN="\"$TMP/gen/$name.plain.h\"" -DHOIST="\"$TMP/gen/$name.hoist.h\"" \
    -I "$SRC/recipes" "$SRC/tests/cli/recipe_norm_hoist.cpp"
done

# RMSNorm's first variant holds a column a thread (elements a row apart): the generator
# keeps its expressions as recognised there (a division an element spaces the column's
# scattered stores: lab rounds 48-49); its streamed columns (cache=0) are rewritten
tests=$((tests + 1))
if ! diff <(epi "$TMP/gen/rmsnorm.plain.cu") <(epi "$TMP/gen/rmsnorm.cu") >/dev/null; then
  echo "FAIL: rmsnorm: the held column's epilogue is not the plain one"; failures=$((failures + 1))
else
  echo "ok: rmsnorm: the held column divides each element, as written"
fi
k=$("$CUTEGEN" recipe --spec "$SRC/tests/data/recipe/rmsnorm.json" --list | grep '^variant .* cache=0$' | head -1 | sed 's/^variant \([0-9]*\):.*/\1/')
"$CUTEGEN" recipe --spec "$SRC/tests/data/recipe/rmsnorm.json" --variant "${k:-0}" --out "$TMP/gen/rmsnorm_streamed.cu" >/dev/null
CUTEGEN_RECIPE_PLAIN=1 "$CUTEGEN" recipe --spec "$SRC/tests/data/recipe/rmsnorm.json" --variant "${k:-0}" \
  --out "$TMP/gen/rmsnorm_streamed.plain.cu" >/dev/null
block "$TMP/gen/rmsnorm_streamed.cu" > "$TMP/gen/rmsnorm_streamed.hoist.h"

# what the rewrite is for: no square root or division left in these epilogues
for name in groupnorm rmsnorm_streamed l2norm; do
  tests=$((tests + 1))
  if epi "$TMP/gen/$name.cu" | grep -qE 'sqrtf|/ '; then
    echo "FAIL: $name: the rewritten epilogue still divides or takes a square root an element:"
    epi "$TMP/gen/$name.cu" | sed 's/^/  /'; failures=$((failures + 1))
  elif ! epi "$TMP/gen/$name.plain.cu" | grep -qE 'sqrtf|/ '; then
    echo "FAIL: $name: the plain epilogue has no square root or division (the check proves nothing)"
    failures=$((failures + 1))
  else
    echo "ok: $name: no square root or division an element ($(grep -c '^    if (k ==' "$TMP/gen/$name.hoist.h") derived slot(s))"
  fi
done
finish
