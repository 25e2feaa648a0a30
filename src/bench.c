/* bench: many problems at once on one host, each a `cutegen run` child (see bench.h). */
#include "bench.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lane.h"
#include "report.h"
#include "util.h"

void bench_opts_init(bench_opts *o)
{
    memset(o, 0, sizeof *o);
    o->levels = "1";
    o->shards = 1;
    o->problem_timeout_s = 4 * 3600;
    o->max_attempts = 2;
}

/* ------------------------------------------------------------------ selection */

int bench_in_ranges(const char *ranges, int n)
{
    if (!ranges)
        return 1;
    const char *p = ranges;
    int hit = 0;
    while (*p) {
        char *end;
        long lo = strtol(p, &end, 10), hi;
        if (end == p || lo < 0)
            return -1;
        p = end;
        hi = lo;
        if (*p == '-') {
            hi = strtol(p + 1, &end, 10);
            if (end == p + 1 || hi < lo)
                return -1;
            p = end;
        }
        if (*p == ',')
            p++;
        else if (*p)
            return -1;
        if (n >= lo && n <= hi)
            hit = 1;
    }
    return hit;
}

int bench_parse_shard(const char *text, int *shard, int *shards)
{
    char *end;
    long i = strtol(text, &end, 10);
    if (end == text || *end != '/')
        return -1;
    const char *q = end + 1;
    long n = strtol(q, &end, 10);
    if (end == q || *end || n < 1 || i < 0 || i >= n)
        return -1;
    *shard = (int)i;
    *shards = (int)n;
    return 0;
}

static void push_problem(bench_problem **v, int *n, int *cap, const char *path, int level,
                         int number)
{
    if (*n == *cap) {
        *cap = *cap ? 2 * *cap : 64;
        *v = xrealloc(*v, sizeof **v * (size_t)*cap);
    }
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t len = strlen(base);
    if (str_ends_with(base, ".py"))
        len -= 3;
    bench_problem *p = &(*v)[(*n)++];
    p->path = xstrdup(path);
    p->slug = level ? xasprintf("l%d-%.*s", level, (int)len, base) : xstrndup(base, len);
    p->level = level;
    p->number = number;
}

static int by_level_number(const void *a, const void *b)
{
    const bench_problem *x = a, *y = b;
    if (x->level != y->level)
        return x->level - y->level;
    if (x->number != y->number)
        return x->number - y->number;
    return strcmp(x->slug, y->slug);
}

static int add_level(const bench_opts *o, int level, bench_problem **v, int *n, int *cap,
                     strbuf *err)
{
    char *dir = xasprintf("%s/level%d", o->kernelbench, level);
    DIR *d = opendir(dir);
    if (!d) {
        strbuf_addf(err, "cannot read '%s' (%s): --kernelbench wants a KernelBench tree "
                    "holding level1/, level2/, ...", dir, strerror(errno));
        free(dir);
        return -1;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!str_ends_with(e->d_name, ".py"))
            continue;
        int number = atoi(e->d_name);
        if (number <= 0 || !bench_in_ranges(o->problems, number))
            continue;
        char *path = xasprintf("%s/%s", dir, e->d_name);
        push_problem(v, n, cap, path, level, number);
        free(path);
    }
    closedir(d);
    free(dir);
    return 0;
}

