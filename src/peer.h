/*
 * peer: a child process spoken to in JSON lines (the reference process and the worker).
 * Each request is one JSON object on a line of the child's stdin; each reply one JSON
 * object on a line of its stdout, read with a time limit. A child that dies, hangs or
 * answers garbage yields a typed failure; the child is then killed with its group.
 */
#ifndef CUTEGEN_PEER_H
#define CUTEGEN_PEER_H

#include <jansson.h>

#include "proc.h"
#include "strbuf.h"

enum peer_failure {
    PEER_OK = 0,
    PEER_DIED,     /* end of file: the child exited or crashed */
    PEER_TIMEOUT,  /* no reply within the time limit: the child was killed */
    PEER_GARBAGE   /* a reply that is not a JSON object, or far too long */
};

typedef struct peer {
    proc_child child;
    char *name;       /* "reference process", "worker": for messages */
    char *log_path;   /* the child's stderr */
    bool started;
} peer;

int peer_start(peer *p, const char *name, const char *const *argv, const char *const *env_add,
               const char *log_path, strbuf *err);
/* Reads one reply line. On failure returns NULL, sets *why and describes it in err
 * (including how the child ended and the end of its log). */
json_t *peer_read(peer *p, double timeout_s, enum peer_failure *why, strbuf *err);
/* Sends req (the reference is stolen) and reads the reply. */
json_t *peer_call(peer *p, json_t *req, double timeout_s, enum peer_failure *why, strbuf *err);
/* Asks the child to quit, then ends it; returns its wait status. */
int peer_stop(peer *p, double grace_s);
void peer_kill(peer *p);
/* The last max_bytes of the child's log, for messages. */
void peer_log_tail(const peer *p, size_t max_bytes, strbuf *out);

#endif
