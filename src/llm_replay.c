/*
 * llm_replay: transcripts of model calls, in JSON Lines. The recorder appends one
 * object per finished call:
 *   {"v":1, "provider", "model", "request_hash", "request": <canonical request>,
 *    "reply": {"text", "thinking", "finish_reason", "model"}, "fail", "message",
 *    "http_status", "usage": {...}, "latency_s", "retries", "cost_usd"}
 * with no header and no key in it (the line is scrubbed of the key before it is written).
 * The replay provider loads a transcript and serves each request the reply recorded for
 * the same canonical request (the SHA-256 of its canonical JSON; repeated requests get
 * the recorded replies in turn), or simply the next reply with in_order. A failure that
 * was recorded is replayed as that failure.
 */
#include "llm.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

#define TRANSCRIPT_MAX (1u << 30)

struct replay_entry {
    char hash[65];
    json_t *line;
    bool used;
};

struct llm_replay {
    pthread_mutex_t lock;
    char *path;
    struct replay_entry *entries;
    size_t n;
    size_t next;    /* in order: the next entry to serve */
    bool in_order;
};

/* ---------------------------------------------------------------- loading */

static int add_line(llm_replay *rp, const char *line, size_t len, size_t lineno, strbuf *err)
{
    json_error_t jerr;
    json_t *o = json_loadb(line, len, 0, &jerr);
    const char *hash = json_string_value(json_object_get(o, "request_hash"));
    if (!o || !hash || strlen(hash) != 64) {
        strbuf_addf(err, "line %zu of transcript '%s' is not a recorded call (%s)", lineno,
                    rp->path, o ? "no request_hash" : jerr.text);
        json_decref(o);
        return -1;
    }
    rp->entries = xrealloc(rp->entries, (rp->n + 1) * sizeof *rp->entries);
    struct replay_entry *e = &rp->entries[rp->n++];
    memcpy(e->hash, hash, 65);
    e->line = o;
    e->used = false;
    return 0;
}

llm_replay *llm_replay_open(const char *path, bool in_order, strbuf *err)
{
    strbuf sb = STRBUF_INIT;
    if (read_file(path, &sb, TRANSCRIPT_MAX) < 0) {
        strbuf_addf(err, "cannot read transcript '%s': %s", path, strerror(errno));
        strbuf_release(&sb);
        return NULL;
    }
    llm_replay *rp = xcalloc(1, sizeof *rp);
    pthread_mutex_init(&rp->lock, NULL);
    rp->path = xstrdup(path);
    rp->in_order = in_order;
    const char *p = strbuf_str(&sb);
    size_t lineno = 0;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        lineno++;
        if (len && add_line(rp, p, len, lineno, err) < 0) {
            strbuf_release(&sb);
            llm_replay_free(rp);
            return NULL;
        }
        p += len + (nl ? 1 : 0);
    }
    strbuf_release(&sb);
    return rp;
}

void llm_replay_free(llm_replay *rp)
{
    if (!rp)
        return;
    for (size_t i = 0; i < rp->n; i++)
        json_decref(rp->entries[i].line);
    free(rp->entries);
    free(rp->path);
    pthread_mutex_destroy(&rp->lock);
    free(rp);
}

/* ---------------------------------------------------------------- serving */

static long int_field(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_integer(v) ? (long)json_integer_value(v) : 0;
}

static void fill_result(json_t *line, llm_result *res)
{
    json_t *reply = json_object_get(line, "reply");
    const char *s;
    if ((s = json_string_value(json_object_get(reply, "text"))))
        strbuf_adds(&res->text, s);
    if ((s = json_string_value(json_object_get(reply, "thinking"))))
        strbuf_adds(&res->thinking, s);
    if ((s = json_string_value(json_object_get(reply, "finish_reason"))))
        res->finish_reason = xstrdup(s);
    if ((s = json_string_value(json_object_get(reply, "model"))))
        res->model = xstrdup(s);
    json_t *u = json_object_get(line, "usage");
    res->usage.input_tokens = int_field(u, "input_tokens");
    res->usage.cached_input_tokens = int_field(u, "cached_input_tokens");
    res->usage.cache_write_tokens = int_field(u, "cache_write_tokens");
    res->usage.output_tokens = int_field(u, "output_tokens");
    res->usage.reasoning_tokens = int_field(u, "reasoning_tokens");
    res->http_status = (int)int_field(line, "http_status");
    const char *fail = json_string_value(json_object_get(line, "fail"));
    llm_fail f = fail ? llm_fail_from_name(fail) : LLM_FAIL_NONE;
    if (f == LLM_FAIL__COUNT)
        f = LLM_FAIL_MALFORMED_REPLY;
    if (f != LLM_FAIL_NONE) {
        const char *msg = json_string_value(json_object_get(line, "message"));
        llm_result_fail(res, f, "%s (replayed)", msg ? msg : "recorded failure");
    }
    res->replayed = true;
}

