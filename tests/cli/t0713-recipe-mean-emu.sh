#!/usr/bin/env bash
# cutegen recipe, CONV family: a mean or sum over all the pixels of a transposed convolution,
# folded (recipes/conv_mean.cu). Each small problem of tests/data/recipe/conv-fold/ (a 2D one
# with padding, stride 2 and output padding, as level 2 #44; a grouped 3D one with padding,
# dilation and output padding under a global average pooling; a 1D one without padding,
# stride 3 and dilation 2, summed) is generated as its first variant, which must be the
# fold, and its cell math (tap_lo, tap_hi, cell_of, single_w, in_box) compiled with the
# host C++ compiler into tests/cli/recipe_mean_emu.cpp, which folds random x and w through
# it and compares each output's sum with the direct transposed convolution's, in double.
# Needs a C++17 compiler and the CUDA headers; skips, saying so, without them.
. "$(dirname "$0")/lib.sh"

need_host_cute

mkdir -p "$TMP/gen" "$TMP/bin" "$TMP/log"
for spec in "$SRC"/tests/data/recipe/conv-fold/*.json; do
  name=$(basename "$spec" .json)
  tests=$((tests + 1))
  first=$("$CUTEGEN" recipe --spec "$spec" --list 2>&1 | grep -m 1 "^variant 0:")
  case $first in
    *"conv folded"*) ;;
    *) echo "FAIL: $name: variant 0 is not the fold: ${first:-none listed}"; failures=$((failures + 1)); continue ;;
  esac
  if ! "$CUTEGEN" recipe --spec "$spec" --variant 0 --out "$TMP/gen/$name.cu" >/dev/null 2>"$TMP/log/$name.gen"; then
    echo "FAIL: $name: generation"; sed 's/^/  /' "$TMP/log/$name.gen"; failures=$((failures + 1)); continue
  fi
  if ! "$cxx" -std=c++17 -O1 -w -DCGR_KERNEL="\"$TMP/gen/$name.cu\"" "${incs[@]}" \
       "$SRC/tests/cli/recipe_mean_emu.cpp" -o "$TMP/bin/$name" >"$TMP/log/$name.log" 2>&1; then
    echo "FAIL: compile $name"; grep -m 8 error "$TMP/log/$name.log" | sed 's/^/  /'; failures=$((failures + 1))
  elif "$TMP/bin/$name" >>"$TMP/log/$name.log" 2>&1; then
    echo "ok: $name (${first#variant 0: }): $(tail -1 "$TMP/log/$name.log")"
  else
    echo "FAIL: $name:"; tail -n 8 "$TMP/log/$name.log" | sed 's/^/  /'; failures=$((failures + 1))
  fi
done
finish
