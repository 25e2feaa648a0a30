/*
 * Tests of the openai and anthropic providers against tests/llm/server.py, a real HTTP
 * server on 127.0.0.1 that speaks both wire formats and fails on command. Each test
 * checks what cutegen sent (headers, body) and what it made of the reply. The fault
 * matrix test prints, for each provider, mode and fault, what cutegen did.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <curl/curl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm.h"
#include "proc.h"
#include "util.h"

#define KEY "sk-test-planted-9f8e7d6c5b4a"

static proc_child server;
static int port;
static char base_url[64];

/* ---------------------------------------------------------------- the server */

static size_t collect(char *p, size_t size, size_t n, void *ud)
{
    strbuf_add(ud, p, size * n);
    return size * n;
}

/* A control request to the server; returns the body. */
static char *control(const char *path, const char *body)
{
    char *url = xasprintf("http://127.0.0.1:%d%s", port, path);
    strbuf out = STRBUF_INIT;
    CURL *h = curl_easy_init();
    curl_easy_setopt(h, CURLOPT_URL, url);
    if (body)
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &out);
    assert_int_equal(curl_easy_perform(h), CURLE_OK);
    curl_easy_cleanup(h);
    free(url);
    return strbuf_detach(&out);
}

static void script(const char *steps_json)
{
    free(control("/_reset", "{}"));
    char *body = xasprintf("{\"steps\": %s}", steps_json);
    free(control("/_script", body));
    free(body);
}

/* The n-th request the server got (negative: from the end). */
static json_t *request_n(int n)
{
    char *s = control("/_requests", NULL);
    json_t *all = json_loads(s, 0, NULL);
    free(s);
    assert_non_null(all);
    size_t len = json_array_size(all);
    json_t *r = json_array_get(all, n < 0 ? len + (size_t)n : (size_t)n);
    assert_non_null(r);
    json_incref(r);
    json_decref(all);
    return r;
}

static size_t request_count(void)
{
    char *s = control("/_requests", NULL);
    json_t *all = json_loads(s, 0, NULL);
    free(s);
    size_t n = json_array_size(all);
    json_decref(all);
    return n;
}

static int start_server(void **state)
{
    (void)state;
    char *py = find_in_path("python3");
    if (!py) {
        fprintf(stderr, "skip: python3 not found (the test server needs it)\n");
        exit(77);
    }
    free(py);
    char *script_path = xasprintf("%s/tests/llm/server.py", cg_source_dir());
    const char *argv[] = { "python3", script_path, NULL };
    strbuf err = STRBUF_INIT, line = STRBUF_INIT;
    if (proc_spawn(&server, argv, NULL, NULL, &err) < 0 ||
        proc_read_line(&server, &line, 20, 100) != 0 || sscanf(line.buf, "PORT %d", &port) != 1) {
        fprintf(stderr, "cannot start %s: %s\n", script_path, err.buf);
        return -1;
    }
    snprintf(base_url, sizeof base_url, "http://127.0.0.1:%d/v1", port);
    free(script_path);
    strbuf_release(&err);
    strbuf_release(&line);
    setenv("OPENAI_API_KEY", KEY, 1);
    setenv("ANTHROPIC_API_KEY", KEY, 1);
    return 0;
}

static int stop_server(void **state)
{
    (void)state;
    proc_kill(&server);
    return 0;
}

/* ---------------------------------------------------------------- helpers */

static void test_config(llm_config *cfg, llm_provider_kind p, bool stream)
{
    llm_config_init(cfg);
    cfg->provider = p;
    cfg->model = xstrdup("test-model");
    cfg->base_url = xstrdup(base_url);
    cfg->stream = stream;
    cfg->retry_base_s = 0.01;
    cfg->retry_max_s = 0.05;
    cfg->max_retries = 3;
    cfg->timeout_s = 10;
}

static int ask(const llm_config *cfg, const char *prompt, llm_result *res)
{
    strbuf err = STRBUF_INIT;
    llm_client *c = llm_client_new(cfg, &err);
    assert_non_null(c);
    llm_request req;
    llm_request_init(&req);
    req.system = xstrdup("be brief");
    llm_request_add(&req, "user", prompt);
    int rc = llm_call(c, &req, NULL, res);
    llm_request_release(&req);
    llm_client_free(c);
    strbuf_release(&err);
    return rc;
}

