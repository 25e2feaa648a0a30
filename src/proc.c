/* proc: child processes with time limits and capped output (see proc.h). */
#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

#define DEFAULT_MAX_OUTPUT (16u << 20)

void proc_result_init(proc_result *r)
{
    memset(r, 0, sizeof *r);
    r->exit_code = -1;
    strbuf_init(&r->out);
    strbuf_init(&r->err);
}

void proc_result_release(proc_result *r)
{
    strbuf_release(&r->out);
    strbuf_release(&r->err);
}

static void sleep_seconds(double s)
{
    struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

/* Waits for pid for up to timeout_s; returns 1 and sets *status if it ended. */
static int wait_with_timeout(pid_t pid, int *status, double timeout_s)
{
    double end = now_seconds() + timeout_s;
    for (;;) {
        pid_t got = waitpid(pid, status, WNOHANG);
        if (got == pid)
            return 1;
        if (got < 0 && errno != EINTR)
            return 1;
        if (now_seconds() >= end)
            return 0;
        sleep_seconds(0.01);
    }
}

/* SIGTERM to the group, a short grace, then SIGKILL; reaps pid. */
static int kill_group(pid_t pid)
{
    int status = 0;
    kill(-pid, SIGTERM);
    if (!wait_with_timeout(pid, &status, 1.0)) {
        kill(-pid, SIGKILL);
        waitpid(pid, &status, 0);
    }
    kill(-pid, SIGKILL); /* grandchildren left in the group */
    return status;
}

/* In the child, between fork and exec: only async-signal-safe calls. */
static void child_exec(const char *const *argv, const char *const *env_add, const char *cwd,
                       int in_fd, int out_fd, int err_fd, int report_fd)
{
    setpgid(0, 0);
    if (in_fd >= 0)
        dup2(in_fd, 0);
    if (out_fd >= 0)
        dup2(out_fd, 1);
    if (err_fd >= 0)
        dup2(err_fd, 2);
    if (cwd && chdir(cwd) < 0)
        goto failed;
    for (const char *const *e = env_add; e && *e; e++)
        putenv((char *)*e);
    execvp(argv[0], (char *const *)argv);
failed: {
    int e = errno;
    ssize_t ignored = write(report_fd, &e, sizeof e);
    (void)ignored;
    _exit(127);
}
}

static int make_pipe(int fds[2])
{
    return pipe2(fds, O_CLOEXEC);
}

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* Reads the exec-failure pipe: 0 when exec succeeded, else the child's errno. */
static int exec_error(int report_fd)
{
    int e = 0;
    ssize_t n;
    do {
        n = read(report_fd, &e, sizeof e);
    } while (n < 0 && errno == EINTR);
    return n == (ssize_t)sizeof e ? e : 0;
}

static void append_capped(strbuf *sb, const char *data, size_t n, size_t cap, bool *truncated)
{
    if (sb->len >= cap) {
        *truncated = true;
        return;
    }
    if (sb->len + n > cap) {
        n = cap - sb->len;
        *truncated = true;
    }
    strbuf_add(sb, data, n);
}

int proc_run(const proc_opts *o, proc_result *r)
{
    signal(SIGPIPE, SIG_IGN); /* a child that exits without reading its stdin */
    size_t cap = o->max_output ? o->max_output : DEFAULT_MAX_OUTPUT;
    int in[2] = { -1, -1 }, out[2] = { -1, -1 }, err[2] = { -1, -1 }, rep[2] = { -1, -1 };
    int out_file = -1;
    double start = now_seconds();

    if (make_pipe(err) < 0 || make_pipe(rep) < 0 || (o->stdin_data && make_pipe(in) < 0))
        goto no_start;
    if (o->stdout_path) {
        out_file = open(o->stdout_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (out_file < 0)
            goto no_start;
    } else if (make_pipe(out) < 0) {
        goto no_start;
    }
    int devnull = -1;
    if (!o->stdin_data)
        devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);

    pid_t pid = fork();
    if (pid < 0)
        goto no_start;
    if (pid == 0)
        child_exec(o->argv, o->env_add, o->cwd, o->stdin_data ? in[0] : devnull,
                   o->stdout_path ? out_file : out[1], err[1], rep[1]);
    setpgid(pid, pid);
    if (devnull >= 0)
        close(devnull);
    close_fd(&in[0]);
    close_fd(&out[1]);
    close_fd(&err[1]);
    close_fd(&rep[1]);
    close_fd(&out_file);
    int e = exec_error(rep[0]);
    close_fd(&rep[0]);
    if (e) {
        waitpid(pid, NULL, 0);
        strbuf_addf(&r->err, "cannot run '%s': %s", o->argv[0], strerror(e));
        close_fd(&in[1]);
        close_fd(&out[0]);
        close_fd(&err[0]);
        r->exit_code = -1;
        return -1;
    }

    size_t written = 0;
    if (in[1] >= 0)
        fcntl(in[1], F_SETFL, O_NONBLOCK);
    if (in[1] >= 0 && o->stdin_len == 0)
        close_fd(&in[1]);
    double deadline = o->timeout_s > 0 ? start + o->timeout_s : 0;
    char buf[65536];
    while (out[0] >= 0 || err[0] >= 0) {
        struct pollfd p[3];
        int np = 0, iout = -1, ierr = -1, iin = -1;
        if (out[0] >= 0) {
            iout = np;
            p[np++] = (struct pollfd){ out[0], POLLIN, 0 };
        }
        if (err[0] >= 0) {
            ierr = np;
            p[np++] = (struct pollfd){ err[0], POLLIN, 0 };
        }
        if (in[1] >= 0) {
            iin = np;
            p[np++] = (struct pollfd){ in[1], POLLOUT, 0 };
        }
        int wait_ms = 200;
        if (deadline > 0) {
            double left = deadline - now_seconds();
            if (left <= 0) {
                r->timed_out = true;
                break;
            }
            if (left * 1000 < wait_ms)
                wait_ms = (int)(left * 1000) + 1;
        }
        int n = poll(p, (nfds_t)np, wait_ms);
        if (n < 0 && errno != EINTR)
            break;
        if (n <= 0)
            continue;
        if (iin >= 0 && (p[iin].revents & (POLLOUT | POLLERR | POLLHUP))) {
            ssize_t w = write(in[1], o->stdin_data + written, o->stdin_len - written);
            if (w > 0)
                written += (size_t)w;
            if (w < 0 && errno != EAGAIN && errno != EINTR)
                written = o->stdin_len;
            if (written >= o->stdin_len)
                close_fd(&in[1]);
        }
        if (iout >= 0 && (p[iout].revents & (POLLIN | POLLHUP | POLLERR))) {
            ssize_t k = read(out[0], buf, sizeof buf);
            if (k > 0)
                append_capped(&r->out, buf, (size_t)k, cap, &r->truncated);
            else if (k == 0 || errno != EINTR)
                close_fd(&out[0]);
        }
        if (ierr >= 0 && (p[ierr].revents & (POLLIN | POLLHUP | POLLERR))) {
            ssize_t k = read(err[0], buf, sizeof buf);
            if (k > 0)
                append_capped(&r->err, buf, (size_t)k, cap, &r->truncated);
            else if (k == 0 || errno != EINTR)
                close_fd(&err[0]);
        }
    }
    close_fd(&in[1]);
    close_fd(&out[0]);
    close_fd(&err[0]);

    int status = 0;
    if (r->timed_out) {
        status = kill_group(pid);
    } else {
        double left = deadline > 0 ? deadline - now_seconds() : 1e9;
        if (!wait_with_timeout(pid, &status, left > 0 ? left : 0.01)) {
            r->timed_out = true;
            status = kill_group(pid);
        } else {
            kill(-pid, SIGKILL); /* leftovers of the group, if any */
        }
    }
    r->wall_s = now_seconds() - start;
    if (WIFEXITED(status)) {
        r->exit_code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        r->term_signal = WTERMSIG(status);
        r->exit_code = 128 + r->term_signal;
    }
    return 0;

no_start: {
    int saved = errno;
    strbuf_addf(&r->err, "cannot start '%s': %s", o->argv[0], strerror(saved));
    close_fd(&in[0]);
    close_fd(&in[1]);
    close_fd(&out[0]);
    close_fd(&out[1]);
    close_fd(&err[0]);
    close_fd(&err[1]);
    close_fd(&rep[0]);
    close_fd(&rep[1]);
    close_fd(&out_file);
    r->exit_code = -1;
    return -1;
}
}

int proc_spawn(proc_child *c, const char *const *argv, const char *const *env_add,
               const char *stderr_path, strbuf *err)
{
    int in[2] = { -1, -1 }, out[2] = { -1, -1 }, rep[2] = { -1, -1 };
    int err_fd = -1;
    memset(c, 0, sizeof *c);
    c->pid = -1;
    c->in_fd = c->out_fd = -1;
    c->status = -1;
    strbuf_init(&c->pending);
    if (stderr_path) {
        err_fd = open(stderr_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (err_fd < 0) {
            strbuf_addf(err, "cannot open log '%s': %s", stderr_path, strerror(errno));
            return -1;
        }
    }
    if (make_pipe(in) < 0 || make_pipe(out) < 0 || make_pipe(rep) < 0) {
        strbuf_addf(err, "cannot make pipes: %s", strerror(errno));
        goto fail;
    }
    pid_t pid = fork();
    if (pid < 0) {
        strbuf_addf(err, "cannot fork: %s", strerror(errno));
        goto fail;
    }
    if (pid == 0)
        child_exec(argv, env_add, NULL, in[0], out[1], err_fd, rep[1]);
    setpgid(pid, pid);
    close_fd(&in[0]);
    close_fd(&out[1]);
    close_fd(&rep[1]);
    close_fd(&err_fd);
    int e = exec_error(rep[0]);
    close_fd(&rep[0]);
    if (e) {
        waitpid(pid, NULL, 0);
        strbuf_addf(err, "cannot run '%s': %s", argv[0], strerror(e));
        close_fd(&in[1]);
        close_fd(&out[0]);
        return -1;
    }
    c->pid = pid;
    c->in_fd = in[1];
    c->out_fd = out[0];
    signal(SIGPIPE, SIG_IGN);
    return 0;
fail:
    close_fd(&in[0]);
    close_fd(&in[1]);
    close_fd(&out[0]);
    close_fd(&out[1]);
    close_fd(&rep[0]);
    close_fd(&rep[1]);
    close_fd(&err_fd);
    return -1;
}

int proc_send(proc_child *c, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = write(c->in_fd, data, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Moves one complete line from pending into line; returns 1 if there was one. */
static int take_line(proc_child *c, strbuf *line)
{
    char *nl = memchr(c->pending.buf, '\n', c->pending.len);
    if (!nl)
        return 0;
    size_t n = (size_t)(nl - c->pending.buf);
    strbuf_reset(line);
    strbuf_add(line, c->pending.buf, n);
    memmove(c->pending.buf, nl + 1, c->pending.len - n - 1);
    strbuf_truncate(&c->pending, c->pending.len - n - 1);
    return 1;
}

int proc_read_line(proc_child *c, strbuf *line, double timeout_s, size_t max_len)
{
    double deadline = now_seconds() + timeout_s;
    char buf[65536];
    for (;;) {
        if (take_line(c, line))
            return 0;
        if (c->pending.len > max_len)
            return -3;
        if (c->out_fd < 0)
            return -1;
        double left = deadline - now_seconds();
        if (left <= 0)
            return -2;
        struct pollfd p = { c->out_fd, POLLIN, 0 };
        int wait_ms = left > 1.0 ? 1000 : (int)(left * 1000) + 1;
        int n = poll(&p, 1, wait_ms);
        if (n < 0 && errno != EINTR)
            return -1;
        if (n <= 0)
            continue;
        ssize_t k = read(c->out_fd, buf, sizeof buf);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            close_fd(&c->out_fd);
            if (c->pending.len > 0) { /* a last line without its newline */
                strbuf_reset(line);
                strbuf_add(line, c->pending.buf, c->pending.len);
                strbuf_reset(&c->pending);
                return 0;
            }
            return -1;
        }
        strbuf_add(&c->pending, buf, (size_t)k);
    }
}

int proc_finish(proc_child *c, double grace_s)
{
    if (c->pid <= 0)
        return c->status;
    close_fd(&c->in_fd);
    int status = 0;
    if (!c->reaped) {
        if (wait_with_timeout(c->pid, &status, grace_s))
            kill(-c->pid, SIGKILL);
        else
            status = kill_group(c->pid);
        c->status = status;
        c->reaped = true;
    }
    close_fd(&c->out_fd);
    strbuf_release(&c->pending);
    return c->status;
}

void proc_kill(proc_child *c)
{
    if (c->pid <= 0)
        return;
    if (!c->reaped) {
        kill(-c->pid, SIGKILL);
        waitpid(c->pid, &c->status, 0);
        c->reaped = true;
    }
    close_fd(&c->in_fd);
    close_fd(&c->out_fd);
    strbuf_release(&c->pending);
}

void proc_describe_status(int status, strbuf *out)
{
    if (status < 0)
        strbuf_adds(out, "not started");
    else if (WIFEXITED(status))
        strbuf_addf(out, "exit code %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        strbuf_addf(out, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    else
        strbuf_addf(out, "wait status %d", status);
}