static struct replay_entry *find_entry(llm_replay *rp, const char *hash)
{
    if (rp->in_order)
        return rp->next < rp->n ? &rp->entries[rp->next++] : NULL;
    for (size_t i = 0; i < rp->n; i++)
        if (!rp->entries[i].used && !strcmp(rp->entries[i].hash, hash))
            return &rp->entries[i];
    /* Asked more often than recorded: serve the last recorded reply again. */
    for (size_t i = rp->n; i-- > 0;)
        if (!strcmp(rp->entries[i].hash, hash))
            return &rp->entries[i];
    return NULL;
}

void llm_replay_call(llm_replay *rp, const llm_request *req, const char *model,
                     llm_result *res)
{
    char hash[65];
    llm_request_hash(req, hash);
    pthread_mutex_lock(&rp->lock);
    struct replay_entry *e = find_entry(rp, hash);
    if (e)
        e->used = true;
    pthread_mutex_unlock(&rp->lock);
    if (!e) {
        if (rp->in_order)
            llm_result_fail(res, LLM_FAIL_REPLAY_MISS,
                            "transcript '%s' has no reply left: it holds %zu calls", rp->path,
                            rp->n);
        else
            llm_result_fail(res, LLM_FAIL_REPLAY_MISS,
                            "transcript '%s' has no reply for this request (model '%s', "
                            "hash %.12s): record it with --record, or serve in order with "
                            "--replay-order", rp->path, model, hash);
        return;
    }
    fill_result(e->line, res);
}

/* ---------------------------------------------------------------- recording */

static json_t *usage_json(const llm_usage *u)
{
    return json_pack("{s:I, s:I, s:I, s:I, s:I}", "input_tokens", (json_int_t)u->input_tokens,
                     "cached_input_tokens", (json_int_t)u->cached_input_tokens,
                     "cache_write_tokens", (json_int_t)u->cache_write_tokens, "output_tokens",
                     (json_int_t)u->output_tokens, "reasoning_tokens",
                     (json_int_t)u->reasoning_tokens);
}

static json_t *record_json(const char *provider, const llm_request *req, const char *model,
                           const llm_result *res)
{
    char hash[65];
    llm_request_hash(req, hash);
    char *canon = llm_request_canonical(req);
    json_t *o = json_object();
    json_object_set_new(o, "v", json_integer(1));
    json_object_set_new(o, "provider", json_string(provider));
    json_object_set_new(o, "model", json_string(model));
    json_object_set_new(o, "request_hash", json_string(hash));
    json_object_set_new(o, "request", json_loads(canon, 0, NULL));
    json_t *reply = json_object();
    json_object_set_new(reply, "text", json_string(strbuf_str(&res->text)));
    if (res->thinking.len)
        json_object_set_new(reply, "thinking", json_string(res->thinking.buf));
    if (res->finish_reason)
        json_object_set_new(reply, "finish_reason", json_string(res->finish_reason));
    if (res->model)
        json_object_set_new(reply, "model", json_string(res->model));
    json_object_set_new(o, "reply", reply);
    json_object_set_new(o, "fail", json_string(llm_fail_name(res->fail)));
    json_object_set_new(o, "message", json_string(strbuf_str(&res->message)));
    json_object_set_new(o, "http_status", json_integer(res->http_status));
    json_object_set_new(o, "usage", usage_json(&res->usage));
    json_object_set_new(o, "latency_s", json_real(res->latency_s));
    json_object_set_new(o, "retries", json_integer(res->retries));
    json_object_set_new(o, "cost_usd", res->cost_known ? json_real(res->cost_usd) : json_null());
    free(canon);
    return o;
}

int llm_record(const char *path, pthread_mutex_t *lock, const char *provider,
               const llm_request *req, const char *model, const llm_result *res,
               const char *secret, strbuf *err)
{
    json_t *o = record_json(provider, req, model, res);
    char *text = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII);
    json_decref(o);
    strbuf line = STRBUF_INIT;
    strbuf_adds(&line, text);
    free(text);
    llm_redact(&line, secret);
    strbuf_addc(&line, '\n');
    int rc = -1;
    pthread_mutex_lock(lock);
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        strbuf_addf(err, "cannot open transcript '%s': %s", path, strerror(errno));
    } else {
        ssize_t w = write(fd, line.buf, line.len);
        if (w != (ssize_t)line.len)
            strbuf_addf(err, "cannot write transcript '%s': %s", path,
                        w < 0 ? strerror(errno) : "short write");
        else if (close(fd) < 0)
            strbuf_addf(err, "cannot close transcript '%s': %s", path, strerror(errno));
        else
            rc = 0;
        if (rc < 0 && w == (ssize_t)line.len)
            fd = -1;
        if (rc < 0 && fd >= 0)
            close(fd);
    }
    pthread_mutex_unlock(lock);
    strbuf_release(&line);
    return rc;
}
