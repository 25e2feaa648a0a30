#!/usr/bin/env bash
# The reference process records the one value of a tensor constant that tracing made an
# attribute (`torch.tensor(0.5)` in forward(): get_attr '_tensor_constant0', not an
# input) in the spec's graph; the recipes take it as a constant (level 2 #31).
# tests/python/test_tensor_constant.py checks python/cutegen_ref.py's tensor_constant()
# with stand-ins for torch; then a spec holding such a value is covered, and one without
# it says why not.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "no python3"
expect_exit 0 "tensor_constant() with stand-ins for torch" -- python3 "$SRC/tests/python/test_tensor_constant.py" "$SRC"
sed 's/^/  /' "$TMP/out"
expect_exit 0 "a spec with the constant's value: covered" -- \
  "$CUTEGEN" recipe --spec "$SRC/tests/data/recipe/l2_31_tensor_constant_value.json"
expect_grep 'minimum\(\(r \+ conv\.bias\), 0\.5\)' "$TMP/out" "the constant in the epilogue"
expect_exit 1 "the same spec without it: not covered" -- \
  "$CUTEGEN" recipe --spec "$SRC/tests/data/recipe/staged_l2_31_not_covered.json"
expect_grep "the spec holds no value for it" "$TMP/out" "and says why"
finish
