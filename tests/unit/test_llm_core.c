/*
 * Tests of the parts of src/llm*.c that need no server: the SSE parser, reply parsing
 * of both wire formats, error classification, Retry-After and backoff, prices and
 * budgets, the config file, and record-then-replay through the command provider.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "llm.h"
#include "util.h"

/* ---------------------------------------------------------------- SSE */

struct events {
    strbuf log;
};

static int on_event(void *ctx, const char *event, const char *data)
{
    struct events *e = ctx;
    strbuf_addf(&e->log, "[%s|%s]", event, data);
    return 0;
}

static void test_sse_split_anywhere(void **state)
{
    (void)state;
    const char *text = ": comment\r\nevent: a\r\ndata: one\r\ndata: two\r\n\r\n"
                       "data:{\"x\":1}\n\nevent: b\rdata: z\r\r";
    /* Every way of cutting the input in two gives the same events. */
    for (size_t cut = 0; cut <= strlen(text); cut++) {
        struct events e = { STRBUF_INIT };
        llm_sse s;
        llm_sse_init(&s, on_event, &e);
        assert_int_equal(llm_sse_feed(&s, text, cut), 0);
        assert_int_equal(llm_sse_feed(&s, text + cut, strlen(text) - cut), 0);
        assert_string_equal(e.log.buf, "[a|one\ntwo][|{\"x\":1}][b|z]");
        llm_sse_release(&s);
        strbuf_release(&e.log);
    }
}

static void test_sse_line_cap(void **state)
{
    (void)state;
    struct events e = { STRBUF_INIT };
    llm_sse s;
    llm_sse_init(&s, on_event, &e);
    s.max_line = 8;
    assert_int_equal(llm_sse_feed(&s, "data: 0123456789\n", 17), -2);
    llm_sse_release(&s);
    strbuf_release(&e.log);
}

/* ---------------------------------------------------------------- replies */

static void test_openai_parse(void **state)
{
    (void)state;
    const char *body = "{\"model\":\"m1\",\"choices\":[{\"index\":0,\"message\":{\"role\":"
                       "\"assistant\",\"content\":\"hi\",\"reasoning_content\":\"hmm\"},"
                       "\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":11,"
                       "\"completion_tokens\":7,\"prompt_tokens_details\":{\"cached_tokens\":3},"
                       "\"completion_tokens_details\":{\"reasoning_tokens\":2}}}";
    llm_result r;
    llm_result_init(&r);
    llm_openai_wire.parse_body(body, strlen(body), &r);
    assert_int_equal(r.fail, LLM_FAIL_NONE);
    assert_string_equal(r.text.buf, "hi");
    assert_string_equal(r.thinking.buf, "hmm");
    assert_string_equal(r.model, "m1");
    assert_int_equal(r.usage.input_tokens, 11);
    assert_int_equal(r.usage.cached_input_tokens, 3);
    assert_int_equal(r.usage.output_tokens, 7);
    assert_int_equal(r.usage.reasoning_tokens, 2);
    llm_result_reset(&r);
    llm_openai_wire.parse_body("{\"choices\":[]}", 14, &r);
    assert_int_equal(r.fail, LLM_FAIL_MALFORMED_REPLY);
    llm_result_release(&r);
}

