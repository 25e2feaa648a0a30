#!/usr/bin/env bash
# cutegen recipe, GEMM family: generated tensor-core GEMM kernels run on the host. Each
# small GEMM of tests/data/recipe/emu/ (odd sizes, every operand layout, batches, an N-D
# operand folded into M, split-K, triu, epilogue inputs of every kind; pw_*: pointwise
# convolutions run as their batched GEMM, checked against the convolution) is generated, its
# kernel (recipes/gemm_tc.cu with the generated parameters) compiled with the host C++
# compiler into tests/cli/recipe_gemm_emu.cpp, which runs the kernel's tile order,
# copies, predicates, pipeline bookkeeping, fragment partitions, 3xTF32 split, split-K and
# epilogue on random inputs and compares every output with a direct evaluation in double
# at the fp32 tolerance. By default variant 0 of each fixture, variant 1 of three, one
# TF32 variant and four tiles the small fixtures' lists do not reach;
# CUTEGEN_RECIPE_VARIANTS=all runs every variant as well. Needs a C++17 compiler,
# the CUDA headers and CUTLASS; skips, saying so, without them.
. "$(dirname "$0")/lib.sh"

need_host_cute

mkdir -p "$TMP/gen" "$TMP/bin" "$TMP/log"
jobs="$TMP/jobs"
: >"$jobs"
for spec in "$SRC"/tests/data/recipe/emu/*.json; do
  name=$(basename "$spec" .json)
  tests=$((tests + 1))
  if ! "$CUTEGEN" recipe --spec "$spec" --list >"$TMP/plan" 2>&1; then
    echo "FAIL: recipe --list $name"; cat "$TMP/plan"; failures=$((failures + 1)); continue
  fi
  if [ "${CUTEGEN_RECIPE_VARIANTS:-first}" = all ]; then
    picks=$(sed -n 's/^variant \([0-9]*\):.*/\1/p' "$TMP/plan")
  else
    picks=0
    case $name in nn_odd|tt_odd|linear_epi) picks="0 1";; esac
    [ "$name" = nn_aligned ] && picks="0 $(sed -n 's/^variant \([0-9]*\): gemm tf32.*/\1/p' "$TMP/plan" | head -1)"
  fi
  # pointwise convolutions (pw_*): their GEMM variants, the first of the list
  # (src/recipe_conv.c recipe_conv_as_gemm), the reference the convolution itself
  case $name in pw_*)
    picks=$(sed -n 's/^variant \([0-9]*\): conv as gemm [0-9a-z]* tile.*/\1/p' "$TMP/plan" | head -2 | tr '\n' ' ')
    if ! grep -q "^variant 0: conv as gemm" "$TMP/plan"; then
      echo "FAIL: $name: variant 0 is not the pointwise convolution's GEMM:"; grep -m2 "^variant" "$TMP/plan"
      failures=$((failures + 1)); continue
    fi;;
  esac
  for k in $picks; do
    # the matrix-vector kernel (recipes/gemm_gemv.cu: a sum of rows as A @ the sum of B's
    # rows) is not emulated: the first tensor-core variant stands in for it
    if grep -q "^variant $k: gemv" "$TMP/plan"; then
      k=$(sed -n 's/^variant \([0-9]*\): gemm 3x.*/\1/p' "$TMP/plan" | head -1)
      [ -n "$k" ] || { echo "FAIL: $name lists no tensor-core variant"; failures=$((failures + 1)); continue; }
    fi
    # the WGMMA kernel (recipes/gemm_wgmma.cu) is not emulated: its layouts are checked below
    grep -q "^variant $k: gemm wgmma" "$TMP/plan" && { echo "FAIL: $name variant $k is a WGMMA kernel: emulate gemm_tc.cu variants"; failures=$((failures + 1)); continue; }
    out="$TMP/gen/$name.v$k.cu"
    if ! "$CUTEGEN" recipe --spec "$spec" --variant "$k" --out "$out" >/dev/null 2>"$TMP/err"; then
      echo "FAIL: generate $name variant $k"; cat "$TMP/err"; failures=$((failures + 1)); continue
    fi
    # (no trailing blank: xargs -L would join the next line)
    echo "$name.v$k $(grep -m1 "^variant $k:" "$TMP/plan" | cut -d: -f2- | cut -d'[' -f1 | sed 's/ *$//')" >>"$jobs"
  done
  echo "ok: $name generated"
done
# tiles the small fixtures' variant lists do not reach (the warp layouts differ):
# variant 0 with the tile rewritten
retile() {
  local name=$1 bm=$2 bn=$3 bk=$4 wm=$5 wn=$6 st=$7
  local out="$TMP/gen/$name.t${bm}x${bn}x${bk}w${wm}x${wn}.cu"
  sed -e "s/^#define CGR_BM .*/#define CGR_BM $bm/" -e "s/^#define CGR_BN .*/#define CGR_BN $bn/" \
      -e "s/^#define CGR_BK .*/#define CGR_BK $bk/" -e "s/^#define CGR_WM .*/#define CGR_WM $wm/" \
      -e "s/^#define CGR_WN .*/#define CGR_WN $wn/" -e "s/^#define CGR_STAGES .*/#define CGR_STAGES $st/" \
      -e "s/^#define CGR_SPLITK .*/#define CGR_SPLITK 1/" "$TMP/gen/$name.v0.cu" >"$out"
  echo "$(basename "$out" .cu) tile=${bm}x${bn}x${bk} warps=${wm}x${wn} stages=$st" >>"$jobs"
}
retile nt_bmm 256 128 32 4 2 3
retile tn_vec 128 128 32 2 2 3
retile tn_vec 128 256 32 2 4 3
retile tt_odd 64 128 32 2 2 4

