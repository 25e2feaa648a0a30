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

# need_cutlass: sets $cutlass to CUTLASS's include directory ($CUTLASS_DIR, else the
# nvidia-cutlass python package), or skips the test saying how to get it.
need_cutlass() {
  cutlass=
  if [ -n "${CUTLASS_DIR:-}" ] && [ -d "$CUTLASS_DIR/include/cute" ]; then
    cutlass=$CUTLASS_DIR/include
  else
    local pkg
    pkg=$(python3 -c "import importlib.util as u; s=u.find_spec('cutlass_library'); print(s.submodule_search_locations[0] if s else '')" 2>/dev/null)
    [ -n "$pkg" ] && [ -d "$pkg/source/include/cute" ] && cutlass=$pkg/source/include
  fi
  [ -n "$cutlass" ] || skip "CUTLASS headers not found (\$CUTLASS_DIR or the nvidia-cutlass python package)"
}

# need_host_cute: for the host emulators (a template compiled by the host C++ compiler):
# sets $cxx and the array incs (the project's, CUTLASS's and the CUDA headers), or skips.
need_host_cute() {
  cxx=$(command -v "${CXX:-c++}" || command -v g++ || command -v clang++)
  [ -n "$cxx" ] || skip "no C++ compiler (c++, g++, clang++)"
  local nvcc cuda_inc= d
  nvcc=$(command -v nvcc || ls "${CUDA_HOME:-/nonexistent}/bin/nvcc" /usr/local/cuda/bin/nvcc 2>/dev/null | head -1)
  for d in "${CUDA_HOME:-/nonexistent}/include" "$(dirname "$(dirname "${nvcc:-/x/y}")")/include" /usr/local/cuda/include; do
    [ -f "$d/cuda_fp16.h" ] && { cuda_inc=$d; break; }
  done
  [ -n "$cuda_inc" ] || skip "CUDA headers not found (CUDA_HOME, nvcc, /usr/local/cuda)"
  need_cutlass
  incs=(-I "$SRC/include" -I "$cutlass" -I "$cuda_inc")
  [ -d "$cuda_inc/cccl" ] && incs+=(-I "$cuda_inc/cccl")
  return 0
}

# gen_variant SPEC V NAME: variant V of SPEC generated into $TMP/gen/NAME.cu; false (a FAIL
# counted, the generator's words shown) when it is not.
gen_variant() {
  local spec=$1 v=$2 name=$3
  mkdir -p "$TMP/gen" "$TMP/log"
  "$CUTEGEN" recipe --spec "$spec" --variant "$v" --out "$TMP/gen/$name.cu" >/dev/null 2>"$TMP/log/$name.gen" && return 0
  echo "FAIL: $name: generation"; sed 's/^/  /' "$TMP/log/$name.gen"; failures=$((failures + 1)); return 1
}

# gen_first SPEC PATTERN WHAT: variant 0 of SPEC, which must be listed as PATTERN (WHAT says
# what it should have been), generated into $TMP/gen/NAME.cu; sets name (the spec's basename)
# and first (variant 0's description); false (a FAIL counted) otherwise.
gen_first() {
  local spec=$1 pattern=$2 what=$3
  name=$(basename "$spec" .json)
  first=$("$CUTEGEN" recipe --spec "$spec" --list 2>&1 | grep -m 1 "^variant 0:")
  first=${first#variant 0: }
  case $first in
    *"$pattern"*) ;;
    *) echo "FAIL: $name: variant 0 is not $what: ${first:-none listed}"; failures=$((failures + 1)); return 1 ;;
  esac
  gen_variant "$spec" 0 "$name"
}

# build_and_run NAME LABEL ARGS...: a host program (ARGS: its source and -D flags) compiled by
# need_host_cute's $cxx with its incs into $TMP/bin/NAME and run: "ok: LABEL: its last line",
# else a FAIL counted, with the compiler's errors or the program's last lines.
build_and_run() {
  local name=$1 label=$2
  shift 2
  mkdir -p "$TMP/bin" "$TMP/log"
  if ! "$cxx" -std=c++17 -O1 -w "${incs[@]}" "$@" -o "$TMP/bin/$name" >"$TMP/log/$name.log" 2>&1; then
    echo "FAIL: compile $label"; grep -m 8 error "$TMP/log/$name.log" | sed 's/^/  /'; failures=$((failures + 1))
  elif "$TMP/bin/$name" >>"$TMP/log/$name.log" 2>&1; then
    echo "ok: $label: $(tail -1 "$TMP/log/$name.log")"
  else
    echo "FAIL: $label:"; tail -n 8 "$TMP/log/$name.log" | sed 's/^/  /'; failures=$((failures + 1))
  fi
}

# run_emulator NAME EMU LABEL: the generated $TMP/gen/NAME.cu compiled into the host emulator
# tests/cli/EMU and run (build_and_run): "ok: NAME (LABEL): its last line", else a FAIL counted.
run_emulator() {
  build_and_run "$1" "$1 ($3)" -DCGR_KERNEL="\"$TMP/gen/$1.cu\"" "$SRC/tests/cli/$2"
}

finish() {
  echo "$tests checks, $failures failed"
  [ "$failures" -eq 0 ]
}