static void test_anthropic_parse_and_stream(void **state)
{
    (void)state;
    const char *body = "{\"type\":\"message\",\"model\":\"c\",\"content\":[{\"type\":\"thinking\","
                       "\"thinking\":\"t\",\"signature\":\"s\"},{\"type\":\"text\",\"text\":\"a\"},"
                       "{\"type\":\"text\",\"text\":\"b\"}],\"stop_reason\":\"end_turn\",\"usage\":"
                       "{\"input_tokens\":5,\"cache_read_input_tokens\":4,"
                       "\"cache_creation_input_tokens\":2,\"output_tokens\":9}}";
    llm_result r;
    llm_result_init(&r);
    llm_anthropic_wire.parse_body(body, strlen(body), &r);
    assert_string_equal(r.text.buf, "ab");
    assert_string_equal(r.thinking.buf, "t");
    assert_int_equal(r.usage.input_tokens, 11);
    assert_int_equal(r.usage.cached_input_tokens, 4);
    assert_int_equal(r.usage.cache_write_tokens, 2);
    llm_result_reset(&r);
    /* A stream: the output usage arrives in message_delta. */
    void *st = llm_anthropic_wire.stream_begin(&r);
    llm_anthropic_wire.stream_event(st, "message_start",
        "{\"type\":\"message_start\",\"message\":{\"model\":\"c\",\"content\":[],\"usage\":"
        "{\"input_tokens\":5,\"cache_read_input_tokens\":0,\"output_tokens\":1}}}");
    llm_anthropic_wire.stream_event(st, "content_block_delta",
        "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\","
        "\"text\":\"xy\"}}");
    llm_anthropic_wire.stream_event(st, "message_delta",
        "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"max_tokens\"},\"usage\":"
        "{\"output_tokens\":40}}");
    llm_anthropic_wire.stream_event(st, "message_stop", "{\"type\":\"message_stop\"}");
    llm_anthropic_wire.stream_end(st, true);
    assert_int_equal(r.fail, LLM_FAIL_NONE);
    assert_int_equal(r.usage.input_tokens, 5);
    assert_int_equal(r.usage.output_tokens, 40);
    llm_result_check_reply(&r);
    assert_int_equal(r.fail, LLM_FAIL_TRUNCATED);
    assert_string_equal(r.text.buf, "xy");
    llm_result_release(&r);
}

static void test_classify(void **state)
{
    (void)state;
    llm_result r;
    llm_result_init(&r);
    llm_classify_status(400, "prompt is too long: 5 > 4", NULL, "m", "K", &r);
    assert_int_equal(r.fail, LLM_FAIL_CONTEXT_TOO_LONG);
    llm_classify_status(400, "x", "context_length_exceeded", "m", "K", &r);
    assert_int_equal(r.fail, LLM_FAIL_CONTEXT_TOO_LONG);
    llm_classify_status(400, "bad temperature", NULL, "m", "K", &r);
    assert_int_equal(r.fail, LLM_FAIL_BAD_REQUEST);
    llm_classify_status(403, "no", NULL, "m", "MY_KEY", &r);
    assert_int_equal(r.fail, LLM_FAIL_AUTH);
    assert_non_null(strstr(r.message.buf, "set MY_KEY"));
    llm_classify_status(404, "no model", NULL, "gpt-9", "K", &r);
    assert_non_null(strstr(r.message.buf, "'gpt-9'"));
    llm_classify_status(429, "slow down", NULL, "m", "K", &r);
    assert_int_equal(r.fail, LLM_FAIL_RATE_LIMITED);
    llm_result_release(&r);
}

static void test_retry_after_and_backoff(void **state)
{
    (void)state;
    assert_true(llm_parse_retry_after(" 7\r\n") == 7);
    assert_true(llm_parse_retry_after("0.5") == 0.5);
    assert_true(llm_parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0); /* past */
    assert_true(llm_parse_retry_after("soon") < 0);
    llm_config cfg;
    llm_config_init(&cfg);
    cfg.retry_base_s = 1;
    cfg.retry_max_s = 10;
    unsigned seed = 1;
    for (int n = 0; n < 8; n++) {
        double d = llm_backoff_delay(&cfg, n, &seed);
        double cap = n < 4 ? (double)(1 << n) : 10;
        assert_true(d >= cap / 2 && d <= cap);
    }
    llm_config_release(&cfg);
}

static void test_redact(void **state)
{
    (void)state;
    strbuf sb = STRBUF_INIT;
    strbuf_adds(&sb, "key sk-abcdef and sk-abcdef again");
    llm_redact(&sb, "sk-abcdef");
    assert_string_equal(sb.buf, "key [redacted] and [redacted] again");
    strbuf_release(&sb);
}

/* ---------------------------------------------------------------- prices, budgets */