int bench_select(const bench_opts *o, bench_problem **out, strbuf *err)
{
    bench_problem *v = NULL;
    int n = 0, cap = 0;
    if (o->problems && bench_in_ranges(o->problems, 0) < 0) {
        strbuf_addf(err, "--problems wants numbers and ranges such as 1-20,23, not '%s'",
                    o->problems);
        return -1;
    }
    if (o->kernelbench) {
        for (const char *p = o->levels; p && *p;) {
            char *end;
            long level = strtol(p, &end, 10);
            if (end == p || level < 1 || level > 9 || (*end && *end != ',')) {
                strbuf_addf(err, "--level wants levels such as 1,2, not '%s'", o->levels);
                bench_problems_free(v, n);
                return -1;
            }
            if (add_level(o, (int)level, &v, &n, &cap, err) < 0) {
                bench_problems_free(v, n);
                return -1;
            }
            p = *end ? end + 1 : end;
        }
    }
    int from_levels = n;
    for (int i = 0; i < o->n_tasks; i++) {
        if (!file_exists(o->tasks[i])) {
            strbuf_addf(err, "problem file '%s' does not exist", o->tasks[i]);
            bench_problems_free(v, n);
            return -1;
        }
        /* A file in a KernelBench-shaped tree keeps its level and number (sorting, slug). */
        const char *base = strrchr(o->tasks[i], '/');
        int level = report_level_of(o->tasks[i]);
        push_problem(&v, &n, &cap, o->tasks[i], level, level ? atoi(base ? base + 1 : o->tasks[i]) : 0);
    }
    qsort(v, (size_t)(o->in_order ? from_levels : n), sizeof *v, by_level_number);
    int kept = 0;
    for (int i = 0; i < n; i++) {
        if (i % o->shards == o->shard) {
            v[kept++] = v[i];
        } else {
            free(v[i].path);
            free(v[i].slug);
        }
    }
    *out = v;
    return kept;
}

void bench_problems_free(bench_problem *p, int n)
{
    for (int i = 0; i < n; i++) {
        free(p[i].path);
        free(p[i].slug);
    }
    free(p);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

char **bench_run_dirs(const char *dir, int *n)
{
    *n = 0;
    char *db = xasprintf("%s/bench.db", dir);
    bool is_sweep = file_exists(db);
    free(db);
    if (!is_sweep)
        return NULL;
    char *root = xasprintf("%s/problems", dir);
    char **v = xcalloc(1, sizeof *v);
    DIR *d = opendir(root);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.' || strstr(e->d_name, ".abandoned-"))
            continue;
        char *run = xasprintf("%s/%s", root, e->d_name);
        char *rdb = xasprintf("%s/run.db", run);
        if (file_exists(rdb)) {
            v = xrealloc(v, sizeof *v * (size_t)(*n + 2));
            v[(*n)++] = run;
        } else {
            free(run);
        }
        free(rdb);
    }
    if (d)
        closedir(d);
    free(root);
    qsort(v, (size_t)*n, sizeof *v, by_name);
    v[*n] = NULL;
    return v;
}

/* ------------------------------------------------------------------ the sweep's state */

struct child {
    int row;          /* index into sweep.rows */
    pid_t pid;
    int gpu;
    double started;
};

struct row {
    bench_problem p;
    char *state;      /* queued, running, done, failed */
    int attempts;
    double best_speedup, best_ms, seconds;
    char *stop;
};

struct sweep {
    const bench_opts *o;
    sqlite3 *db;
    char *dir, *lanes;
    struct row *rows;
    int n_rows;
    struct child *kids;
    int n_kids;
    int running_on[BENCH_MAX_GPUS];
    double started;
    double started_epoch; /* the lanes' logs are in seconds since the epoch */
    bool live;
    int drawn_lines;
    double last_log;
};

static const char schema_sql[] =
    "CREATE TABLE IF NOT EXISTS problems ("
    "  slug TEXT PRIMARY KEY, path TEXT NOT NULL, level INTEGER, number INTEGER,"
    "  state TEXT NOT NULL DEFAULT 'queued', attempts INTEGER NOT NULL DEFAULT 0,"
    "  exit_code INTEGER, gpu INTEGER, started REAL, ended REAL, seconds REAL,"
    "  best_ms REAL, best_speedup REAL, stop TEXT, message TEXT);"
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);";

