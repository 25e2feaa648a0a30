#!/usr/bin/env bash
# cutegen recipe, staged plans: every intermediate of every staged fixture has the shape
# the fx graph gives that node, computed independently by tests/python/stage_shapes.py
# (PyTorch's shape rules for convolutions, pools, reductions, views, broadcasting; no
# torch needed). A wrong shape compiles and runs but computes something else (a mean
# broadcast back to its operand's shape, then summed). The checker is checked too: fed a
# wrong intermediate by a stand-in cutegen, it must fail.
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || skip "python3 not found"
specs=()
for f in "$SRC"/tests/data/recipe/*.json "$SRC"/tests/data/recipe/conv/*.json "$SRC"/tests/data/recipe/staged-host/*.json; do
  "$CUTEGEN" recipe --spec "$f" 2>/dev/null | grep -v '^expanded:' | head -1 | grep -q "^family: staged" && specs+=("$f")
done
tests=$((tests + 1))
if [ "${#specs[@]}" -lt 8 ]; then
  echo "FAIL: only ${#specs[@]} staged fixtures found"; failures=$((failures + 1))
elif python3 "$SRC/tests/python/stage_shapes.py" "$CUTEGEN" "${specs[@]}" >"$TMP/out" 2>&1 &&
     ! grep -q "^unknown" "$TMP/out"; then
  echo "ok: ${#specs[@]} staged fixtures, $(grep -o '[0-9]* intermediates' "$TMP/out" | awk '{s += $1} END {print s}') intermediates as the graph gives them"
else
  echo "FAIL: intermediates:"; grep -v "^ok" "$TMP/out" | sed 's/^/  /'; failures=$((failures + 1))
fi

tests=$((tests + 1))
cat >"$TMP/wrong-cutegen" <<'EOS'
#!/bin/sh
echo "family: staged (two plans in a row, cut after 'mean')"
echo "intermediate: 'mean' float32 [16, 128, 514, 514], contiguous, at the workspace's start (stage 1's input 0)"
EOS
chmod +x "$TMP/wrong-cutegen"
if python3 "$SRC/tests/python/stage_shapes.py" "$TMP/wrong-cutegen" "$SRC/tests/data/recipe/staged_l2_44_mean_of_mean.json" \
     >"$TMP/wrong" 2>&1; then
  echo "FAIL: the checker passed a mean broadcast back to [16, 128, 514, 514]"; failures=$((failures + 1))
elif grep -q "FAIL: .*'mean' is \[16, 128, 514, 514\], the graph gives \[16, 128, 1, 1\]" "$TMP/wrong"; then
  echo "ok: the checker fails a wrong intermediate"
else
  echo "FAIL: the checker failed otherwise:"; sed 's/^/  /' "$TMP/wrong"; failures=$((failures + 1))
fi
finish
