#!/bin/bash
# cutegen ask with the openai provider against the local test server: the request it
# sends, the reply and usage it prints, retries, typed failures and their exit codes,
# and that a planted key never reaches stderr or a transcript.
. "${CUTEGEN_SOURCE_DIR:?}/tests/llm/lib.sh" || exit 1
start_server
KEY=sk-planted-key-0123456789abcdef
export OPENAI_API_KEY=$KEY
unset CUTEGEN_PROVIDER CUTEGEN_MODEL CUTEGEN_BASE_URL CUTEGEN_CONFIG
export HOME=$T XDG_CONFIG_HOME=$T
ask() { "$CUTEGEN_BIN" ask --config "$T/cfg.json" --base-url "$BASE" --model test-model --retry-base 0.01 "$@"; }
echo '{}' > "$T/cfg.json"

serve ok
ask "hello there" >"$T/out" 2>"$T/err"; expect "exit 0" $? 0
expect "reply on stdout" "$(cat "$T/out")" "Hello from the test server. You said: hello there"
expect_grep "usage on stderr" "120 input tokens (20 cached), 30 output (8 reasoning), \$0.000230" "$T/err"
expect "path" "$(last_request 'r["path"]')" "/v1/chat/completions"
expect "bearer key sent" "$(last_request 'r["headers"]["authorization"]')" "Bearer $KEY"
expect "streams by default" "$(last_request 'r["body"]["stream"], r["body"]["stream_options"]')" "(True, {'include_usage': True})"
expect "messages" "$(last_request 'r["body"]["messages"]')" "[{'role': 'user', 'content': 'hello there'}]"

serve ok
echo "from stdin" | ask --no-stream --system "be brief" --temperature 0.2 --max-tokens 77 - >"$T/out" 2>"$T/err"
expect "stdin prompt, whole reply" "$(cat "$T/out")" "Hello from the test server. You said: from stdin"
expect "body fields" "$(last_request '[r["body"][k] for k in ("max_tokens", "temperature")] + [r["body"]["messages"][0]["role"], "stream" in r["body"]]')" "[77, 0.2, 'system', False]"

serve 429:1 ok
ask "x" >"$T/out" 2>"$T/err"; expect "429 then ok: exit 0" $? 0
expect_grep "one retry reported" "1 retry" "$T/err"

serve 500 502 503 ok
ask --retries 2 "x" >"$T/out" 2>"$T/err"; expect "three 5xx, two retries: fails" $? 10
expect_grep "says it gave up" "gave up after 2 retries" "$T/err"

serve 401
ask "x" >"$T/out" 2>"$T/err"; expect "401 exit code" $? 10
expect_grep "401 says which variable" "set OPENAI_API_KEY" "$T/err"
expect_no_grep "key not in stderr" "$KEY" "$T/err"

serve context
ask "x" >"$T/out" 2>"$T/err"; expect "context exit code" $? 10
expect_grep "context message" "context_too_long" "$T/err"

serve 404
ask "x" 2>"$T/err" >/dev/null; expect_grep "unknown model named" "model 'test-model'" "$T/err"

serve length
ask "x" >"$T/out" 2>"$T/err"; expect "truncated exits 10" $? 10
expect "truncated text still printed" "$(cat "$T/out")" "Hello from t"

serve slow:3
ask --timeout 1 "x" >"$T/out" 2>"$T/err"; expect "time limit" $? 10
expect_grep "timeout kind" "(timeout)" "$T/err"

serve empty
ask --json "x" >"$T/out" 2>/dev/null
expect "--json empty reply" "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["fail"])' "$T/out")" "empty_reply"

# A planted key never reaches a transcript, even when the server echoes it back.
serve ok 401
ask --record "$T/rec.jsonl" "x" >/dev/null 2>&1
ask --record "$T/rec.jsonl" "y" >/dev/null 2>"$T/err"
expect "two calls recorded" "$(wc -l < "$T/rec.jsonl")" 2
expect_no_grep "key not in transcript" "$KEY" "$T/rec.jsonl"
expect_no_grep "key not in stderr (record)" "$KEY" "$T/err"

# Flags win over the environment, which wins over the config file.
echo '{"model": "from-file", "base_url": "http://127.0.0.1:1/v1"}' > "$T/cfg.json"
serve ok
CUTEGEN_BASE_URL=$BASE "$CUTEGEN_BIN" ask --config "$T/cfg.json" "x" >/dev/null 2>&1
expect "config model used, env base URL wins" "$(last_request 'r["body"]["model"]')" "from-file"
CUTEGEN_BASE_URL=$BASE CUTEGEN_MODEL=from-env "$CUTEGEN_BIN" ask --config "$T/cfg.json" "x" >/dev/null 2>&1
expect "env model wins over file" "$(last_request 'r["body"]["model"]')" "from-env"
CUTEGEN_BASE_URL=$BASE CUTEGEN_MODEL=from-env "$CUTEGEN_BIN" ask --config "$T/cfg.json" --model from-flag "x" >/dev/null 2>&1
expect "flag wins" "$(last_request 'r["body"]["model"]')" "from-flag"

"$CUTEGEN_BIN" ask --provider nonsense x >/dev/null 2>&1; expect "bad provider: usage exit" $? 2
unset OPENAI_API_KEY
"$CUTEGEN_BIN" ask --config "$T/none.json" --model gpt-4o x 2>"$T/err" >/dev/null; expect "missing config file: exit 2" $? 2
echo '{}' > "$T/cfg.json"
"$CUTEGEN_BIN" ask --config "$T/cfg.json" --model gpt-4o x 2>"$T/err" >/dev/null; expect "no key for hosted API: exit 2" $? 2
expect_grep "no key says which variable" "set OPENAI_API_KEY" "$T/err"
finish