static int db_exec(struct sweep *s, const char *sql, strbuf *err)
{
    char *msg = NULL;
    if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        strbuf_addf(err, "bench.db: %s", msg ? msg : sqlite3_errmsg(s->db));
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

static sqlite3_stmt *db_prepare(struct sweep *s, const char *sql)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
        BUG("bench.db: %s: %s", sql, sqlite3_errmsg(s->db));
    return st;
}

static void db_set_meta(struct sweep *s, const char *key, const char *value)
{
    sqlite3_stmt *st = db_prepare(s, "INSERT OR REPLACE INTO meta VALUES (?, ?)");
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, value, -1, SQLITE_STATIC);
    sqlite3_step(st);
    sqlite3_finalize(st);
}

static int db_open(struct sweep *s, strbuf *err)
{
    char *path = xasprintf("%s/bench.db", s->dir);
    int rc = sqlite3_open(path, &s->db);
    free(path);
    if (rc != SQLITE_OK) {
        strbuf_addf(err, "cannot open %s/bench.db: %s", s->dir, sqlite3_errmsg(s->db));
        return -1;
    }
    sqlite3_busy_timeout(s->db, 10000);
    return db_exec(s, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;", err) < 0 ||
                   db_exec(s, schema_sql, err) < 0
               ? -1
               : 0;
}

/* Adds the selected problems (kept when already there) and loads their states. */
static void db_load_rows(struct sweep *s, bench_problem *v, int n)
{
    s->rows = xcalloc((size_t)n, sizeof *s->rows);
    s->n_rows = n;
    sqlite3_stmt *ins = db_prepare(s, "INSERT OR IGNORE INTO problems (slug, path, level, "
                                      "number) VALUES (?, ?, ?, ?)");
    sqlite3_stmt *get = db_prepare(s, "SELECT state, attempts, best_speedup, best_ms, "
                                      "seconds, stop FROM problems WHERE slug = ?");
    for (int i = 0; i < n; i++) {
        struct row *r = &s->rows[i];
        r->p = v[i];
        sqlite3_bind_text(ins, 1, r->p.slug, -1, SQLITE_STATIC);
        sqlite3_bind_text(ins, 2, r->p.path, -1, SQLITE_STATIC);
        sqlite3_bind_int(ins, 3, r->p.level);
        sqlite3_bind_int(ins, 4, r->p.number);
        sqlite3_step(ins);
        sqlite3_reset(ins);
        sqlite3_bind_text(get, 1, r->p.slug, -1, SQLITE_STATIC);
        if (sqlite3_step(get) == SQLITE_ROW) {
            r->state = xstrdup((const char *)sqlite3_column_text(get, 0));
            r->attempts = sqlite3_column_int(get, 1);
            r->best_speedup = sqlite3_column_double(get, 2);
            r->best_ms = sqlite3_column_double(get, 3);
            r->seconds = sqlite3_column_double(get, 4);
            const unsigned char *stop = sqlite3_column_text(get, 5);
            r->stop = stop ? xstrdup((const char *)stop) : NULL;
        } else {
            r->state = xstrdup("queued");
        }
        sqlite3_reset(get);
    }
    sqlite3_finalize(ins);
    sqlite3_finalize(get);
}

static void row_set_state(struct sweep *s, struct row *r, const char *state)
{
    free(r->state);
    r->state = xstrdup(state);
    sqlite3_stmt *st = db_prepare(s, "UPDATE problems SET state = ? WHERE slug = ?");
    sqlite3_bind_text(st, 1, state, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, r->p.slug, -1, SQLITE_STATIC);
    sqlite3_step(st);
    sqlite3_finalize(st);
}

/* ------------------------------------------------------------------ children */

static char *problem_dir(struct sweep *s, const struct row *r)
{
    return xasprintf("%s/problems/%s", s->dir, r->p.slug);
}

static char *status_path(struct sweep *s, const struct row *r)
{
    return xasprintf("%s/status/%s.json", s->dir, r->p.slug);
}

static int pick_gpu(struct sweep *s)
{
    int best = 0;
    for (int g = 1; g < s->o->n_gpus; g++)
        if (s->running_on[g] < s->running_on[best])
            best = g;
    return best;
}

/* The child's argv: cutegen run --task P (--run-dir D | --resume D) --device G ARGS. */
static char **child_argv(struct sweep *s, const struct row *r, int gpu)
{
    const bench_opts *o = s->o;
    char **argv = xcalloc((size_t)o->n_run_args + 12, sizeof *argv);
    int n = 0;
    char *dir = problem_dir(s, r);
    char *db = xasprintf("%s/run.db", dir);
    bool resume = file_exists(db);
    free(db);
    argv[n++] = xstrdup(o->cutegen);
    argv[n++] = xstrdup("run");
    argv[n++] = xstrdup("--task");
    argv[n++] = xstrdup(r->p.path);
    argv[n++] = xstrdup(resume ? "--resume" : "--run-dir");
    argv[n++] = dir;
    argv[n++] = xstrdup("--device");
    argv[n++] = xasprintf("%d", o->gpus[gpu]);
    for (int i = 0; i < o->n_run_args; i++)
        argv[n++] = xstrdup(o->run_args[i]);
    return argv;
}

static void free_argv(char **argv)
{
    for (char **a = argv; *a; a++)
        free(*a);
    free(argv);
}

static int start_child(struct sweep *s, int ri, strbuf *err)
{
    struct row *r = &s->rows[ri];
    int gpu = pick_gpu(s);
    char **argv = child_argv(s, r, gpu);
    char *log = xasprintf("%s/logs/%s.log", s->dir, r->p.slug);
    char *status = status_path(s, r);
    unlink(status);
    /* A run directory without run.db is what a run killed at its very start leaves. */
    char *dir = problem_dir(s, r);
    char *db = xasprintf("%s/run.db", dir);
    if (!file_exists(db) && dir_exists(dir)) {
        char *junk = xasprintf("%s.abandoned-%ld", dir, (long)time(NULL));
        rename(dir, junk);
        free(junk);
    }
    free(db);
    free(dir);
    int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
        strbuf_addf(err, "cannot open '%s': %s", log, strerror(errno));
        free(log);
        free(status);
        free_argv(argv);
        return -1;
    }
    dprintf(fd, "\n== %s: cutegen bench starts:", r->p.slug);
    for (char **a = argv; *a; a++)
        dprintf(fd, " %s", *a);
    dprintf(fd, "\n");
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGTERM); /* the sweep died: so does its run */
        if (getppid() != parent)
            _exit(127);
        dup2(fd, 1);
        dup2(fd, 2);
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0)
            dup2(devnull, 0);
        setenv("CUTEGEN_LANE_DIR", s->lanes, 1);
        setenv("CUTEGEN_STATUS_FILE", status, 1);
        execv(argv[0], argv);
        dprintf(2, "cutegen bench: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(fd);
    free(log);
    free(status);
    free_argv(argv);
    if (pid < 0) {
        strbuf_addf(err, "fork failed: %s", strerror(errno));
        return -1;
    }
    s->kids = xrealloc(s->kids, sizeof *s->kids * (size_t)(s->n_kids + 1));
    s->kids[s->n_kids++] = (struct child){ ri, pid, gpu, now_seconds() };
    s->running_on[gpu]++;
    r->attempts++;
    row_set_state(s, r, "running");
    sqlite3_stmt *st = db_prepare(s, "UPDATE problems SET attempts = ?, gpu = ?, started = ?, "
                                     "ended = NULL, exit_code = NULL WHERE slug = ?");
    sqlite3_bind_int(st, 1, r->attempts);
    sqlite3_bind_int(st, 2, s->o->gpus[gpu]);
    sqlite3_bind_double(st, 3, now_seconds());
    sqlite3_bind_text(st, 4, r->p.slug, -1, SQLITE_STATIC);
    sqlite3_step(st);
    sqlite3_finalize(st);
    return 0;
}

