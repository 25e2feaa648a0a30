/*
 * llm_request: the provider-neutral request and result (see llm.h): their life cycle,
 * the names of failure kinds and providers, and the canonical form of a request that
 * transcripts are keyed by.
 */
#include "llm.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* ---------------------------------------------------------------- names */

static const char *const fail_names[LLM_FAIL__COUNT] = {
    [LLM_FAIL_NONE] = "none",
    [LLM_FAIL_HTTP_STATUS] = "http_status",
    [LLM_FAIL_RATE_LIMITED] = "rate_limited",
    [LLM_FAIL_AUTH] = "auth",
    [LLM_FAIL_BAD_REQUEST] = "bad_request",
    [LLM_FAIL_CONTEXT_TOO_LONG] = "context_too_long",
    [LLM_FAIL_TIMEOUT] = "timeout",
    [LLM_FAIL_CONNECTION] = "connection",
    [LLM_FAIL_TRUNCATED] = "truncated",
    [LLM_FAIL_EMPTY_REPLY] = "empty_reply",
    [LLM_FAIL_MALFORMED_REPLY] = "malformed_reply",
    [LLM_FAIL_BUDGET_EXCEEDED] = "budget_exceeded",
    [LLM_FAIL_COMMAND_FAILED] = "command_failed",
    [LLM_FAIL_REPLAY_MISS] = "replay_miss",
    [LLM_FAIL_CONFIG] = "config",
};

const char *llm_fail_name(llm_fail f)
{
    if ((int)f < 0 || f >= LLM_FAIL__COUNT)
        return "unknown";
    return fail_names[f];
}

llm_fail llm_fail_from_name(const char *name)
{
    for (int i = 0; i < LLM_FAIL__COUNT; i++)
        if (!strcmp(fail_names[i], name))
            return (llm_fail)i;
    return LLM_FAIL__COUNT;
}

bool llm_fail_retryable(llm_fail f)
{
    return f == LLM_FAIL_HTTP_STATUS || f == LLM_FAIL_RATE_LIMITED ||
           f == LLM_FAIL_TIMEOUT || f == LLM_FAIL_CONNECTION;
}

static const char *const provider_names[LLM_PROVIDER__COUNT] = {
    "openai", "anthropic", "command", "replay",
};

const char *llm_provider_name(llm_provider_kind k)
{
    if ((int)k < 0 || k >= LLM_PROVIDER__COUNT)
        return "unknown";
    return provider_names[k];
}

int llm_provider_from_name(const char *name)
{
    for (int i = 0; i < LLM_PROVIDER__COUNT; i++)
        if (!strcmp(provider_names[i], name))
            return i;
    return -1;
}

/* ---------------------------------------------------------------- requests */

void llm_request_init(llm_request *r)
{
    memset(r, 0, sizeof *r);
    r->temperature = -1;
}

void llm_request_release(llm_request *r)
{
    free(r->model);
    free(r->system);
    for (size_t i = 0; i < r->n_messages; i++) {
        free(r->messages[i].role);
        free(r->messages[i].content);
    }
    free(r->messages);
    free(r->reasoning_effort);
    for (size_t i = 0; i < r->n_stop; i++)
        free(r->stop[i]);
    free(r->stop);
    llm_request_init(r);
}

void llm_request_add(llm_request *r, const char *role, const char *content)
{
    if (r->n_messages == r->alloc_messages) {
        r->alloc_messages = r->alloc_messages ? 2 * r->alloc_messages : 4;
        r->messages = xrealloc(r->messages, r->alloc_messages * sizeof *r->messages);
    }
    r->messages[r->n_messages].role = xstrdup(role);
    r->messages[r->n_messages].content = xstrdup(content);
    r->n_messages++;
}

void llm_request_add_stop(llm_request *r, const char *stop)
{
    r->stop = xrealloc(r->stop, (r->n_stop + 1) * sizeof *r->stop);
    r->stop[r->n_stop++] = xstrdup(stop);
}

