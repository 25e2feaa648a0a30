#!/bin/bash
# cutegen ask with the anthropic provider against the local test server: headers
# (x-api-key, anthropic-version), thinking, streamed and whole replies, usage with cache
# reads and writes, and typed failures.
. "${CUTEGEN_SOURCE_DIR:?}/tests/llm/lib.sh" || exit 1
start_server
KEY=sk-ant-planted-0123456789abcdef
export ANTHROPIC_API_KEY=$KEY HOME=$T XDG_CONFIG_HOME=$T
unset CUTEGEN_PROVIDER CUTEGEN_MODEL CUTEGEN_BASE_URL CUTEGEN_CONFIG
ask() { "$CUTEGEN_BIN" ask --provider anthropic --base-url "$BASE" --model claude-sonnet-4-5-20250929 --retry-base 0.01 "$@"; }

for mode in --stream --no-stream; do
    serve ok
    ask $mode --thinking 2048 --show-thinking --system "be brief" "hi" >"$T/out" 2>"$T/err"; expect "$mode: exit 0" $? 0
    expect "$mode: reply" "$(cat "$T/out")" "Hello from the test server. You said: hi"
    expect_grep "$mode: thinking shown" "a short answer will do" "$T/err"
    expect_grep "$mode: usage (cache read+write in input)" "130 input tokens (20 cached), 30 output" "$T/err"
    expect_grep "$mode: priced by prefix" '\$0.000794' "$T/err"
    expect "$mode: path" "$(last_request 'r["path"]')" "/v1/messages"
    expect "$mode: x-api-key" "$(last_request 'r["headers"]["x-api-key"]')" "$KEY"
    expect "$mode: version header" "$(last_request 'r["headers"]["anthropic-version"]')" "2023-06-01"
    expect "$mode: no bearer" "$(last_request '"authorization" in r["headers"]')" "False"
    expect "$mode: body" "$(last_request '(r["body"]["system"], r["body"]["thinking"], r["body"]["max_tokens"])')" "('be brief', {'type': 'enabled', 'budget_tokens': 2048}, 8192)"
done

serve ok
ask --thinking adaptive --anthropic-version 2099-01-01 --stop END "x" >/dev/null 2>&1
expect "adaptive thinking, version, stop" "$(last_request '(r["body"]["thinking"], r["headers"]["anthropic-version"], r["body"]["stop_sequences"])')" "({'type': 'adaptive'}, '2099-01-01', ['END'])"

serve 529 truncate ok
ask "x" >"$T/out" 2>"$T/err"; expect "overloaded, then cut stream, then ok" $? 0
expect_grep "two retries" "2 retries" "$T/err"

serve 401
ask "x" >/dev/null 2>"$T/err"; expect "401 exit" $? 10
expect_grep "401 names the variable" "set ANTHROPIC_API_KEY" "$T/err"
expect_no_grep "key not in stderr" "$KEY" "$T/err"

serve context
ask "x" >/dev/null 2>"$T/err"; expect_grep "prompt too long" "prompt is too long" "$T/err"
serve malformed
ask "x" >/dev/null 2>"$T/err"; expect "malformed exit" $? 10
expect_grep "malformed kind" "malformed_reply" "$T/err"

unset ANTHROPIC_API_KEY
"$CUTEGEN_BIN" ask --provider anthropic --model claude-sonnet-4-5 "x" >/dev/null 2>"$T/err"; expect "no key: exit 2" $? 2
expect_grep "no key names the variable" "set ANTHROPIC_API_KEY" "$T/err"
finish
