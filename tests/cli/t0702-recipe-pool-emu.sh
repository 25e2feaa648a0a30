#!/usr/bin/env bash
# cutegen recipe, POOL family: generated pooling kernels run on the host. Each small pool
# fixture's kernel (recipes/pool.cu with the generated parameters) is compiled with the
# host C++ compiler into tests/cli/recipe_pool_emu.cpp, which runs the kernel's own tile
# code CTA after CTA (cgr_pool::emulate) on random inputs with NaNs and compares every
# output with ATen's loops: windows, padding, dilation, ceil mode, divisors, tile edges,
# the column permutation and both staged load paths, without a GPU. By default variant 0
# and the first direct variant of each fixture; CUTEGEN_RECIPE_VARIANTS=all runs all.
# Needs a C++17 compiler, the CUDA headers and CUTLASS; skips, saying so, without them.
. "$(dirname "$0")/lib.sh"

need_host_cute

fixtures="pool_emu_max1d pool_emu_max2d pool_emu_max3d pool_emu_avg1d pool_emu_avg2d pool_emu_avg3d
pool_fn_max2d_ceil pool_fn_avg2d_nopad pool_fn_avg2d_ceil_pad pool_fn_avg2d_divisor pool_builtin_max1d pool_pro_epi_fp16
pool_epi_bf16 pool_adaptive pool_l2_avg3d_tuple pool_l2_max3d_tuple pool_l2_avg1d"

mkdir -p "$TMP/gen" "$TMP/bin" "$TMP/log"
jobs="$TMP/jobs"
: >"$jobs"
for name in $fixtures; do
  spec=$SRC/tests/data/recipe/$name.json
  tests=$((tests + 1))
  if ! "$CUTEGEN" recipe --spec "$spec" --list >"$TMP/plan" 2>&1; then
    echo "FAIL: recipe --list $name"; cat "$TMP/plan"; failures=$((failures + 1)); continue
  fi
  if [ "${CUTEGEN_RECIPE_VARIANTS:-first}" = all ]; then
    picks=$(sed -n 's/^variant \([0-9]*\):.*/\1/p' "$TMP/plan")
  else
    picks="0 $(sed -n 's/^variant \([0-9]*\):.* direct$/\1/p' "$TMP/plan" | head -1)"
  fi
  for k in $(echo "$picks" | tr ' ' '\n' | sort -un); do
    out="$TMP/gen/$name.v$k.cu"
    if ! "$CUTEGEN" recipe --spec "$spec" --variant "$k" --out "$out" >/dev/null 2>"$TMP/err"; then
      echo "FAIL: generate $name variant $k"; cat "$TMP/err"; failures=$((failures + 1)); continue
    fi
    echo "$name.v$k $(grep -m1 "^variant $k:" "$TMP/plan" | cut -d: -f2-)" >>"$jobs"
  done
  echo "ok: $name generated"
done

cat >"$TMP/run.sh" <<EOS
#!/usr/bin/env bash
name=\$1; shift
if ! "$cxx" -std=c++17 -O1 -w -DCGR_KERNEL="\"$TMP/gen/\$name.cu\"" ${incs[*]} \\
     "$SRC/tests/cli/recipe_pool_emu.cpp" -o "$TMP/bin/\$name" >"$TMP/log/\$name.log" 2>&1; then
  echo "FAIL: compile \$name (\$*)"; grep -m 8 error "$TMP/log/\$name.log" | sed 's/^/  /'; exit 0
fi
if "$TMP/bin/\$name" >>"$TMP/log/\$name.log" 2>&1; then
  echo "ok: \$name (\$*): \$(grep -c '^ok' "$TMP/log/\$name.log") load paths match ATen"
else
  echo "FAIL: \$name (\$*):"; tail -n 12 "$TMP/log/\$name.log" | sed 's/^/  /'
fi
rm -f "$TMP/bin/\$name"
EOS
echo "emulating $(wc -l <"$jobs") kernels, 2 at a time"
xargs -P 2 -L 1 bash "$TMP/run.sh" <"$jobs" >"$TMP/results"
cat "$TMP/results"
n_ok=$(grep -c '^ok' "$TMP/results")
n_fail=$(grep -c '^FAIL' "$TMP/results")
tests=$((tests + n_ok + n_fail))
failures=$((failures + n_fail))
finish