static void test_prices(void **state)
{
    (void)state;
    llm_prices p;
    strbuf err = STRBUF_INIT;
    assert_int_equal(llm_prices_load(&p, NULL, &err), 0);
    assert_non_null(p.date);
    const llm_price *sonnet = llm_prices_find(&p, "claude-sonnet-4-5-20250929");
    assert_non_null(sonnet);
    assert_string_equal(sonnet->model, "claude-sonnet-4-5");
    assert_string_equal(llm_prices_find(&p, "gpt-4o-mini-2024-07-18")->model, "gpt-4o-mini");
    assert_null(llm_prices_find(&p, "no-such-model"));
    llm_usage u = { .input_tokens = 1000000, .cached_input_tokens = 500000,
                    .cache_write_tokens = 100000, .output_tokens = 1000000 };
    /* 400k fresh at $3, 500k read at $0.30, 100k written at $3.75, 1M out at $15 */
    double c = llm_price_cost(sonnet, &u);
    assert_true(c > 1.2 + 0.15 + 0.375 + 15 - 1e-9 && c < 1.2 + 0.15 + 0.375 + 15 + 1e-9);
    llm_prices_release(&p);
    assert_int_equal(llm_prices_load(&p, "/nonexistent/prices.json", &err), -1);
    assert_non_null(strstr(err.buf, "--prices"));
    llm_prices_release(&p);
    strbuf_release(&err);
}

static void test_budgets(void **state)
{
    (void)state;
    llm_limits l = { .calls = 3, .tokens = 250 };
    llm_budget b;
    llm_budget_init(&b, &l);
    strbuf why = STRBUF_INIT;
    llm_result r;
    llm_result_init(&r);
    r.usage.input_tokens = 100;
    r.usage.output_tokens = 50;
    r.cost_known = true;
    r.cost_usd = 0.5;
    assert_int_equal(llm_budget_admit(&b, "task", &why), 0);
    llm_budget_charge(&b, &r);
    assert_int_equal(llm_budget_admit(&b, "task", &why), 0);
    llm_budget_charge(&b, &r);
    /* 300 tokens used of 250: the third call may not start. */
    assert_int_equal(llm_budget_admit(&b, "task", &why), -1);
    assert_non_null(strstr(why.buf, "250 tokens"));
    llm_budget_release(&b);

    llm_limits d = { .dollars = 1.0 };
    llm_budget_init(&b, &d);
    assert_int_equal(llm_budget_admit(&b, "run", &why), 0);
    llm_budget_charge(&b, &r);
    assert_int_equal(llm_budget_admit(&b, "run", &why), 0);
    llm_budget_charge(&b, &r);
    strbuf_reset(&why);
    assert_int_equal(llm_budget_admit(&b, "run", &why), -1);
    assert_non_null(strstr(why.buf, "run budget of $1"));
    llm_budget_release(&b);

    llm_limits c = { .calls = 1 };
    llm_budget_init(&b, &c);
    assert_int_equal(llm_budget_admit(&b, "run", &why), 0);
    assert_int_equal(llm_budget_admit(&b, "run", &why), -1);
    llm_budget_release(&b);
    strbuf_release(&why);
    llm_result_release(&r);
}

/* ---------------------------------------------------------------- config */

