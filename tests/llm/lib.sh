# Shell helpers for the `cutegen ask` CLI tests: start tests/llm/server.py on a free
# port, script its faults, read back the requests it got, and simple assertions.
# Sourced by tests/cli/t03*-ask-*.sh; needs CUTEGEN_BIN and CUTEGEN_SOURCE_DIR.
set -u
: "${CUTEGEN_SOURCE_DIR:?}" "${CUTEGEN_BIN:?}"
command -v python3 >/dev/null || { echo "skip: python3 not found (the test server needs it)"; exit 77; }
T=$(mktemp -d)
SERVER_PID=
cleanup() { [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
FAILS=0

start_server() {
    python3 "$CUTEGEN_SOURCE_DIR/tests/llm/server.py" --port-file "$T/port" >/dev/null 2>"$T/server.err" &
    SERVER_PID=$!
    for _ in $(seq 100); do [ -s "$T/port" ] && break; sleep 0.1; done
    PORT=$(cat "$T/port") || { echo "the test server did not start"; cat "$T/server.err"; exit 1; }
    BASE="http://127.0.0.1:$PORT/v1"
}
# serve STEP...: what the next requests get (see server.py)
serve() {
    python3 - "$PORT" "$@" <<'PY'
import json, sys, urllib.request
port, steps = sys.argv[1], sys.argv[2:]
def post(path, obj):
    urllib.request.urlopen(urllib.request.Request("http://127.0.0.1:%s%s" % (port, path),
                           data=json.dumps(obj).encode(), method="POST"))
post("/_reset", {})
post("/_script", {"steps": steps})
PY
}
# last_request EXPR: evaluates a Python expression on the last request r (dict)
last_request() {
    python3 - "$PORT" "$1" <<'PY'
import json, sys, urllib.request
reqs = json.load(urllib.request.urlopen("http://127.0.0.1:%s/_requests" % sys.argv[1]))
r = reqs[-1]; n = len(reqs)
print(eval(sys.argv[2]))
PY
}
ok()   { echo "ok - $1"; }
fail() { echo "FAIL - $1"; FAILS=$((FAILS + 1)); }
# expect NAME ACTUAL WANTED
expect() { if [ "$2" = "$3" ]; then ok "$1"; else fail "$1: got '$2', wanted '$3'"; fi; }
# expect_grep NAME PATTERN FILE
expect_grep() { if grep -q -- "$2" "$3"; then ok "$1"; else fail "$1: no '$2' in $3:"; cat "$3"; fi; }
expect_no_grep() { if grep -q -- "$2" "$3"; then fail "$1: '$2' found in $3"; else ok "$1"; fi; }
finish() { [ "$FAILS" -eq 0 ] && echo "all passed" && exit 0; echo "$FAILS failed"; exit 1; }
