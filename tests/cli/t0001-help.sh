#!/usr/bin/env bash
# Every command in the table answers --help with usage on stdout and exit 0; unknown
# commands and flags are usage errors (exit 2).
. "$(dirname "$0")/lib.sh"

expect_exit 0 "cutegen --help" -- "$CUTEGEN" --help
cmds=$(sed -n 's/^  \([a-z]*\) .*/\1/p' "$TMP/out")
[ -n "$cmds" ] || { echo "FAIL: no commands listed"; failures=$((failures + 1)); }
for c in $cmds; do
  expect_exit 0 "cutegen $c --help" -- "$CUTEGEN" "$c" --help
  expect_grep "usage: cutegen $c" "$TMP/out" "$c --help prints its usage"
done
expect_exit 2 "unknown command" -- "$CUTEGEN" frobnicate
expect_grep "unknown command 'frobnicate'" "$TMP/err" "unknown command is named"
expect_exit 2 "no command" -- "$CUTEGEN"
expect_exit 0 "version" -- "$CUTEGEN" --version
finish