static void test_config_file_and_env(void **state)
{
    (void)state;
    char path[] = "/tmp/cutegen-llm-config-XXXXXX";
    int fd = mkstemp(path);
    const char *text = "{\"provider\": \"anthropic\", \"model\": \"from-file\", "
                       "\"max_retries\": 7, \"command\": [\"cat\", \"-\"], "
                       "\"budget\": {\"calls\": 9, \"dollars\": 2.5}}";
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    llm_config cfg;
    llm_config_init(&cfg);
    strbuf err = STRBUF_INIT;
    assert_int_equal(llm_config_load_file(&cfg, path, true, &err), 0);
    assert_int_equal(cfg.provider, LLM_PROVIDER_ANTHROPIC);
    assert_string_equal(cfg.model, "from-file");
    assert_int_equal(cfg.max_retries, 7);
    assert_string_equal(cfg.command[1], "-");
    assert_int_equal(cfg.run_limits.calls, 9);
    assert_string_equal(llm_config_key_env(&cfg), "ANTHROPIC_API_KEY");
    setenv("CUTEGEN_MODEL", "from-env", 1);
    assert_int_equal(llm_config_load_env(&cfg, &err), 0);
    assert_string_equal(cfg.model, "from-env");
    unsetenv("CUTEGEN_MODEL");
    setenv("CUTEGEN_PROVIDER", "nonsense", 1);
    assert_int_equal(llm_config_load_env(&cfg, &err), -1);
    assert_non_null(strstr(err.buf, "unknown provider 'nonsense'"));
    unsetenv("CUTEGEN_PROVIDER");
    llm_config_release(&cfg);

    FILE *f = fopen(path, "w");
    fputs("{\"api_key\": \"sk-no\"}", f);
    fclose(f);
    llm_config_init(&cfg);
    strbuf_reset(&err);
    assert_int_equal(llm_config_load_file(&cfg, path, true, &err), -1);
    llm_config_release(&cfg);
    unlink(path);
    llm_config_init(&cfg);
    assert_int_equal(llm_config_load_file(&cfg, path, false, &err), 0); /* optional, absent */
    assert_int_equal(llm_config_load_file(&cfg, path, true, &err), -1);
    llm_config_release(&cfg);
    strbuf_release(&err);
}

static void test_missing_key_says_which_variable(void **state)
{
    (void)state;
    llm_config cfg;
    llm_config_init(&cfg);
    cfg.model = xstrdup("gpt-4o");
    unsetenv("OPENAI_API_KEY");
    strbuf err = STRBUF_INIT;
    assert_null(llm_client_new(&cfg, &err));
    assert_non_null(strstr(err.buf, "set OPENAI_API_KEY"));
    /* A local server needs no key. */
    cfg.base_url = xstrdup("http://127.0.0.1:9/v1");
    strbuf_reset(&err);
    llm_client *c = llm_client_new(&cfg, &err);
    assert_non_null(c);
    llm_client_free(c);
    llm_config_release(&cfg);
    strbuf_release(&err);
}

/* ---------------------------------------------------------------- record, replay */

static void test_record_then_replay(void **state)
{
    (void)state;
    char path[] = "/tmp/cutegen-llm-transcript-XXXXXX";
    close(mkstemp(path));
    llm_config cfg;
    llm_config_init(&cfg);
    llm_config_set_command(&cfg, "tr a-z A-Z");
    cfg.provider = LLM_PROVIDER_COMMAND;
    cfg.model = xstrdup("cmd-model");
    cfg.record_path = xstrdup(path);
    strbuf err = STRBUF_INIT;
    llm_client *c = llm_client_new(&cfg, &err);
    assert_non_null(c);
    const char *prompts[] = { "first", "second", "first" };
    llm_result r;
    llm_result_init(&r);
    for (int i = 0; i < 3; i++) {
        llm_request req;
        llm_request_init(&req);
        llm_request_add(&req, "user", prompts[i]);
        assert_int_equal(llm_call(c, &req, NULL, &r), 0);
        assert_non_null(strstr(r.text.buf, i == 1 ? "SECOND" : "FIRST"));
        llm_request_release(&req);
    }
    llm_client_free(c);

    /* Replay by hash, in another order; a request never recorded is a typed miss. */
    cfg.provider = LLM_PROVIDER_REPLAY;
    cfg.replay_path = xstrdup(path);
    free(cfg.record_path);
    cfg.record_path = NULL;
    c = llm_client_new(&cfg, &err);
    assert_non_null(c);
    const char *again[] = { "second", "first", "third" };
    for (int i = 0; i < 3; i++) {
        llm_request req;
        llm_request_init(&req);
        llm_request_add(&req, "user", again[i]);
        int rc = llm_call(c, &req, NULL, &r);
        if (i < 2) {
            assert_int_equal(rc, 0);
            assert_true(r.replayed);
            assert_non_null(strstr(r.text.buf, i == 0 ? "SECOND" : "FIRST"));
        } else {
            assert_int_equal(r.fail, LLM_FAIL_REPLAY_MISS);
            assert_non_null(strstr(r.message.buf, "--record"));
        }
        llm_request_release(&req);
    }
    llm_client_free(c);

    /* In order: whatever is asked, the recorded replies come in turn. */
    cfg.replay_order = true;
    c = llm_client_new(&cfg, &err);
    for (int i = 0; i < 4; i++) {
        llm_request req;
        llm_request_init(&req);
        llm_request_add(&req, "user", "anything");
        int rc = llm_call(c, &req, NULL, &r);
        assert_int_equal(rc, i < 3 ? 0 : -1);
        if (i == 1)
            assert_non_null(strstr(r.text.buf, "SECOND"));
        llm_request_release(&req);
    }
    llm_client_free(c);
    llm_result_release(&r);
    llm_config_release(&cfg);
    strbuf_release(&err);
    unlink(path);
}

