/*
 * llm_openai: the OpenAI-compatible chat completions wire format (POST
 * {base}/chat/completions), used by OpenAI and by local servers (vLLM, SGLang,
 * llama.cpp, Ollama). Builds the request body, reads a whole reply or its SSE stream
 * (chat.completion.chunk objects, the usage in a last chunk with empty choices when
 * stream_options.include_usage is set, then "data: [DONE]"), and turns error bodies
 * ({"error": {"message", "type", "code"}}) into typed failures.
 */
#include "llm.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define OPENAI_DEFAULT_BASE "https://api.openai.com/v1"

/* ---------------------------------------------------------------- request */

char *llm_openai_body(const llm_config *cfg, const llm_request *req, bool stream)
{
    json_t *o = json_object();
    json_object_set_new(o, "model", json_string(llm_effective_model(cfg, req)));
    json_t *msgs = json_array();
    if (req->system)
        json_array_append_new(msgs, json_pack("{s:s, s:s}", "role", "system", "content",
                                              req->system));
    for (size_t i = 0; i < req->n_messages; i++)
        json_array_append_new(msgs, json_pack("{s:s, s:s}", "role", req->messages[i].role,
                                              "content", req->messages[i].content));
    json_object_set_new(o, "messages", msgs);
    /* Reasoning models take max_completion_tokens (which counts reasoning too). */
    bool completion = cfg->max_completion_tokens || req->reasoning_effort;
    json_object_set_new(o, completion ? "max_completion_tokens" : "max_tokens",
                        json_integer(llm_effective_max_tokens(cfg, req)));
    if (req->temperature >= 0)
        json_object_set_new(o, "temperature", json_real(req->temperature));
    if (req->reasoning_effort)
        json_object_set_new(o, "reasoning_effort", json_string(req->reasoning_effort));
    if (req->n_stop) {
        json_t *stop = json_array();
        for (size_t i = 0; i < req->n_stop; i++)
            json_array_append_new(stop, json_string(req->stop[i]));
        json_object_set_new(o, "stop", stop);
    }
    if (stream) {
        json_object_set_new(o, "stream", json_true());
        json_object_set_new(o, "stream_options", json_pack("{s:b}", "include_usage", 1));
    }
    char *s = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return s;
}

/* ---------------------------------------------------------------- replies */

static long int_field(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_integer(v) ? (long)json_integer_value(v) : 0;
}

static void read_usage(json_t *usage, llm_usage *u)
{
    if (!json_is_object(usage))
        return;
    u->input_tokens = int_field(usage, "prompt_tokens");
    u->output_tokens = int_field(usage, "completion_tokens");
    u->cached_input_tokens = int_field(json_object_get(usage, "prompt_tokens_details"),
                                       "cached_tokens");
    u->reasoning_tokens = int_field(json_object_get(usage, "completion_tokens_details"),
                                    "reasoning_tokens");
}

static void set_str(char **dst, json_t *v)
{
    if (json_is_string(v)) {
        free(*dst);
        *dst = xstrdup(json_string_value(v));
    }
}

/* Reasoning text that some servers (vLLM, SGLang, DeepSeek) return beside content. */
static void add_reasoning(json_t *m, llm_result *res)
{
    json_t *r = json_object_get(m, "reasoning_content");
    if (!json_is_string(r))
        r = json_object_get(m, "reasoning");
    if (json_is_string(r))
        strbuf_adds(&res->thinking, json_string_value(r));
}

static void openai_parse_body(const char *body, size_t len, llm_result *res)
{
    json_error_t jerr;
    json_t *o = json_loadb(body, len, 0, &jerr);
    json_t *choice = json_array_get(json_object_get(o, "choices"), 0);
    json_t *msg = json_object_get(choice, "message");
    json_t *content = json_object_get(msg, "content");
    if (!o || !json_is_object(msg) || !(json_is_string(content) || json_is_null(content))) {
        llm_result_fail(res, LLM_FAIL_MALFORMED_REPLY,
                        "the reply is not a chat completion (%s)",
                        o ? "no choices[0].message.content" : jerr.text);
        json_decref(o);
        return;
    }
    if (json_is_string(content))
        strbuf_adds(&res->text, json_string_value(content));
    add_reasoning(msg, res);
    set_str(&res->finish_reason, json_object_get(choice, "finish_reason"));
    set_str(&res->model, json_object_get(o, "model"));
    read_usage(json_object_get(o, "usage"), &res->usage);
    json_decref(o);
}

