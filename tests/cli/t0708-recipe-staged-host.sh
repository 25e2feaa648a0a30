#!/usr/bin/env bash
# cutegen recipe, staged plans: the glue of a two-stage candidate (src/recipe_stage.c) run
# on the host. For each small chain of tests/data/recipe/staged-host/ (a convolution then an
# InstanceNorm, a convolution then a max pool, a convolution then a global pool whose
# output is viewed), the candidate is generated with --recipes pointing at stand-in
# templates (host code in place of conv_tc.cu, norm.cu, pool.cu and reduce.cu,
# checking what they are handed and writing known values; ops.cuh is the real one), so the
# real composition runs: includes hoisted, both stages in namespaces with their macros
# undefined between them (stage 1 fails to compile if stage 0's reach it), entry points
# renamed, the intermediate at the workspace's start. tests/cli/recipe_staged_host.cpp
# checks the workspace size and every output. Needs a C++17 compiler and the CUDA headers
# (need_host_cute); skips, saying so, without them. The real kernels of staged plans are
# compiled by t0700.
. "$(dirname "$0")/lib.sh"

need_host_cute

fake="$TMP/recipes"
mkdir -p "$fake" "$TMP/gen" "$TMP/bin" "$TMP/log"
cp "$SRC/recipes/ops.cuh" "$fake/"
cp "$SRC/tests/data/recipe/staged-host/templates/stage0.cu" "$fake/conv_tc.cu"
cp "$SRC/tests/data/recipe/staged-host/templates/stage1.cu" "$fake/norm.cu"
cp "$SRC/tests/data/recipe/staged-host/templates/stage1.cu" "$fake/pool.cu"
cp "$SRC/tests/data/recipe/staged-host/templates/stage1.cu" "$fake/reduce.cu"

# name | input shapes | their ndims | output shape | output ndim | COUT | intermediate bytes
cases=(
  "conv_instnorm|{{2,3,10,10},{4,3,3,3},{4}}|{4,4,1}|{2,4,8,8}|4|4|$((2*4*8*8*4))"
  "conv_maxpool|{{2,3,10,10},{5,3,3,3},{5}}|{4,4,1}|{2,5,4,4}|4|5|$((2*5*8*8*4))"
  # conv | global average pool whose output is viewed by two squeezes (no third stage:
  # the pool's stage writes the [2, 4] output handed to it as [2, 4, 1, 1])
  "conv_pool_view|{{2,3,10,10},{4,3,3,3},{4}}|{4,4,1}|{2,4}|2|4|$((2*4*8*8*4))"
)
for c in "${cases[@]}"; do
  IFS='|' read -r name ins ndims outs ondim cout midb <<<"$c"
  tests=$((tests + 1))
  spec="$SRC/tests/data/recipe/staged-host/$name.json"
  if ! "$CUTEGEN" recipe --spec "$spec" --recipes "$fake" --out "$TMP/gen/$name.cu" >"$TMP/log/$name.gen" 2>&1; then
    echo "FAIL: $name: generation"; sed 's/^/  /' "$TMP/log/$name.gen"; failures=$((failures + 1)); continue
  fi
  grep -q "^family: staged" "$TMP/log/$name.gen" || { echo "FAIL: $name: not a staged plan"; failures=$((failures + 1)); continue; }
  if ! "$cxx" -std=c++17 -O1 -w -DCGR_KERNEL="\"$TMP/gen/$name.cu\"" -DIN_SHAPES="$ins" -DIN_NDIMS="$ndims" \
       -DOUT_SHAPE="$outs" -DOUT_NDIM="$ondim" -DEXPECT_COUT="$cout" -DEXPECT_NIN1=4 -DMID_BYTES="$midb" \
       -DSTAGE_WS=1000 "${incs[@]}" "$SRC/tests/cli/recipe_staged_host.cpp" -o "$TMP/bin/$name" >"$TMP/log/$name.log" 2>&1; then
    echo "FAIL: compile $name"; grep -m 8 -E "error" "$TMP/log/$name.log" | sed 's/^/  /'; failures=$((failures + 1))
  elif "$TMP/bin/$name" >>"$TMP/log/$name.log" 2>&1; then
    echo "ok: $name: $(tail -1 "$TMP/log/$name.log")"
  else
    echo "FAIL: $name:"; tail -n 8 "$TMP/log/$name.log" | sed 's/^/  /'; failures=$((failures + 1))
  fi
done

# the macro isolation can fail: with stage 0's #undef lines removed, stage 1 must not compile
tests=$((tests + 1))
sed '/^#undef FAKE_WS_BYTES$/d' "$TMP/gen/conv_instnorm.cu" >"$TMP/gen/leak.cu"
if "$cxx" -std=c++17 -O1 -w -fsyntax-only -DCGR_KERNEL="\"$TMP/gen/leak.cu\"" -DIN_SHAPES="{{2,3,10,10},{4,3,3,3},{4}}" \
     -DIN_NDIMS="{4,4,1}" -DOUT_SHAPE="{2,4,8,8}" -DOUT_NDIM=4 -DEXPECT_COUT=4 -DEXPECT_NIN1=4 -DMID_BYTES=2048 \
     -DSTAGE_WS=1000 "${incs[@]}" "$SRC/tests/cli/recipe_staged_host.cpp" >"$TMP/log/leak.log" 2>&1; then
  echo "FAIL: a stage-0 macro left defined did not break stage 1 (the check is blind)"; failures=$((failures + 1))
elif ! grep -q "FAKE_WS_BYTES reached stage 1" "$TMP/log/leak.log"; then
  echo "FAIL: the leak test failed for another reason:"; grep -m 4 error "$TMP/log/leak.log" | sed 's/^/  /'
  failures=$((failures + 1))
else
  echo "ok: with stage 0's #undef FAKE_WS_BYTES removed, stage 1 does not compile"
fi
finish
