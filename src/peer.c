/* peer: JSON-lines conversations with child processes (see peer.h). */
#include "peer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "util.h"

#define MAX_REPLY (64u << 20)

int peer_start(peer *p, const char *name, const char *const *argv, const char *const *env_add,
               const char *log_path, strbuf *err)
{
    memset(p, 0, sizeof *p);
    p->name = xstrdup(name);
    p->log_path = log_path ? xstrdup(log_path) : NULL;
    if (proc_spawn(&p->child, argv, env_add, log_path, err) < 0)
        return -1;
    p->started = true;
    return 0;
}

void peer_log_tail(const peer *p, size_t max_bytes, strbuf *out)
{
    if (!p->log_path)
        return;
    strbuf log = STRBUF_INIT;
    if (read_file(p->log_path, &log, 256u << 20) == 0 && log.len) {
        size_t from = log.len > max_bytes ? log.len - max_bytes : 0;
        strbuf_add(out, log.buf + from, log.len - from);
        strbuf_trim_end(out);
    }
    strbuf_release(&log);
}

static void describe_end(peer *p, strbuf *err)
{
    int status = proc_finish(&p->child, 2.0);
    strbuf_addf(err, "%s ended (", p->name);
    proc_describe_status(status, err);
    strbuf_adds(err, ")");
    strbuf tail = STRBUF_INIT;
    peer_log_tail(p, 1500, &tail);
    if (tail.len)
        strbuf_addf(err, "; its last output:\n%s", tail.buf);
    strbuf_release(&tail);
}

json_t *peer_read(peer *p, double timeout_s, enum peer_failure *why, strbuf *err)
{
    strbuf line = STRBUF_INIT;
    int rc = proc_read_line(&p->child, &line, timeout_s, MAX_REPLY);
    json_t *reply = NULL;
    if (rc == 0) {
        json_error_t jerr;
        reply = json_loadb(line.buf, line.len, 0, &jerr);
        if (!reply || !json_is_object(reply)) {
            json_decref(reply);
            reply = NULL;
            *why = PEER_GARBAGE;
            strbuf_addf(err, "%s sent a reply that is not a JSON object: %.200s", p->name,
                        line.buf);
            peer_kill(p);
        } else {
            *why = PEER_OK;
        }
    } else if (rc == -2) {
        *why = PEER_TIMEOUT;
        strbuf_addf(err, "%s gave no answer within %.0f s and was killed", p->name, timeout_s);
        peer_kill(p);
    } else if (rc == -3) {
        *why = PEER_GARBAGE;
        strbuf_addf(err, "%s sent a reply longer than %u bytes", p->name, MAX_REPLY);
        peer_kill(p);
    } else {
        *why = PEER_DIED;
        describe_end(p, err);
    }
    strbuf_release(&line);
    return reply;
}

json_t *peer_call(peer *p, json_t *req, double timeout_s, enum peer_failure *why, strbuf *err)
{
    char *text = json_dumps(req, JSON_COMPACT);
    json_decref(req);
    strbuf line = STRBUF_INIT;
    strbuf_adds(&line, text);
    strbuf_addc(&line, '\n');
    free(text);
    int rc = proc_send(&p->child, line.buf, line.len);
    strbuf_release(&line);
    if (rc < 0) {
        *why = PEER_DIED;
        describe_end(p, err);
        return NULL;
    }
    return peer_read(p, timeout_s, why, err);
}

int peer_stop(peer *p, double grace_s)
{
    if (!p->started)
        return -1;
    if (p->child.in_fd >= 0 && !p->child.reaped) {
        const char *quit = "{\"op\":\"quit\"}\n";
        proc_send(&p->child, quit, strlen(quit));
    }
    int status = proc_finish(&p->child, grace_s);
    p->started = false;
    free(p->name);
    free(p->log_path);
    p->name = p->log_path = NULL;
    return status;
}

void peer_kill(peer *p)
{
    if (p->started)
        proc_kill(&p->child);
}