static const char *header(json_t *r, const char *name)
{
    return json_string_value(json_object_get(json_object_get(r, "headers"), name));
}

/* ---------------------------------------------------------------- tests */

static void test_openai_request_and_reply(void **state)
{
    (void)state;
    for (int stream = 0; stream < 2; stream++) {
        llm_config cfg;
        test_config(&cfg, LLM_PROVIDER_OPENAI, stream);
        script("[]");
        llm_result res;
        llm_result_init(&res);
        assert_int_equal(ask(&cfg, "hello", &res), 0);
        assert_string_equal(res.text.buf, "Hello from the test server. You said: hello");
        assert_string_equal(res.finish_reason, "stop");
        assert_int_equal(res.usage.input_tokens, 120);
        assert_int_equal(res.usage.cached_input_tokens, 20);
        assert_int_equal(res.usage.output_tokens, 30);
        assert_int_equal(res.usage.reasoning_tokens, 8);
        assert_true(res.cost_known); /* test-model: 1/0.5/4 $ per Mtok */
        assert_true(res.cost_usd > 0.000229 && res.cost_usd < 0.000231);
        json_t *r = request_n(-1);
        assert_string_equal(json_string_value(json_object_get(r, "path")), "/v1/chat/completions");
        char *auth = xasprintf("Bearer %s", KEY);
        assert_string_equal(header(r, "authorization"), auth);
        free(auth);
        assert_string_equal(header(r, "content-type"), "application/json");
        json_t *body = json_object_get(r, "body");
        assert_string_equal(json_string_value(json_object_get(body, "model")), "test-model");
        json_t *m0 = json_array_get(json_object_get(body, "messages"), 0);
        assert_string_equal(json_string_value(json_object_get(m0, "role")), "system");
        assert_int_equal(json_integer_value(json_object_get(body, "max_tokens")), 8192);
        assert_int_equal(json_is_true(json_object_get(body, "stream")), stream);
        if (stream)
            assert_true(json_is_true(json_object_get(
                json_object_get(body, "stream_options"), "include_usage")));
        json_decref(r);
        llm_result_release(&res);
        llm_config_release(&cfg);
    }
}

static void test_openai_reasoning_params(void **state)
{
    (void)state;
    llm_config cfg;
    test_config(&cfg, LLM_PROVIDER_OPENAI, true);
    script("[]");
    llm_client *c = llm_client_new(&cfg, NULL);
    llm_request req;
    llm_request_init(&req);
    req.reasoning_effort = xstrdup("high");
    req.max_tokens = 5000;
    req.temperature = 0.5;
    llm_request_add_stop(&req, "END");
    llm_request_add(&req, "user", "think");
    llm_result res;
    llm_result_init(&res);
    assert_int_equal(llm_call(c, &req, NULL, &res), 0);
    json_t *r = request_n(-1);
    json_t *body = json_object_get(r, "body");
    assert_string_equal(json_string_value(json_object_get(body, "reasoning_effort")), "high");
    assert_int_equal(json_integer_value(json_object_get(body, "max_completion_tokens")), 5000);
    assert_null(json_object_get(body, "max_tokens"));
    assert_true(json_real_value(json_object_get(body, "temperature")) == 0.5);
    assert_string_equal(json_string_value(json_array_get(json_object_get(body, "stop"), 0)), "END");
    json_decref(r);
    llm_result_release(&res);
    llm_request_release(&req);
    llm_client_free(c);
    llm_config_release(&cfg);
}