static void test_command_failure(void **state)
{
    (void)state;
    llm_config cfg;
    llm_config_init(&cfg);
    llm_config_set_command(&cfg, "false");
    cfg.provider = LLM_PROVIDER_COMMAND;
    strbuf err = STRBUF_INIT;
    llm_client *c = llm_client_new(&cfg, &err);
    llm_request req;
    llm_request_init(&req);
    llm_request_add(&req, "user", "x");
    llm_result r;
    llm_result_init(&r);
    assert_int_equal(llm_call(c, &req, NULL, &r), -1);
    assert_int_equal(r.fail, LLM_FAIL_COMMAND_FAILED);
    assert_non_null(strstr(r.message.buf, "exit code 1"));
    llm_client_free(c);
    llm_config_set_command(&cfg, "sleep 5");
    cfg.timeout_s = 0.3;
    c = llm_client_new(&cfg, &err);
    assert_int_equal(llm_call(c, &req, NULL, &r), -1);
    assert_int_equal(r.fail, LLM_FAIL_TIMEOUT);
    llm_client_free(c);
    llm_result_release(&r);
    llm_request_release(&req);
    llm_config_release(&cfg);
    strbuf_release(&err);
}

static void test_budget_refuses_call(void **state)
{
    (void)state;
    llm_config cfg;
    llm_config_init(&cfg);
    llm_config_set_command(&cfg, "cat");
    cfg.provider = LLM_PROVIDER_COMMAND;
    cfg.run_limits.calls = 2;
    strbuf err = STRBUF_INIT;
    llm_client *c = llm_client_new(&cfg, &err);
    llm_limits tl = { .calls = 1 };
    llm_budget task;
    llm_budget_init(&task, &tl);
    llm_request req;
    llm_request_init(&req);
    llm_request_add(&req, "user", "x");
    llm_result r;
    llm_result_init(&r);
    assert_int_equal(llm_call(c, &req, &task, &r), 0);
    assert_int_equal(llm_call(c, &req, &task, &r), -1);
    assert_int_equal(r.fail, LLM_FAIL_BUDGET_EXCEEDED);
    assert_non_null(strstr(r.message.buf, "task budget of 1 calls"));
    assert_int_equal(llm_call(c, &req, NULL, &r), 0);
    assert_int_equal(llm_call(c, &req, NULL, &r), -1);
    assert_non_null(strstr(r.message.buf, "run budget of 2 calls"));
    llm_budget_release(&task);
    llm_client_free(c);
    llm_result_release(&r);
    llm_request_release(&req);
    llm_config_release(&cfg);
    strbuf_release(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sse_split_anywhere),
        cmocka_unit_test(test_sse_line_cap),
        cmocka_unit_test(test_openai_parse),
        cmocka_unit_test(test_anthropic_parse_and_stream),
        cmocka_unit_test(test_classify),
        cmocka_unit_test(test_retry_after_and_backoff),
        cmocka_unit_test(test_redact),
        cmocka_unit_test(test_prices),
        cmocka_unit_test(test_budgets),
        cmocka_unit_test(test_config_file_and_env),
        cmocka_unit_test(test_missing_key_says_which_variable),
        cmocka_unit_test(test_record_then_replay),
        cmocka_unit_test(test_command_failure),
        cmocka_unit_test(test_budget_refuses_call),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