static json_t *read_status(struct sweep *s, const struct row *r)
{
    char *path = status_path(s, r);
    json_t *j = json_load_file(path, 0, NULL);
    free(path);
    return j;
}

/* The last line of the child's log that says "error", for the record. */
static char *failure_message(struct sweep *s, const struct row *r)
{
    char *log = xasprintf("%s/logs/%s.log", s->dir, r->p.slug);
    strbuf text = STRBUF_INIT;
    read_file(log, &text, 8u << 20);
    free(log);
    char *found = NULL;
    for (char *line = text.buf; line && *line;) {
        char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        if (memmem(line, len, "error", 5)) {
            free(found);
            found = xstrndup(line, len > 400 ? 400 : len);
        }
        line = nl ? nl + 1 : NULL;
    }
    strbuf_release(&text);
    return found;
}

static void child_ended(struct sweep *s, int k, int status, bool timed_out)
{
    struct child c = s->kids[k];
    s->kids[k] = s->kids[--s->n_kids];
    s->running_on[c.gpu]--;
    struct row *r = &s->rows[c.row];
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    json_t *st = read_status(s, r);
    r->best_speedup = json_number_value(json_object_get(st, "best_speedup"));
    r->best_ms = json_number_value(json_object_get(st, "best_ms"));
    r->seconds = now_seconds() - c.started;
    free(r->stop);
    const char *stop = json_string_value(json_object_get(st, "stopped"));
    r->stop = stop ? xstrdup(stop) : NULL;
    char *msg = NULL;
    if (timed_out)
        msg = xasprintf("killed after the per-problem limit of %.0f s (--problem-timeout)",
                        s->o->problem_timeout_s);
    else if (code != 0)
        msg = failure_message(s, r);
    row_set_state(s, r, code == 0 && !timed_out ? "done" : "failed");
    sqlite3_stmt *q = db_prepare(s, "UPDATE problems SET exit_code = ?, ended = ?, seconds = "
                                    "coalesce(seconds, 0) + ?, best_ms = ?, best_speedup = ?, "
                                    "stop = ?, message = ? WHERE slug = ?");
    sqlite3_bind_int(q, 1, code);
    sqlite3_bind_double(q, 2, now_seconds());
    sqlite3_bind_double(q, 3, r->seconds);
    sqlite3_bind_double(q, 4, r->best_ms);
    sqlite3_bind_double(q, 5, r->best_speedup);
    sqlite3_bind_text(q, 6, r->stop, -1, SQLITE_STATIC);
    sqlite3_bind_text(q, 7, msg, -1, SQLITE_STATIC);
    sqlite3_bind_text(q, 8, r->p.slug, -1, SQLITE_STATIC);
    sqlite3_step(q);
    sqlite3_finalize(q);
    if (!s->live || code != 0) {
        if (code == 0)
            progress("done   %-44s %s", r->p.slug,
                     r->best_speedup > 0 ? "" : "no correct kernel");
        else
            progress("FAILED %-44s exit %d%s%s", r->p.slug, code, msg ? ": " : "", msg ? msg : "");
        if (code == 0 && r->best_speedup > 0 && !cg_quiet)
            fprintf(stderr, "cutegen:        best %.4f ms, %.3fx over eager, in %.0f s\n",
                    r->best_ms, r->best_speedup, r->seconds);
    }
    free(msg);
    json_decref(st);
}