static void test_anthropic_thinking(void **state)
{
    (void)state;
    for (int stream = 0; stream < 2; stream++) {
        llm_config cfg;
        test_config(&cfg, LLM_PROVIDER_ANTHROPIC, stream);
        script("[]");
        llm_client *c = llm_client_new(&cfg, NULL);
        llm_request req;
        llm_request_init(&req);
        req.system = xstrdup("be brief");
        req.thinking_budget = 2048;
        llm_request_add(&req, "user", "hi");
        llm_result res;
        llm_result_init(&res);
        assert_int_equal(llm_call(c, &req, NULL, &res), 0);
        assert_string_equal(res.text.buf, "Hello from the test server. You said: hi");
        assert_string_equal(res.thinking.buf, "The user greets me; a short answer will do.");
        assert_string_equal(res.finish_reason, "end_turn");
        assert_int_equal(res.usage.input_tokens, 130); /* 100 + 20 read + 10 written */
        assert_int_equal(res.usage.cached_input_tokens, 20);
        assert_int_equal(res.usage.cache_write_tokens, 10);
        assert_int_equal(res.usage.output_tokens, 30);
        json_t *r = request_n(-1);
        assert_string_equal(json_string_value(json_object_get(r, "path")), "/v1/messages");
        assert_string_equal(header(r, "x-api-key"), KEY);
        assert_string_equal(header(r, "anthropic-version"), "2023-06-01");
        assert_null(header(r, "authorization"));
        json_t *body = json_object_get(r, "body");
        assert_string_equal(json_string_value(json_object_get(body, "system")), "be brief");
        json_t *th = json_object_get(body, "thinking");
        assert_string_equal(json_string_value(json_object_get(th, "type")), "enabled");
        assert_int_equal(json_integer_value(json_object_get(th, "budget_tokens")), 2048);
        assert_int_equal(json_is_true(json_object_get(body, "stream")), stream);
        json_decref(r);
        llm_result_release(&res);
        llm_request_release(&req);
        llm_client_free(c);
        llm_config_release(&cfg);
    }
}

struct fault {
    const char *step;
    llm_fail expect;
    int retries;
};

static const struct fault faults[] = {
    { "\"429:1\"", LLM_FAIL_NONE, 1 },
    { "\"500\"", LLM_FAIL_NONE, 1 },
    { "\"502\"", LLM_FAIL_NONE, 1 },
    { "\"503\"", LLM_FAIL_NONE, 1 },
    { "\"529\"", LLM_FAIL_NONE, 1 },
    { "\"drop\"", LLM_FAIL_NONE, 1 },
    { "\"truncate\"", LLM_FAIL_NONE, 1 },
    { "\"500\",\"500\",\"500\",\"500\"", LLM_FAIL_HTTP_STATUS, 3 },
    { "\"slow:3\"", LLM_FAIL_TIMEOUT, 0 },
    { "\"context\"", LLM_FAIL_CONTEXT_TOO_LONG, 0 },
    { "\"401\"", LLM_FAIL_AUTH, 0 },
    { "\"404\"", LLM_FAIL_BAD_REQUEST, 0 },
    { "\"length\"", LLM_FAIL_TRUNCATED, 0 },
    { "\"empty\"", LLM_FAIL_EMPTY_REPLY, 0 },
    { "\"malformed\"", LLM_FAIL_MALFORMED_REPLY, 0 },
};

static void test_fault_matrix(void **state)
{
    (void)state;
    printf("fault matrix (provider, mode, fault: outcome, retries, latency, message)\n");
    for (int p = 0; p < 2; p++) {
        for (int stream = 0; stream < 2; stream++) {
            for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++) {
                const struct fault *f = &faults[i];
                llm_config cfg;
                test_config(&cfg, p ? LLM_PROVIDER_ANTHROPIC : LLM_PROVIDER_OPENAI, stream);
                cfg.timeout_s = 2;
                char *steps = xasprintf("[%s]", f->step);
                script(steps);
                llm_result res;
                llm_result_init(&res);
                ask(&cfg, "hi", &res);
                printf("  %-9s %-9s %-28s -> %-17s retries %d, %.2f s: %.90s\n",
                       llm_provider_name(cfg.provider), stream ? "stream" : "whole", f->step,
                       llm_fail_name(res.fail), res.retries, res.latency_s, res.message.buf);
                assert_string_equal(llm_fail_name(res.fail), llm_fail_name(f->expect));
                assert_int_equal(res.retries, f->retries);
                assert_null(strstr(res.message.buf, KEY));
                assert_int_equal(request_count(), (size_t)f->retries + 1);
                if (!strcmp(f->step, "\"429:1\""))
                    assert_true(res.latency_s >= 0.95); /* Retry-After: 1 was honoured */
                if (f->expect == LLM_FAIL_TRUNCATED)
                    assert_string_equal(res.text.buf, "Hello from t");
                free(steps);
                llm_result_release(&res);
                llm_config_release(&cfg);
            }
        }
    }
}

