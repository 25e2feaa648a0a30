#!/usr/bin/env bash
# cutegen doctor: one line per piece, what is missing says how to get it, exit 0 only
# when eval can run, --json is valid JSON with the same checks.
. "$(dirname "$0")/lib.sh"

"$CUTEGEN" doctor >"$TMP/out" 2>"$TMP/err"
rc=$?
for piece in gpu nvcc cutlass torch nm objdump cache; do
  expect_grep "^(ok|missing|warn) +$piece " "$TMP/out" "doctor reports $piece"
done
if grep -q '^missing' "$TMP/out"; then
  tests=$((tests + 1))
  if [ "$rc" -eq 1 ]; then echo "ok: exit 1 when something is missing"; else
    echo "FAIL: exit $rc with a missing piece"; failures=$((failures + 1)); fi
  expect_grep "fix: " "$TMP/out" "missing pieces say how to fix them"
  expect_grep "^not ready" "$TMP/out" "the summary says not ready"
else
  tests=$((tests + 1))
  [ "$rc" -eq 0 ] && echo "ok: exit 0 when all is there" || { echo "FAIL: exit $rc"; failures=$((failures + 1)); }
fi

expect_exit 1 "a CUTLASS directory that is not one" -- "$CUTEGEN" doctor --cutlass "$TMP/empty"
expect_grep "^missing +cutlass " "$TMP/out" "a bad --cutlass is reported missing"
expect_exit 1 "a python without torch" -- "$CUTEGEN" doctor --python /bin/false
expect_grep "^missing +torch " "$TMP/out" "no torch is reported missing"

"$CUTEGEN" doctor --json >"$TMP/json" 2>/dev/null
expect_exit 0 "doctor --json is JSON" -- python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert {c['name'] for c in d['checks']} >= {'gpu','nvcc','cutlass','torch'}" "$TMP/json"
finish