/* ------------------------------------------------------------------ the view */

static void counts(struct sweep *s, int *queued, int *running, int *done, int *failed)
{
    *queued = *running = *done = *failed = 0;
    for (int i = 0; i < s->n_rows; i++) {
        const char *st = s->rows[i].state;
        if (!strcmp(st, "queued")) (*queued)++;
        else if (!strcmp(st, "running")) (*running)++;
        else if (!strcmp(st, "done")) (*done)++;
        else (*failed)++;
    }
}

static void summary_line(struct sweep *s, strbuf *line)
{
    int queued, running, done, failed;
    counts(s, &queued, &running, &done, &failed);
    double logsum = 0, spent = 0, cost = 0;
    int n_ok = 0, n_timed = 0;
    for (int i = 0; i < s->n_rows; i++) {
        struct row *r = &s->rows[i];
        if (!strcmp(r->state, "done") || !strcmp(r->state, "failed")) {
            logsum += log(r->best_speedup > 0 ? r->best_speedup : 1.0);
            n_ok++;
            spent += r->seconds;
            n_timed++;
        }
    }
    for (int k = 0; k < s->n_kids; k++) {
        json_t *st = read_status(s, &s->rows[s->kids[k].row]);
        cost += json_number_value(json_object_get(st, "cost_usd"));
        json_decref(st);
    }
    double elapsed = now_seconds() - s->started;
    strbuf_addf(line, "bench: %d/%d done, %d running, %d queued, %d failed", done, s->n_rows,
                running, queued, failed);
    if (n_ok)
        strbuf_addf(line, " | geomean %.3fx (fail=1x)", exp(logsum / n_ok));
    strbuf_addf(line, " | %.0f s", elapsed);
    if (n_timed && (queued || running) && s->o->jobs > 0)
        strbuf_addf(line, ", ETA ~%.0f s",
                    spent / n_timed * (queued + 0.5 * running) / s->o->jobs);
    if (cost > 0)
        strbuf_addf(line, " | running runs' spend $%.3f", cost);
}