const char *llm_effective_model(const llm_config *cfg, const llm_request *req)
{
    if (req->model && *req->model)
        return req->model;
    return cfg->model ? cfg->model : "";
}

int llm_effective_max_tokens(const llm_config *cfg, const llm_request *req)
{
    if (req->max_tokens > 0)
        return req->max_tokens;
    return cfg->max_tokens > 0 ? cfg->max_tokens : 8192;
}

/* The request as JSON with the fields that decide the reply. The model is left to the
 * caller (it may come from the config). */
static json_t *request_json(const llm_request *req)
{
    json_t *o = json_object();
    json_object_set_new(o, "model", json_string(req->model ? req->model : ""));
    if (req->system)
        json_object_set_new(o, "system", json_string(req->system));
    json_t *msgs = json_array();
    for (size_t i = 0; i < req->n_messages; i++)
        json_array_append_new(msgs, json_pack("{s:s, s:s}", "role", req->messages[i].role,
                                              "content", req->messages[i].content));
    json_object_set_new(o, "messages", msgs);
    if (req->max_tokens > 0)
        json_object_set_new(o, "max_tokens", json_integer(req->max_tokens));
    if (req->temperature >= 0)
        json_object_set_new(o, "temperature", json_real(req->temperature));
    if (req->reasoning_effort)
        json_object_set_new(o, "reasoning_effort", json_string(req->reasoning_effort));
    if (req->thinking_budget != LLM_THINKING_OFF)
        json_object_set_new(o, "thinking_budget", json_integer(req->thinking_budget));
    if (req->n_stop) {
        json_t *stop = json_array();
        for (size_t i = 0; i < req->n_stop; i++)
            json_array_append_new(stop, json_string(req->stop[i]));
        json_object_set_new(o, "stop", stop);
    }
    return o;
}

char *llm_request_canonical(const llm_request *req)
{
    json_t *o = request_json(req);
    char *s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII);
    json_decref(o);
    if (!s)
        BUG("json_dumps failed on a request");
    return s;
}

void llm_request_hash(const llm_request *req, char out[65])
{
    char *s = llm_request_canonical(req);
    sha256_hex(s, strlen(s), out);
    free(s);
}

/* ---------------------------------------------------------------- results */

void llm_result_init(llm_result *r)
{
    memset(r, 0, sizeof *r);
    strbuf_init(&r->message);
    strbuf_init(&r->text);
    strbuf_init(&r->thinking);
}

void llm_result_release(llm_result *r)
{
    strbuf_release(&r->message);
    strbuf_release(&r->text);
    strbuf_release(&r->thinking);
    free(r->finish_reason);
    free(r->model);
    memset(r, 0, sizeof *r);
}

void llm_result_reset(llm_result *r)
{
    llm_result_release(r);
    llm_result_init(r);
}

void llm_result_fail(llm_result *r, llm_fail f, const char *fmt, ...)
{
    r->fail = f;
    strbuf_reset(&r->message);
    va_list ap;
    va_start(ap, fmt);
    strbuf_vaddf(&r->message, fmt, ap);
    va_end(ap);
}

static bool is_blank(const char *s)
{
    for (; *s; s++)
        if (*s != ' ' && *s != '\n' && *s != '\t' && *s != '\r')
            return false;
    return true;
}

void llm_result_check_reply(llm_result *res)
{
    if (res->fail != LLM_FAIL_NONE)
        return;
    const char *fr = res->finish_reason ? res->finish_reason : "";
    if (!strcmp(fr, "length") || !strcmp(fr, "max_tokens")) {
        llm_result_fail(res, LLM_FAIL_TRUNCATED,
                        "the reply was cut at the output limit after %ld tokens: "
                        "raise --max-tokens or ask for a shorter answer",
                        res->usage.output_tokens);
        return;
    }
    if (is_blank(strbuf_str(&res->text)))
        llm_result_fail(res, LLM_FAIL_EMPTY_REPLY,
                        "the model returned an empty reply (finish reason '%s')",
                        *fr ? fr : "none");
}
