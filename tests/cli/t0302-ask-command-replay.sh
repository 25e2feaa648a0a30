#!/bin/bash
# cutegen ask with the command and replay providers: the request JSON a command gets,
# failures of the command, and --record then --replay giving the same output (by hash
# and in order), with an unmatched request as a clear error.
. "${CUTEGEN_SOURCE_DIR:?}/tests/llm/lib.sh" || exit 1
export HOME=$T XDG_CONFIG_HOME=$T
unset CUTEGEN_PROVIDER CUTEGEN_MODEL CUTEGEN_BASE_URL CUTEGEN_CONFIG

cat > "$T/model.sh" <<'SH'
#!/bin/sh
# a stand-in model: saves the request and answers with its length
cat > "$(dirname "$0")/request.json"
echo "reply of $(wc -c < "$(dirname "$0")/request.json") bytes"
SH
chmod +x "$T/model.sh"

"$CUTEGEN_BIN" ask --command "$T/model.sh" --model m1 --system sys --max-tokens 5 "hello" >"$T/out" 2>"$T/err"
expect "command: exit 0" $? 0
expect_grep "command: reply" "reply of" "$T/out"
expect "command: request JSON on stdin" "$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["model"], r["system"], r["max_tokens"], r["messages"])' "$T/request.json")" "m1 sys 5 [{'content': 'hello', 'role': 'user'}]"

"$CUTEGEN_BIN" ask --command "false" "x" >/dev/null 2>"$T/err"; expect "command fails: exit 10" $? 10
expect_grep "command failure kind" "command_failed" "$T/err"
"$CUTEGEN_BIN" ask --command "sleep 10" --timeout 0.5 "x" >/dev/null 2>"$T/err"; expect "command time-out: exit 10" $? 10
"$CUTEGEN_BIN" ask --command "/nonexistent/prog" "x" >/dev/null 2>"$T/err"; expect "command missing: exit 10" $? 10

# Record against the server, then replay without it.
start_server
for p in one two three; do
    "$CUTEGEN_BIN" ask --base-url "$BASE" --model test-model --record "$T/rec.jsonl" "$p" >>"$T/live.out" 2>/dev/null
done
kill "$SERVER_PID"; SERVER_PID=
for p in one two three; do
    "$CUTEGEN_BIN" ask --replay "$T/rec.jsonl" --model test-model "$p" >>"$T/replay.out" 2>"$T/err"
done
expect "three live replies" "$(grep -c "You said" "$T/live.out")" 3
expect "replay gives the same output" "$(cat "$T/replay.out")" "$(cat "$T/live.out")"
expect_grep "replayed, at no cost" 'replayed' "$T/err"
expect_grep "replayed cost" '\$0.000000' "$T/err"
"$CUTEGEN_BIN" ask --replay "$T/rec.jsonl" --model test-model "never asked" >/dev/null 2>"$T/err"
expect "unmatched request: exit 10" $? 10
expect_grep "unmatched is a replay_miss" "replay_miss" "$T/err"
"$CUTEGEN_BIN" ask --replay "$T/rec.jsonl" --model other-model "one" >/dev/null 2>"$T/err"
expect "another model misses too" $? 10
"$CUTEGEN_BIN" ask --replay "$T/rec.jsonl" --replay-order --model x "anything" >"$T/out" 2>/dev/null
expect "in order: the first recorded reply" "$(cat "$T/out")" "$(head -1 "$T/live.out")"
python3 - "$T/rec.jsonl" <<'PY' >"$T/check" || fail "transcript lines"
import json, sys
for line in open(sys.argv[1]):
    o = json.loads(line)
    assert set(["request", "reply", "usage", "request_hash", "fail"]) <= set(o), o
    assert o["usage"]["input_tokens"] == 120 and o["fail"] == "none"
print("fine")
PY
expect "transcript lines are whole" "$(cat "$T/check")" "fine"

"$CUTEGEN_BIN" ask --help >"$T/help"; expect "help exits 0" $? 0
for w in openai anthropic command replay --record --replay-order OPENAI_API_KEY ANTHROPIC_API_KEY CUTEGEN_CONFIG CUTEGEN_MODEL "exit codes" --thinking --reasoning-effort; do
    expect_grep "help mentions $w" "$w" "$T/help"
done
finish