static void draw(struct sweep *s, bool force)
{
    double now = now_seconds();
    if (!s->live) {
        if (!force && now - s->last_log < 30)
            return;
        s->last_log = now;
        strbuf line = STRBUF_INIT;
        summary_line(s, &line);
        progress("%s", line.buf);
        strbuf_release(&line);
        return;
    }
    strbuf out = STRBUF_INIT;
    for (int i = 0; i < s->drawn_lines; i++)
        strbuf_adds(&out, "\033[1A\033[2K");
    strbuf_adds(&out, "\r\033[2K");
    summary_line(s, &out);
    strbuf_addc(&out, '\n');
    int lines = 1;
    for (int k = 0; k < s->n_kids; k++) {
        struct row *r = &s->rows[s->kids[k].row];
        json_t *st = read_status(s, r);
        const char *text = json_string_value(json_object_get(st, "line"));
        strbuf_addf(&out, "\033[2K  [gpu %d] %.*s\n", s->o->gpus[s->kids[k].gpu], 150,
                    text ? text : r->p.slug);
        json_decref(st);
        lines++;
    }
    fputs(out.buf, stderr);
    fflush(stderr);
    s->drawn_lines = lines;
    strbuf_release(&out);
}

/* ------------------------------------------------------------------ GPU lanes' use */

/* How long each GPU lane was held since `since`: the sum of the holds logged in
 * lanes/gpu<N>.log (lane.h), clipped to the window. */
static double lane_busy_seconds(struct sweep *s, int device, double since, double until)
{
    char *path = xasprintf("%s/gpu%d.log", s->lanes, device);
    FILE *f = fopen(path, "r");
    free(path);
    if (!f)
        return 0;
    double busy = 0, a, b;
    int pid;
    while (fscanf(f, "%d %lf %lf", &pid, &a, &b) == 3) {
        if (a < since)
            a = since;
        if (b > until)
            b = until;
        if (b > a)
            busy += b - a;
    }
    fclose(f);
    return busy;
}