struct openai_stream {
    llm_result *res;
    bool done;      /* saw [DONE] */
    bool errored;   /* saw an error object */
    bool any;       /* saw a chunk */
};

static void *openai_stream_begin(llm_result *res)
{
    struct openai_stream *s = xcalloc(1, sizeof *s);
    s->res = res;
    return s;
}

static int openai_stream_event(void *state, const char *event, const char *data)
{
    struct openai_stream *s = state;
    (void)event;
    if (s->done || s->errored)
        return 0;
    if (!strcmp(data, "[DONE]")) {
        s->done = true;
        return 0;
    }
    json_t *o = json_loads(data, 0, NULL);
    if (!json_is_object(o)) {
        llm_result_fail(s->res, LLM_FAIL_MALFORMED_REPLY,
                        "a stream chunk is not JSON: '%.80s'", data);
        s->errored = true;
        json_decref(o);
        return 0;
    }
    json_t *err = json_object_get(o, "error");
    if (json_is_object(err)) {
        json_t *m = json_object_get(err, "message");
        llm_result_fail(s->res, LLM_FAIL_HTTP_STATUS, "the server sent an error in the stream: %s",
                        json_is_string(m) ? json_string_value(m) : "no message");
        s->errored = true;
        json_decref(o);
        return 0;
    }
    s->any = true;
    set_str(&s->res->model, json_object_get(o, "model"));
    json_t *choice = json_array_get(json_object_get(o, "choices"), 0);
    json_t *delta = json_object_get(choice, "delta");
    json_t *content = json_object_get(delta, "content");
    if (json_is_string(content))
        strbuf_adds(&s->res->text, json_string_value(content));
    if (json_is_object(delta))
        add_reasoning(delta, s->res);
    set_str(&s->res->finish_reason, json_object_get(choice, "finish_reason"));
    read_usage(json_object_get(o, "usage"), &s->res->usage);
    json_decref(o);
    return 0;
}

static void openai_stream_end(void *state, bool complete_transfer)
{
    struct openai_stream *s = state;
    if (!s->errored && complete_transfer && !s->done)
        llm_result_fail(s->res, LLM_FAIL_CONNECTION,
                        "the event stream ended before 'data: [DONE]'%s",
                        s->any ? " (the reply is incomplete)" : "");
    free(s);
}

static void openai_parse_error(const llm_http_call *call, long status, const char *body,
                               llm_result *res)
{
    json_t *o = json_loads(body, 0, NULL);
    json_t *err = json_object_get(o, "error");
    const char *msg = NULL, *code = NULL;
    if (json_is_object(err)) {
        json_t *m = json_object_get(err, "message");
        json_t *c = json_object_get(err, "code");
        msg = json_is_string(m) ? json_string_value(m) : NULL;
        code = json_is_string(c) ? json_string_value(c) : NULL;
    } else if (json_is_string(err)) {
        msg = json_string_value(err); /* llama.cpp and some proxies */
    }
    strbuf m = STRBUF_INIT;
    if (!msg) {
        strbuf_add(&m, body, strlen(body) > 200 ? 200 : strlen(body));
        strbuf_trim_end(&m);
        msg = m.buf;
    }
    llm_classify_status(status, msg, code, call->model, call->key_env, res);
    strbuf_release(&m);
    json_decref(o);
}

const llm_wire llm_openai_wire = {
    openai_parse_body, openai_stream_begin, openai_stream_event, openai_stream_end,
    openai_parse_error,
};

/* ---------------------------------------------------------------- the call */

void llm_openai_call(const llm_config *cfg, const char *key, const llm_request *req,
                     llm_result *res)
{
    const char *base = cfg->base_url ? cfg->base_url : OPENAI_DEFAULT_BASE;
    size_t blen = strlen(base);
    while (blen && base[blen - 1] == '/')
        blen--;
    char *url = xasprintf("%.*s/chat/completions", (int)blen, base);
    char *auth = key && *key ? xasprintf("Authorization: Bearer %s", key) : NULL;
    const char *headers[] = { "Content-Type: application/json",
                              cfg->stream ? "Accept: text/event-stream" : "Accept: application/json",
                              auth, NULL };
    char *body = llm_openai_body(cfg, req, cfg->stream);
    llm_http_call call = {
        .url = url, .headers = headers, .body = body, .stream = cfg->stream,
        .wire = &llm_openai_wire, .cfg = cfg, .secret = key,
        .key_env = llm_config_key_env(cfg), .model = llm_effective_model(cfg, req),
    };
    llm_http_exchange(&call, res);
    free(body);
    free(auth);
    free(url);
}
