/*
 * llm_sse: a parser for server-sent events (the text/event-stream format both APIs
 * stream in). Bytes arrive in arbitrary pieces; each complete event (an "event:" name
 * and its "data:" lines, ended by a blank line) goes to a callback. Comments (lines
 * starting with ':') and unknown fields are ignored; lines end with \n, \r\n or \r.
 * Lines are capped so a broken server cannot make it grow without bound.
 */
#include "llm.h"

#include <string.h>

#define SSE_MAX_LINE (8u << 20)

void llm_sse_init(llm_sse *s, llm_sse_fn fn, void *ctx)
{
    memset(s, 0, sizeof *s);
    strbuf_init(&s->line);
    strbuf_init(&s->event);
    strbuf_init(&s->data);
    s->max_line = SSE_MAX_LINE;
    s->fn = fn;
    s->ctx = ctx;
}

void llm_sse_release(llm_sse *s)
{
    strbuf_release(&s->line);
    strbuf_release(&s->event);
    strbuf_release(&s->data);
}

static int dispatch(llm_sse *s)
{
    int rc = 0;
    if (s->data.len || s->event.len)
        rc = s->fn(s->ctx, strbuf_str(&s->event), strbuf_str(&s->data));
    strbuf_reset(&s->event);
    strbuf_reset(&s->data);
    return rc;
}

static int process_line(llm_sse *s, const char *line, size_t len)
{
    if (len == 0)
        return dispatch(s);
    if (line[0] == ':')
        return 0;
    const char *colon = memchr(line, ':', len);
    size_t name_len = colon ? (size_t)(colon - line) : len;
    const char *value = colon ? colon + 1 : line + len;
    size_t value_len = len - (size_t)(value - line);
    if (value_len && *value == ' ') {
        value++;
        value_len--;
    }
    if (name_len == 5 && !memcmp(line, "event", 5)) {
        strbuf_reset(&s->event);
        strbuf_add(&s->event, value, value_len);
    } else if (name_len == 4 && !memcmp(line, "data", 4)) {
        if (s->data.len)
            strbuf_addc(&s->data, '\n');
        strbuf_add(&s->data, value, value_len);
    }
    return 0;
}

int llm_sse_feed(llm_sse *s, const char *data, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        char c = data[i];
        bool after_cr = s->last_cr;
        s->last_cr = c == '\r';
        if (c == '\n' || c == '\r') {
            /* A \n right after a \r that ended a line is part of that ending. */
            if (c == '\n' && after_cr)
                continue;
            int rc = process_line(s, strbuf_str(&s->line), s->line.len);
            strbuf_reset(&s->line);
            if (rc)
                return rc;
            continue;
        }
        if (s->line.len >= s->max_line)
            return -2;
        strbuf_addc(&s->line, c);
    }
    return 0;
}