static double epoch_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void print_summary(struct sweep *s)
{
    double wall = now_seconds() - s->started;
    printf("run:      %s\n", s->dir);
    printf("problems: %d", s->n_rows);
    int queued, running, done, failed;
    counts(s, &queued, &running, &done, &failed);
    printf(" (%d done, %d failed, %d not run)\n", done, failed, queued + running);
    printf("wall:     %.1f s\n", wall);
    json_t *lanes = json_object();
    for (int g = 0; g < s->o->n_gpus; g++) {
        double busy = lane_busy_seconds(s, s->o->gpus[g], s->started_epoch, epoch_now());
        printf("gpu %d:    lane held %.1f s = %.0f%% of the wall time (the rest: waiting for "
               "builds, models and reference start-ups)\n", s->o->gpus[g], busy,
               wall > 0 ? 100 * busy / wall : 0);
        char key[16];
        snprintf(key, sizeof key, "%d", s->o->gpus[g]);
        json_object_set_new(lanes, key, json_pack("{s:f, s:f}", "busy_s", busy, "wall_s", wall));
    }
    char *text = json_dumps(lanes, JSON_COMPACT);
    db_set_meta(s, "last_lanes", text);
    free(text);
    json_decref(lanes);
    for (int i = 0; i < s->n_rows; i++) {
        struct row *r = &s->rows[i];
        if (r->best_speedup > 0)
            printf("  %-48s %-7s %9.4f ms %7.3fx  %s\n", r->p.slug, r->state, r->best_ms,
                   r->best_speedup, r->stop ? r->stop : "");
        else
            printf("  %-48s %-7s %9s    %6s  %s\n", r->p.slug, r->state, "-", "-",
                   r->stop ? r->stop : "");
    }
    printf("report:   cutegen report %s\n", s->dir);
}

/* ------------------------------------------------------------------ the loop */

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
    stop_signal = sig;
}

