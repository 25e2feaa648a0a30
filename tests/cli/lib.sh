# Shared helpers for the CLI tests (git's t/test-lib.sh in miniature).
# Each test script sources this, calls expect_* helpers, and ends with `finish`.
set -u
CUTEGEN=${CUTEGEN_BIN:-$(cd "$(dirname "$0")/../.." && pwd)/build/cutegen}
SRC=${CUTEGEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cutegen-cli.XXXXXX")
export CUTEGEN_CACHE_DIR="$TMP/cache"
trap 'rm -rf "$TMP"' EXIT
failures=0
tests=0

# expect_exit CODE DESCRIPTION -- COMMAND...: runs it, output in $TMP/out and $TMP/err
expect_exit() {
  local want=$1 what=$2; shift 3
  tests=$((tests + 1))
  "$@" >"$TMP/out" 2>"$TMP/err"
  local got=$?
  if [ "$got" -ne "$want" ]; then
    echo "FAIL: $what: exit $got, expected $want"
    sed 's/^/  out: /' "$TMP/out" | head -20
    sed 's/^/  err: /' "$TMP/err" | head -20
    failures=$((failures + 1))
    return 1
  fi
  echo "ok: $what"
}

# expect_grep PATTERN FILE DESCRIPTION
expect_grep() {
  tests=$((tests + 1))
  if ! grep -q -E -- "$1" "$2"; then
    echo "FAIL: $3: /$1/ not in $(basename "$2"):"
    sed 's/^/  | /' "$2" | head -20
    failures=$((failures + 1))
    return 1
  fi
  echo "ok: $3"
}

# expect_nogrep PATTERN FILE DESCRIPTION: no line of FILE matches
expect_nogrep() {
  tests=$((tests + 1))
  if grep -q -E -- "$1" "$2"; then
    echo "FAIL: $3: /$1/ found in $(basename "$2"):"
    grep -E -- "$1" "$2" | sed 's/^/  | /' | head -10
    failures=$((failures + 1))
    return 1
  fi
  echo "ok: $3"
}

skip() {
  echo "SKIP: $*"
  exit 77
}

finish() {
  echo "$tests checks, $failures failed"
  [ "$failures" -eq 0 ]
}
