/*
 * proc: running other programs (nvcc, the worker, ncu, python3, the user's `command`
 * provider) safely: argv vectors, never a shell string; stdout and stderr collected by a
 * poll loop so pipes cannot deadlock; every captured byte count capped; a time limit
 * after which the whole process group gets SIGTERM, then SIGKILL.
 *
 * Two styles: proc_run() runs a program to completion; proc_child is a long-lived
 * child spoken to in lines over its stdin and stdout (the reference process, the worker).
 */
#ifndef CUTEGEN_PROC_H
#define CUTEGEN_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "strbuf.h"

typedef struct proc_opts {
    const char *const *argv;    /* argv[0] is looked up in PATH */
    const char *const *env_add; /* NULL-terminated "NAME=VALUE" added to the environment */
    const char *cwd;            /* NULL: the current directory */
    const char *stdin_data;     /* NULL: stdin is /dev/null */
    size_t stdin_len;
    double timeout_s;           /* <= 0: no limit */
    size_t max_output;          /* cap for each of stdout and stderr; 0: 16 MiB */
    const char *stdout_path;    /* non-NULL: stdout goes to this file instead of memory */
} proc_opts;

typedef struct proc_result {
    int exit_code;      /* the exit status; 128+signal when killed; -1 when it never ran */
    int term_signal;    /* the signal that ended it, or 0 */
    bool timed_out;     /* the time limit was reached and it was killed */
    bool truncated;     /* output went over max_output and was cut */
    double wall_s;
    strbuf out;         /* captured stdout */
    strbuf err;         /* captured stderr, or why it could not start */
} proc_result;

void proc_result_init(proc_result *r);
void proc_result_release(proc_result *r);

/* Runs a program to completion. Returns 0 when it ran (whatever its exit code), -1 when
 * it could not be started (r->err says why). */
int proc_run(const proc_opts *opts, proc_result *r);

typedef struct proc_child {
    pid_t pid;
    int in_fd;      /* we write requests here */
    int out_fd;     /* we read replies here */
    strbuf pending; /* bytes read from out_fd not yet returned as lines */
    int status;     /* wait status once reaped, else -1 */
    bool reaped;
} proc_child;

/* Starts a child in its own process group with pipes on stdin and stdout; its stderr
 * goes to stderr_path (appended) or, when NULL, to ours. */
int proc_spawn(proc_child *c, const char *const *argv, const char *const *env_add,
               const char *stderr_path, strbuf *err);
/* Writes all of data to the child's stdin; -1 if the child is gone. */
int proc_send(proc_child *c, const char *data, size_t len);
/* Reads one line (without its newline) into line, at most max_len bytes.
 * Returns 0 on a line, -1 on end of file, -2 on time-out, -3 when the line is too long. */
int proc_read_line(proc_child *c, strbuf *line, double timeout_s, size_t max_len);
/* Ends the child: closes its stdin, waits up to grace_s, then SIGTERM and SIGKILL to
 * the whole group. Returns its wait status. */
int proc_finish(proc_child *c, double grace_s);
/* Kills the child's whole process group now and reaps it. */
void proc_kill(proc_child *c);
/* Describes a wait status in words: "exit code 3", "killed by signal 9 (Killed)". */
void proc_describe_status(int status, strbuf *out);

#endif