# recipes/gemm_wgmma.cu: the producer's swizzle arithmetic and thread mapping against
# CuTe's layouts (tests/cli/recipe_wgmma_layout.cpp), for the variants listed (matmul_ta:
# both operands along their rows, split through slabs), a 64 x 64 tile at 3 stages, and a
# 48-row B tile (the last slab past the padded rows)
: >"$TMP/wgmma_jobs"
for spec in matmul bmm matmul_ta; do
  plan=$("$CUTEGEN" recipe --spec "$SRC/tests/data/recipe/$spec.json" --list 2>&1)
  for k in $(echo "$plan" | sed -n 's/^variant \([0-9]*\): gemm wgmma.*/\1/p'); do
    "$CUTEGEN" recipe --spec "$SRC/tests/data/recipe/$spec.json" --variant "$k" --out "$TMP/gen/wgmma_$spec.v$k.cu" >/dev/null
    echo "wgmma_$spec.v$k $(echo "$plan" | grep -m1 "^variant $k:" | cut -d: -f2-)" >>"$TMP/wgmma_jobs"
  done
done
first=$(ls "$TMP"/gen/wgmma_matmul.v*.cu 2>/dev/null | head -1)
if [ -n "$first" ]; then
  sed -e "s/^#define CGR_BM .*/#define CGR_BM 64/" -e "s/^#define CGR_BN .*/#define CGR_BN 64/" \
      -e "s/^#define CGR_STAGES .*/#define CGR_STAGES 3/" "$first" >"$TMP/gen/wgmma_matmul.t64x64.cu"
  echo "wgmma_matmul.t64x64 tile=64x64x32 stages=3" >>"$TMP/wgmma_jobs"
fi
ta=$(ls "$TMP"/gen/wgmma_matmul_ta.v*.cu 2>/dev/null | head -1)
if [ -n "$ta" ]; then
  sed -e "s/^#define CGR_BN .*/#define CGR_BN 48/" "$ta" >"$TMP/gen/wgmma_matmul_ta.n48.cu"
  echo "wgmma_matmul_ta.n48 tile=128x48x32 (N 4096: 4128 padded rows, the last slab half past them)" >>"$TMP/wgmma_jobs"
else
  echo "FAIL: no WGMMA variant of matmul_ta listed (the slabs' test)"; failures=$((failures + 1))
fi
# the variants above hold each tile from its max to its split (CGR_TILE_HOLD 1, the
# generator's since lab round 54): the form before, each tile read again for its split
# (slabs along the rows), on an operand along k (matmul's A) and along its rows (matmul_ta's)
for spec in matmul matmul_ta; do
  ts=$(grep -l '^#define CGR_TILE_HOLD 1$' "$TMP"/gen/wgmma_$spec.v*.cu 2>/dev/null | head -1)
  if [ -n "$ts" ]; then
    sed 's/^#define CGR_TILE_HOLD 1$/#define CGR_TILE_HOLD 0/' "$ts" >"$TMP/gen/wgmma_$spec.reread.cu"
    echo "wgmma_$spec.reread tile scales, each tile read again for its split" >>"$TMP/wgmma_jobs"
  else
    echo "FAIL: no WGMMA variant of $spec holding its tiles (CGR_TILE_HOLD 1): src/recipe_gemm.c writes it for the 3xFP16 split-first kernel; if that changed, update this test"; failures=$((failures + 1))
  fi
done
while read -r name desc; do
  tests=$((tests + 1))
  run_emulator "$name" recipe_wgmma_layout.cpp "$desc"
done <"$TMP/wgmma_jobs"
[ -s "$TMP/wgmma_jobs" ] || { echo "FAIL: no WGMMA variant of matmul or bmm listed"; failures=$((failures + 1)); }

cat >"$TMP/run.sh" <<EOS
#!/usr/bin/env bash
name=\${1%% *}; set -- \${1#* }
if ! "$cxx" -std=c++17 -O1 -w -DCGR_KERNEL="\"$TMP/gen/\$name.cu\"" ${incs[*]} \\
     "$SRC/tests/cli/recipe_gemm_emu.cpp" -o "$TMP/bin/\$name" >"$TMP/log/\$name.log" 2>&1; then
  echo "FAIL: compile \$name (\$*)"; grep -m 8 error "$TMP/log/\$name.log" | sed 's/^/  /'; exit 0
fi
if "$TMP/bin/\$name" >>"$TMP/log/\$name.log" 2>&1; then
  echo "ok: \$name (\$*): \$(grep '^emu:' "$TMP/log/\$name.log" | tail -1)"
else
  echo "FAIL: \$name (\$*):"; tail -n 12 "$TMP/log/\$name.log" | sed 's/^/  /'
fi
rm -f "$TMP/bin/\$name"
EOS
echo "emulating $(wc -l <"$jobs") kernels, 2 at a time"
start=$(date +%s)
# one job a line, taken whole (-d: quotes in a description are not xargs syntax)
xargs -P 2 -d '\n' -n 1 bash "$TMP/run.sh" <"$jobs" >"$TMP/results"
cat "$TMP/results"
echo "emulated in $(( $(date +%s) - start )) s"
n_ok=$(grep -c '^ok' "$TMP/results")
n_fail=$(grep -c '^FAIL' "$TMP/results")
# every job reported (a job lost on the way must not pass unseen)
if [ $((n_ok + n_fail)) -ne "$(wc -l <"$jobs")" ]; then
  echo "FAIL: $(wc -l <"$jobs") kernels to emulate, $((n_ok + n_fail)) reported"; failures=$((failures + 1))
fi
tests=$((tests + n_ok + n_fail))
failures=$((failures + n_fail))
finish