static int lock_dir(struct sweep *s, strbuf *err)
{
    char *path = xasprintf("%s/bench.lock", s->dir);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    free(path);
    if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) < 0) {
        strbuf_addf(err, "the sweep '%s' is in use by another cutegen bench (or cannot be "
                    "locked: %s); wait for it or stop it", s->dir, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd; /* held until the process ends */
}

static int setup(struct sweep *s, strbuf *err)
{
    const char *sub[] = { "problems", "logs", "status", "lanes" };
    for (size_t i = 0; i < sizeof sub / sizeof *sub; i++) {
        char *d = xasprintf("%s/%s", s->dir, sub[i]);
        int rc = mkdir_p(d, 0755);
        free(d);
        if (rc < 0) {
            strbuf_addf(err, "cannot create '%s/%s': %s", s->dir, sub[i], strerror(errno));
            return -1;
        }
    }
    s->lanes = xasprintf("%s/lanes", s->dir);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return lane_dir_init(s->lanes, s->o->cpus > 0 ? s->o->cpus : (int)(cores > 0 ? cores : 1));
}

/* Rows to run now: queued ones, and running ones a killed sweep left (resumed), and
 * failed ones with attempts left. */
static void requeue(struct sweep *s)
{
    for (int i = 0; i < s->n_rows; i++) {
        struct row *r = &s->rows[i];
        if (!strcmp(r->state, "running") ||
            (!strcmp(r->state, "failed") && r->attempts < s->o->max_attempts))
            row_set_state(s, r, "queued");
    }
}

static void kill_children(struct sweep *s)
{
    for (int k = 0; k < s->n_kids; k++)
        kill(-s->kids[k].pid, SIGTERM);
    double t0 = now_seconds();
    while (s->n_kids && now_seconds() - t0 < 10) {
        for (int k = 0; k < s->n_kids; k++) {
            int status;
            if (waitpid(s->kids[k].pid, &status, WNOHANG) == s->kids[k].pid) {
                s->rows[s->kids[k].row].attempts--; /* interrupted, not failed */
                row_set_state(s, &s->rows[s->kids[k].row], "queued");
                s->kids[k--] = s->kids[--s->n_kids];
            }
        }
        usleep(100 * 1000);
    }
    for (int k = 0; k < s->n_kids; k++)
        kill(-s->kids[k].pid, SIGKILL);
}

static void sweep_loop(struct sweep *s, strbuf *err)
{
    int next = 0;
    while (!stop_signal) {
        while (s->n_kids < s->o->jobs && next < s->n_rows) {
            if (strcmp(s->rows[next].state, "queued")) {
                next++;
                continue;
            }
            if (start_child(s, next, err) < 0) {
                warning("%s: %s", s->rows[next].p.slug, err->buf);
                strbuf_reset(err);
                row_set_state(s, &s->rows[next], "failed");
            } else if (!s->live) {
                progress("start  %-44s on GPU %d", s->rows[next].p.slug,
                         s->o->gpus[s->kids[s->n_kids - 1].gpu]);
            }
            next++;
        }
        if (!s->n_kids)
            break;
        for (int k = 0; k < s->n_kids; k++) {
            int status;
            pid_t w = waitpid(s->kids[k].pid, &status, WNOHANG);
            bool late = now_seconds() - s->kids[k].started > s->o->problem_timeout_s;
            if (w == 0 && late) {
                kill(-s->kids[k].pid, SIGKILL);
                waitpid(s->kids[k].pid, &status, 0);
                w = s->kids[k].pid;
            }
            if (w == s->kids[k].pid) {
                child_ended(s, k, status, late);
                k--;
            }
        }
        draw(s, false);
        usleep(250 * 1000);
    }
}

int bench_run(const bench_opts *o, strbuf *err)
{
    struct sweep s;
    memset(&s, 0, sizeof s);
    s.o = o;
    s.dir = xstrdup(o->run_dir);
    s.started = now_seconds();
    s.started_epoch = epoch_now();
    s.live = !cg_quiet && isatty(2);
    bench_problem *v = NULL;
    int n = bench_select(o, &v, err), rc = EXIT_OK;
    if (n < 0)
        return EXIT_USAGE;
    if (n == 0) {
        free(v);
        strbuf_addf(err, "no problem selected (check --kernelbench, --level, --problems%s)",
                    o->shards > 1 ? " and --shard" : "");
        return EXIT_USAGE;
    }
    if (mkdir_p(s.dir, 0755) < 0) {
        strbuf_addf(err, "cannot create '%s': %s", s.dir, strerror(errno));
        bench_problems_free(v, n);
        free(s.dir);
        return EXIT_INTERNAL;
    }
    int lock = lock_dir(&s, err);
    if (lock < 0 || setup(&s, err) < 0 || db_open(&s, err) < 0) {
        bench_problems_free(v, n);
        if (s.db)
            sqlite3_close(s.db);
        free(s.dir);
        free(s.lanes);
        return lock < 0 ? EXIT_USAGE : EXIT_INTERNAL;
    }
    db_load_rows(&s, v, n);
    free(v); /* the rows own the paths now */
    requeue(&s);
    int queued, running, done, failed;
    counts(&s, &queued, &running, &done, &failed);
    progress("bench %s: %d problems (%d already done, %d failed for good), %d at a time on "
             "GPU%s", s.dir, n, done, failed, o->jobs, o->n_gpus > 1 ? "s" : "");
    struct sigaction sa = { .sa_handler = on_signal };
    struct sigaction old_int, old_term;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    sweep_loop(&s, err);
    if (stop_signal) {
        warning("interrupted (signal %d): stopping the running problems; run the same "
                "command again, or cutegen bench --resume %s, to continue", (int)stop_signal,
                s.dir);
        kill_children(&s);
        rc = 128 + stop_signal;
    }
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    draw(&s, true);
    print_summary(&s);
    for (int i = 0; i < s.n_rows; i++) {
        free(s.rows[i].p.path);
        free(s.rows[i].p.slug);
        free(s.rows[i].state);
        free(s.rows[i].stop);
    }
    free(s.rows);
    free(s.kids);
    sqlite3_close(s.db);
    free(s.dir);
    free(s.lanes);
    close(lock);
    return rc;
}