static void test_key_redacted_from_auth_error(void **state)
{
    (void)state;
    llm_config cfg;
    test_config(&cfg, LLM_PROVIDER_OPENAI, false);
    script("[\"401\"]");
    llm_result res;
    llm_result_init(&res);
    assert_int_equal(ask(&cfg, "hi", &res), -1);
    assert_int_equal(res.fail, LLM_FAIL_AUTH);
    assert_non_null(strstr(res.message.buf, "[redacted]")); /* the server echoed the key */
    assert_null(strstr(res.message.buf, KEY));
    assert_non_null(strstr(res.message.buf, "set OPENAI_API_KEY"));
    llm_result_release(&res);
    llm_config_release(&cfg);
}

struct thread_arg {
    llm_client *client;
    llm_budget *task;
    int ok;
};

static void *thread_main(void *p)
{
    struct thread_arg *a = p;
    for (int i = 0; i < 5; i++) {
        llm_request req;
        llm_request_init(&req);
        llm_request_add(&req, "user", "parallel");
        llm_result res;
        llm_result_init(&res);
        if (llm_call(a->client, &req, a->task, &res) == 0 &&
            !strcmp(res.text.buf, "Hello from the test server. You said: parallel"))
            a->ok++;
        llm_result_release(&res);
        llm_request_release(&req);
    }
    return NULL;
}

static void test_threads_share_a_client(void **state)
{
    (void)state;
    llm_config cfg;
    test_config(&cfg, LLM_PROVIDER_ANTHROPIC, true);
    script("[\"500\",\"drop\",\"429:0\"]");
    llm_client *c = llm_client_new(&cfg, NULL);
    llm_limits limits = { .calls = 100 };
    llm_budget task;
    llm_budget_init(&task, &limits);
    struct thread_arg args[8];
    pthread_t th[8];
    for (int i = 0; i < 8; i++) {
        args[i] = (struct thread_arg){ c, &task, 0 };
        pthread_create(&th[i], NULL, thread_main, &args[i]);
    }
    int ok = 0;
    for (int i = 0; i < 8; i++) {
        pthread_join(th[i], NULL);
        ok += args[i].ok;
    }
    assert_int_equal(ok, 40);
    assert_int_equal(task.calls, 40);
    assert_int_equal(task.tokens, 40 * 160);
    assert_int_equal(llm_client_budget(c)->calls, 40);
    llm_budget_release(&task);
    llm_client_free(c);
    llm_config_release(&cfg);
}

static void test_connection_refused(void **state)
{
    (void)state;
    llm_config cfg;
    test_config(&cfg, LLM_PROVIDER_OPENAI, true);
    free(cfg.base_url);
    cfg.base_url = xstrdup("http://127.0.0.1:1/v1");
    cfg.max_retries = 1;
    llm_result res;
    llm_result_init(&res);
    assert_int_equal(ask(&cfg, "hi", &res), -1);
    assert_int_equal(res.fail, LLM_FAIL_CONNECTION);
    assert_int_equal(res.retries, 1);
    assert_non_null(strstr(res.message.buf, "base URL"));
    llm_result_release(&res);
    llm_config_release(&cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_openai_request_and_reply),
        cmocka_unit_test(test_openai_reasoning_params),
        cmocka_unit_test(test_anthropic_thinking),
        cmocka_unit_test(test_fault_matrix),
        cmocka_unit_test(test_key_redacted_from_auth_error),
        cmocka_unit_test(test_threads_share_a_client),
        cmocka_unit_test(test_connection_refused),
    };
    return cmocka_run_group_tests(tests, start_server, stop_server);
}
