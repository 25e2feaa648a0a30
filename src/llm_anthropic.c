/*
 * llm_anthropic: the Anthropic Messages wire format (POST {base}/messages with the
 * x-api-key and anthropic-version headers). Builds the body (system apart from the
 * messages, max_tokens always, extended thinking as {"type": "enabled", "budget_tokens"}
 * or {"type": "adaptive"}), reads a whole Message or its event stream (message_start,
 * content_block_start/delta/stop with text_delta, thinking_delta and signature_delta,
 * message_delta with the stop reason and the output usage, message_stop, ping, error),
 * and turns error bodies ({"type": "error", "error": {"type", "message"}}) into typed
 * failures. Usage is normalised: input_tokens here counts cache reads and writes too.
 */
#include "llm.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define ANTHROPIC_DEFAULT_BASE "https://api.anthropic.com/v1"
#define ANTHROPIC_DEFAULT_VERSION "2023-06-01"

/* ---------------------------------------------------------------- request */

char *llm_anthropic_body(const llm_config *cfg, const llm_request *req, bool stream)
{
    json_t *o = json_object();
    json_object_set_new(o, "model", json_string(llm_effective_model(cfg, req)));
    json_object_set_new(o, "max_tokens", json_integer(llm_effective_max_tokens(cfg, req)));
    if (req->system)
        json_object_set_new(o, "system", json_string(req->system));
    json_t *msgs = json_array();
    for (size_t i = 0; i < req->n_messages; i++)
        json_array_append_new(msgs, json_pack("{s:s, s:s}", "role", req->messages[i].role,
                                              "content", req->messages[i].content));
    json_object_set_new(o, "messages", msgs);
    if (req->temperature >= 0)
        json_object_set_new(o, "temperature", json_real(req->temperature));
    if (req->thinking_budget == LLM_THINKING_ADAPTIVE)
        json_object_set_new(o, "thinking", json_pack("{s:s}", "type", "adaptive"));
    else if (req->thinking_budget > 0)
        json_object_set_new(o, "thinking", json_pack("{s:s, s:i}", "type", "enabled",
                                                     "budget_tokens", req->thinking_budget));
    if (req->n_stop) {
        json_t *stop = json_array();
        for (size_t i = 0; i < req->n_stop; i++)
            json_array_append_new(stop, json_string(req->stop[i]));
        json_object_set_new(o, "stop_sequences", stop);
    }
    if (stream)
        json_object_set_new(o, "stream", json_true());
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

static void set_str(char **dst, json_t *v)
{
    if (json_is_string(v)) {
        free(*dst);
        *dst = xstrdup(json_string_value(v));
    }
}

/* Reads a usage object; fields absent from it are left as they were. */
static void read_usage(json_t *usage, llm_usage *u)
{
    if (!json_is_object(usage))
        return;
    long in = json_object_get(usage, "input_tokens") ? int_field(usage, "input_tokens")
                                                      : u->input_tokens - u->cached_input_tokens -
                                                            u->cache_write_tokens;
    if (json_object_get(usage, "cache_read_input_tokens"))
        u->cached_input_tokens = int_field(usage, "cache_read_input_tokens");
    if (json_object_get(usage, "cache_creation_input_tokens"))
        u->cache_write_tokens = int_field(usage, "cache_creation_input_tokens");
    u->input_tokens = in + u->cached_input_tokens + u->cache_write_tokens;
    if (json_object_get(usage, "output_tokens"))
        u->output_tokens = int_field(usage, "output_tokens");
}

static void add_block(json_t *block, llm_result *res)
{
    const char *type = json_string_value(json_object_get(block, "type"));
    json_t *v;
    if (type && !strcmp(type, "text") && json_is_string(v = json_object_get(block, "text")))
        strbuf_adds(&res->text, json_string_value(v));
    else if (type && !strcmp(type, "thinking") &&
             json_is_string(v = json_object_get(block, "thinking")))
        strbuf_adds(&res->thinking, json_string_value(v));
}

static void anthropic_parse_body(const char *body, size_t len, llm_result *res)
{
    json_error_t jerr;
    json_t *o = json_loadb(body, len, 0, &jerr);
    json_t *content = json_object_get(o, "content");
    if (!o || !json_is_array(content)) {
        llm_result_fail(res, LLM_FAIL_MALFORMED_REPLY, "the reply is not a Message (%s)",
                        o ? "no content array" : jerr.text);
        json_decref(o);
        return;
    }
    size_t i;
    json_t *block;
    json_array_foreach(content, i, block)
        add_block(block, res);
    set_str(&res->finish_reason, json_object_get(o, "stop_reason"));
    set_str(&res->model, json_object_get(o, "model"));
    read_usage(json_object_get(o, "usage"), &res->usage);
    json_decref(o);
}

struct anthropic_stream {
    llm_result *res;
    bool started;   /* message_start seen */
    bool stopped;   /* message_stop seen */
    bool errored;
};

static void *anthropic_stream_begin(llm_result *res)
{
    struct anthropic_stream *s = xcalloc(1, sizeof *s);
    s->res = res;
    return s;
}

static void stream_delta(struct anthropic_stream *s, json_t *delta)
{
    const char *type = json_string_value(json_object_get(delta, "type"));
    json_t *v;
    if (!type)
        return;
    if (!strcmp(type, "text_delta") && json_is_string(v = json_object_get(delta, "text")))
        strbuf_adds(&s->res->text, json_string_value(v));
    else if (!strcmp(type, "thinking_delta") &&
             json_is_string(v = json_object_get(delta, "thinking")))
        strbuf_adds(&s->res->thinking, json_string_value(v));
    /* signature_delta and input_json_delta carry nothing cutegen uses. */
}

static void stream_error(struct anthropic_stream *s, json_t *o)
{
    json_t *err = json_object_get(o, "error");
    const char *type = json_string_value(json_object_get(err, "type"));
    const char *msg = json_string_value(json_object_get(err, "message"));
    llm_result *res = s->res;
    if (type && !strcmp(type, "rate_limit_error"))
        llm_result_fail(res, LLM_FAIL_RATE_LIMITED, "rate limited in the stream: %s",
                        msg ? msg : "no message");
    else
        llm_result_fail(res, LLM_FAIL_HTTP_STATUS, "the server sent an error in the stream "
                        "(%s): %s", type ? type : "unknown", msg ? msg : "no message");
    /* overloaded_error and api_error are worth a retry, like HTTP 529/500. */
    if (type && (!strcmp(type, "overloaded_error") || !strcmp(type, "api_error")))
        res->http_status = 529;
    s->errored = true;
}

static int anthropic_stream_event(void *state, const char *event, const char *data)
{
    struct anthropic_stream *s = state;
    if (s->errored || s->stopped)
        return 0;
    json_t *o = json_loads(data, 0, NULL);
    const char *type = json_string_value(json_object_get(o, "type"));
    if (!type) {
        llm_result_fail(s->res, LLM_FAIL_MALFORMED_REPLY,
                        "a stream event ('%s') is not JSON with a type: '%.80s'", event, data);
        s->errored = true;
    } else if (!strcmp(type, "message_start")) {
        json_t *m = json_object_get(o, "message");
        s->started = true;
        set_str(&s->res->model, json_object_get(m, "model"));
        read_usage(json_object_get(m, "usage"), &s->res->usage);
    } else if (!strcmp(type, "content_block_start")) {
        add_block(json_object_get(o, "content_block"), s->res);
    } else if (!strcmp(type, "content_block_delta")) {
        stream_delta(s, json_object_get(o, "delta"));
    } else if (!strcmp(type, "message_delta")) {
        set_str(&s->res->finish_reason,
                json_object_get(json_object_get(o, "delta"), "stop_reason"));
        read_usage(json_object_get(o, "usage"), &s->res->usage);
    } else if (!strcmp(type, "message_stop")) {
        s->stopped = true;
    } else if (!strcmp(type, "error")) {
        stream_error(s, o);
    }
    json_decref(o);
    return 0;
}

static void anthropic_stream_end(void *state, bool complete_transfer)
{
    struct anthropic_stream *s = state;
    if (!s->errored && complete_transfer && !s->stopped)
        llm_result_fail(s->res, LLM_FAIL_CONNECTION,
                        "the event stream ended before message_stop%s",
                        s->started ? " (the reply is incomplete)" : "");
    free(s);
}

static void anthropic_parse_error(const llm_http_call *call, long status, const char *body,
                                  llm_result *res)
{
    json_t *o = json_loads(body, 0, NULL);
    json_t *err = json_object_get(o, "error");
    const char *msg = json_string_value(json_object_get(err, "message"));
    const char *type = json_string_value(json_object_get(err, "type"));
    strbuf m = STRBUF_INIT;
    if (!msg) {
        strbuf_add(&m, body, strlen(body) > 200 ? 200 : strlen(body));
        strbuf_trim_end(&m);
        msg = m.buf;
    }
    llm_classify_status(status, msg, type, call->model, call->key_env, res);
    strbuf_release(&m);
    json_decref(o);
}

const llm_wire llm_anthropic_wire = {
    anthropic_parse_body, anthropic_stream_begin, anthropic_stream_event,
    anthropic_stream_end, anthropic_parse_error,
};

/* ---------------------------------------------------------------- the call */

void llm_anthropic_call(const llm_config *cfg, const char *key, const llm_request *req,
                        llm_result *res)
{
    const char *base = cfg->base_url ? cfg->base_url : ANTHROPIC_DEFAULT_BASE;
    size_t blen = strlen(base);
    while (blen && base[blen - 1] == '/')
        blen--;
    char *url = xasprintf("%.*s/messages", (int)blen, base);
    char *keyh = xasprintf("x-api-key: %s", key ? key : "");
    char *version = xasprintf("anthropic-version: %s", cfg->anthropic_version
                                                           ? cfg->anthropic_version
                                                           : ANTHROPIC_DEFAULT_VERSION);
    const char *headers[] = { "Content-Type: application/json",
                              cfg->stream ? "Accept: text/event-stream" : "Accept: application/json",
                              version, key && *key ? keyh : NULL, NULL };
    char *body = llm_anthropic_body(cfg, req, cfg->stream);
    llm_http_call call = {
        .url = url, .headers = headers, .body = body, .stream = cfg->stream,
        .wire = &llm_anthropic_wire, .cfg = cfg, .secret = key,
        .key_env = llm_config_key_env(cfg), .model = llm_effective_model(cfg, req),
    };
    llm_http_exchange(&call, res);
    free(body);
    free(keyh);
    free(version);
    free(url);
}
