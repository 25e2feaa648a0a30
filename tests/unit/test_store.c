/* Unit tests for store: a run written, closed and resumed with everything in it; the
 * errors store_open() gives (missing run, newer schema, not a run, run in use); the best
 * node; reply lookup for resume; adds from 8 threads at once; kill -9 of a writer at
 * random moments, then recovery, integrity and artifact checks; a planted key found by
 * store_contains. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "store.h"
#include "util.h"

/* ---------------------------------------------------------------- helpers */

static char *make_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    char *tmpl = xasprintf("%s/cutegen-store-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(tmpl))
        fail_msg("mkdtemp: %s", strerror(errno));
    return tmpl;
}

static void rm_rf(const char *path)
{
    DIR *d = opendir(path);
    if (!d) {
        unlink(path);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char *p = xasprintf("%s/%s", path, e->d_name);
        rm_rf(p);
        free(p);
    }
    closedir(d);
    rmdir(path);
}

static store *open_ok(const char *dir, bool create)
{
    strbuf err = STRBUF_INIT;
    strbuf_init(&err);
    store *s = NULL;
    if (store_open(dir, create, &s, &err) != 0)
        fail_msg("store_open '%s': %s", dir, strbuf_str(&err));
    strbuf_release(&err);
    return s;
}

/* store_open must fail, with a message holding want. */
static void open_fails(const char *dir, bool create, const char *want)
{
    strbuf err = STRBUF_INIT;
    strbuf_init(&err);
    store *s = NULL;
    assert_int_equal(store_open(dir, create, &s, &err), -1);
    assert_null(s);
    if (!strstr(strbuf_str(&err), want))
        fail_msg("error '%s' lacks '%s'", strbuf_str(&err), want);
    strbuf_release(&err);
}

static char *slurp(const char *path)
{
    strbuf sb = STRBUF_INIT;
    strbuf_init(&sb);
    if (read_file(path, &sb, 64 << 20) != 0) {
        strbuf_release(&sb);
        return NULL;
    }
    return strbuf_detach(&sb);
}

static void assert_file_sha(const char *path, const char *sha)
{
    strbuf sb = STRBUF_INIT;
    strbuf_init(&sb);
    if (read_file(path, &sb, 64 << 20) != 0)
        fail_msg("artifact '%s' missing: %s", path, strerror(errno));
    char got[65];
    sha256_hex(sb.buf ? sb.buf : "", sb.len, got);
    if (strcmp(got, sha) != 0)
        fail_msg("artifact '%s' does not match its sha256", path);
    strbuf_release(&sb);
}

/* Integrity, foreign keys, and every recorded artifact present with its sha256; no
 * temporary files or orphan node directories. Run with the store closed. */
static int64_t check_run(const char *dir)
{
    char *db_path = xasprintf("%s/run.db", dir);
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(st, 0), "ok");
    sqlite3_finalize(st);
    assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA foreign_key_check", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);

    int64_t files = 0;
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT path, sha256 FROM artifacts UNION ALL "
                                            "SELECT source_path, source_sha256 FROM nodes "
                                            "WHERE source_path IS NOT NULL",
                                        -1, &st, NULL),
                     SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) {
        char *p = xasprintf("%s/%s", dir, (const char *)sqlite3_column_text(st, 0));
        assert_file_sha(p, (const char *)sqlite3_column_text(st, 1));
        free(p);
        files++;
    }
    sqlite3_finalize(st);

    /* every file on disk is recorded */
    char *nodes_dir = xasprintf("%s/artifacts/nodes", dir);
    DIR *d = opendir(nodes_dir);
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char *nd = xasprintf("%s/%s", nodes_dir, e->d_name);
        DIR *n = opendir(nd);
        assert_non_null(n);
        struct dirent *f;
        while ((f = readdir(n)) != NULL) {
            if (f->d_name[0] == '.')
                continue;
            assert_null(strstr(f->d_name, ".tmp."));
            sqlite3_stmt *q = NULL;
            sqlite3_prepare_v2(db, "SELECT 1 FROM artifacts WHERE node_id = ? AND name = ?", -1, &q, NULL);
            sqlite3_bind_int64(q, 1, strtoll(e->d_name, NULL, 10));
            sqlite3_bind_text(q, 2, f->d_name, -1, SQLITE_STATIC);
            if (sqlite3_step(q) != SQLITE_ROW)
                fail_msg("file '%s/%s' has no row", nd, f->d_name);
            sqlite3_finalize(q);
        }
        closedir(n);
        free(nd);
    }
    closedir(d);
    free(nodes_dir);
    sqlite3_close(db);
    free(db_path);
    return files;
}

static const char *KERNEL = "#include <cute/tensor.hpp>\n__global__ void k() {}\n";

/* ---------------------------------------------------------------- tests */

static void test_create_and_resume(void **state)
{
    (void)state;
    char *dir = make_tmpdir();
    char *run = xasprintf("%s/runs/softmax", dir);   /* parents are made */
    store *s = open_ok(run, true);
    assert_non_null(strstr(store_dir(s), "/runs/softmax"));
    assert_int_equal(store_meta_set(s, "options", "{\"budget_usd\":2}"), 0);
    assert_int_equal(store_meta_set(s, "status", "running"), 0);
    assert_int_equal(store_meta_set(s, "status", "stopped"), 0);

    int64_t t = store_task(s, "23_Softmax", "/p/23_Softmax.py", "abc123", "{\"inputs\":[]}");
    assert_true(t > 0);
    assert_int_equal(store_task(s, "23_Softmax", NULL, NULL, NULL), t);   /* upsert */
    assert_int_equal(store_task_find(s, "23_Softmax"), t);
    assert_int_equal(store_task_find(s, "nope"), 0);
    int64_t t2 = store_task(s, "19_ReLU", "/p/19_ReLU.py", "def456", NULL);
    assert_true(t2 > t);
    assert_int_equal(store_task_set(s, t, "status", "running"), 0);
    assert_int_equal(store_task_set(s, t, "baseline", "{\"eager_ms\":3.1}"), 0);
    assert_int_equal(store_task_set(s, t, "scratch", "x"), 0);
    assert_int_equal(store_task_set(s, t, "scratch", NULL), 0);
    assert_int_equal(store_task_set(s, 999, "status", "x"), -1);   /* no such task */
    assert_true(strlen(store_error(s)) > 0);

    int64_t root = store_node_add(s, t, 0, 0, 0, "seed", KERNEL, 0);
    assert_true(root > 0);
    int64_t call = store_llm_call_add(s, t, root, "optimise", "h1", "{\"messages\":[]}", "reply one",
                                      "{\"input_tokens\":1000,\"output_tokens\":200}", 0.05, 3.5, NULL);
    assert_true(call > 0);
    int64_t failed = store_llm_call_add(s, t, root, "optimise", "h2", "{}", NULL,
                                        "{\"prompt_tokens\":10,\"completion_tokens\":0}", 0.001, 1.0,
                                        "timeout");
    assert_true(failed > call);
    int64_t child = store_node_add(s, t, root, 1, 0, "optimise", "// child\n", call);
    assert_true(child > root);
    int64_t nocode = store_node_add(s, t, root, 1, 0, "optimise", NULL, 0);   /* no usable code */
    assert_true(nocode > child);
    assert_int_equal(store_node_add(s, t2, root, 1, 0, "optimise", "x", 0), -1);   /* other task */
    assert_int_equal(store_node_add(s, 999, 0, 0, 0, "first", "x", 0), -1);

    assert_int_equal(store_node_judged(s, root, "ok", 2.0, 1.5, "correct", "{\"verdict\":\"ok\"}", "fp1"), 0);
    assert_int_equal(store_node_judged(s, child, "wrong", NAN, NAN, "max abs err 3e-2", NULL, NULL), 0);
    assert_int_equal(store_node_judged(s, root, "ok", 1.9, 1.6, "re-timed", "{\"verdict\":\"ok\",\"n\":2}", "fp1"), 0);
    assert_int_equal(store_node_attach(s, child, "build.log", "ptxas info\n", 11), 0);
    assert_int_equal(store_node_attach(s, child, "../escape", "x", 1), -1);
    assert_int_equal(store_node_attach(s, child, "kernel.cu", "x", 1), -1);
    assert_int_equal(store_node_attach(s, 999, "build.log", "x", 1), -1);
    assert_int_equal(store_profile_add(s, root, "dram 91% of peak", "{\"dram\":0.91}"), 0);
    assert_int_equal(store_profile_add(s, root, "dram 93% of peak", "{\"dram\":0.93}"), 0);
    assert_int_equal(store_event(s, t, "round_started", "{\"round\":1}"), 0);
    assert_int_equal(store_event(s, 0, "run_started", NULL), 0);
    store_close(s);

    /* resume */
    s = open_ok(run, false);
    char *v = store_meta_get(s, "status");
    assert_string_equal(v, "stopped");
    free(v);
    v = store_meta_get(s, "options");
    assert_string_equal(v, "{\"budget_usd\":2}");
    free(v);
    assert_null(store_meta_get(s, "nope"));
    v = store_meta_get(s, "cutegen_version");
    assert_non_null(v);
    free(v);

    assert_int_equal(store_task(s, "23_Softmax", NULL, NULL, NULL), t);
    v = store_task_get(s, t, "problem_sha256");
    assert_string_equal(v, "abc123");
    free(v);
    v = store_task_get(s, t, "baseline");
    assert_string_equal(v, "{\"eager_ms\":3.1}");
    free(v);
    assert_null(store_task_get(s, t, "scratch"));
    assert_null(store_task_get(s, t2, "status"));

    store_node *nodes = NULL;
    size_t n = 0;
    assert_int_equal(store_nodes(s, t, &nodes, &n), 0);
    assert_int_equal(n, 3);
    assert_int_equal(nodes[0].id, root);
    assert_int_equal(nodes[0].parent_id, 0);
    assert_string_equal(nodes[0].kind, "seed");
    assert_string_equal(nodes[0].state, "judged");
    assert_string_equal(nodes[0].verdict, "ok");
    assert_true(fabs(nodes[0].time_ms - 1.9) < 1e-12);
    assert_string_equal(nodes[0].message, "re-timed");
    assert_string_equal(nodes[0].fingerprint, "fp1");
    assert_true(nodes[0].judged_at >= nodes[0].created_at);
    char *src = slurp(nodes[0].source_path);
    assert_string_equal(src, KERNEL);
    free(src);
    assert_file_sha(nodes[0].source_path, nodes[0].source_sha256);

    assert_int_equal(nodes[1].id, child);
    assert_int_equal(nodes[1].parent_id, root);
    assert_int_equal(nodes[1].depth, 1);
    assert_int_equal(nodes[1].llm_call_id, call);
    assert_string_equal(nodes[1].verdict, "wrong");
    assert_true(isnan(nodes[1].time_ms) && isnan(nodes[1].speedup));
    assert_null(nodes[1].fingerprint);

    assert_int_equal(nodes[2].id, nocode);
    assert_null(nodes[2].source_path);
    assert_string_equal(nodes[2].state, "pending");
    assert_null(nodes[2].verdict);
    assert_true(isnan(nodes[2].judged_at));
    store_nodes_free(nodes, n);

    store_node one;
    assert_int_equal(store_node_get(s, child, &one), 0);
    assert_string_equal(one.message, "max abs err 3e-2");
    store_node_release(&one);
    assert_int_equal(store_node_get(s, 999, &one), -1);

    /* attachments and both eval reports */
    char *p = store_node_artifact(s, child, "build.log");
    assert_non_null(p);
    v = slurp(p);
    assert_string_equal(v, "ptxas info\n");
    free(v);
    free(p);
    p = store_node_artifact(s, root, "eval.json");
    v = slurp(p);
    assert_string_equal(v, "{\"verdict\":\"ok\"}");
    free(v);
    free(p);
    p = store_node_artifact(s, root, "eval.2.json");
    assert_non_null(p);
    free(p);
    assert_null(store_node_artifact(s, child, "eval.json"));

    v = store_profile_get(s, root);
    assert_string_equal(v, "dram 93% of peak");
    free(v);
    assert_null(store_profile_get(s, child));

    double cost = 0;
    int64_t calls = 0, tin = 0, tout = 0;
    assert_int_equal(store_totals(s, t, &cost, &calls, &tin, &tout), 0);
    assert_true(fabs(cost - 0.051) < 1e-12);
    assert_int_equal(calls, 2);
    assert_int_equal(tin, 1010);
    assert_int_equal(tout, 200);
    assert_int_equal(store_totals(s, t2, &cost, &calls, NULL, NULL), 0);
    assert_int_equal(calls, 0);
    assert_int_equal(store_totals(s, 0, NULL, &calls, NULL, NULL), 0);
    assert_int_equal(calls, 2);
    store_close(s);

    assert_true(check_run(run) >= 5);
    rm_rf(dir);
    free(run);
    free(dir);
}

static void test_open_errors(void **state)
{
    (void)state;
    char *dir = make_tmpdir();
    char *missing = xasprintf("%s/missing", dir);
    open_fails(missing, false, "no run at");
    assert_false(dir_exists(missing));   /* resume creates nothing */
    open_fails(dir, false, "'run.db' not found");

    /* a run in use by this process cannot be opened twice */
    char *run = xasprintf("%s/run", dir);
    store *s = open_ok(run, true);
    open_fails(run, false, "in use by another cutegen process");
    store_close(s);

    /* newer schema */
    char *db_path = xasprintf("%s/run.db", run);
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(db_path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "PRAGMA user_version = 99", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    open_fails(run, false, "schema version 99, newer than this cutegen");

    /* not a database, another database */
    char *junk = xasprintf("%s/junk", dir);
    assert_int_equal(mkdir(junk, 0755), 0);
    char *junk_db = xasprintf("%s/run.db", junk);
    const char text[] = "this is not a database, but it is long enough to have a header..........."
                        "................................................................";
    assert_int_equal(write_file_atomic(junk_db, text, sizeof(text)), 0);
    open_fails(junk, false, "not a cutegen run");
    char *other = xasprintf("%s/other", dir);
    assert_int_equal(mkdir(other, 0755), 0);
    char *other_db = xasprintf("%s/run.db", other);
    assert_int_equal(sqlite3_open(other_db, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "CREATE TABLE t(x)", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    open_fails(other, true, "not a cutegen run");

    rm_rf(dir);
    free(other_db);
    free(other);
    free(junk_db);
    free(junk);
    free(db_path);
    free(run);
    free(missing);
    free(dir);
}

static void test_best_node(void **state)
{
    (void)state;
    char *dir = make_tmpdir();
    store *s = open_ok(dir, true);
    int64_t t = store_task(s, "a", NULL, NULL, NULL);
    int64_t t2 = store_task(s, "b", NULL, NULL, NULL);
    assert_int_equal(store_best_node(s, t), 0);
    int64_t a = store_node_add(s, t, 0, 0, 0, "first", "a", 0);
    int64_t b = store_node_add(s, t, a, 1, 0, "optimise", "b", 0);
    int64_t c = store_node_add(s, t, a, 1, 0, "optimise", "c", 0);
    int64_t d = store_node_add(s, t, a, 1, 0, "optimise", "d", 0);
    int64_t e = store_node_add(s, t2, 0, 0, 0, "first", "e", 0);
    assert_int_equal(store_best_node(s, t), 0);   /* nothing judged */
    assert_int_equal(store_node_judged(s, a, "ok", 3.0, 1.0, NULL, NULL, NULL), 0);
    assert_int_equal(store_node_judged(s, b, "wrong", 0.5, NAN, NULL, NULL, NULL), 0);   /* fast, wrong */
    assert_int_equal(store_node_judged(s, c, "ok", 2.0, 1.5, NULL, NULL, NULL), 0);
    assert_int_equal(store_node_judged(s, d, "ok", NAN, NAN, NULL, NULL, NULL), 0);      /* untimed */
    assert_int_equal(store_node_judged(s, e, "ok", 0.1, 30.0, NULL, NULL, NULL), 0);     /* other task */
    assert_int_equal(store_best_node(s, t), c);
    assert_int_equal(store_best_node(s, t2), e);
    int64_t f = store_node_add(s, t, c, 2, 0, "tune", "f", 0);
    assert_int_equal(store_node_judged(s, f, "ok", 2.0, 1.5, NULL, NULL, NULL), 0);
    assert_int_equal(store_best_node(s, t), c);   /* a tie keeps the older */
    store_close(s);
    rm_rf(dir);
    free(dir);
}

static void test_reply_lookup(void **state)
{
    (void)state;
    char *dir = make_tmpdir();
    store *s = open_ok(dir, true);
    int64_t t = store_task(s, "a", NULL, NULL, NULL);
    int64_t id = -1;
    assert_null(store_llm_reply_lookup(s, t, "h", &id));
    assert_int_equal(id, 0);
    store_llm_call_add(s, t, 0, "first", "h", "{}", NULL, NULL, 0.01, 1, "http 500");   /* failed */
    int64_t c1 = store_llm_call_add(s, t, 0, "first", "h", "{}", "one", NULL, 0.01, 1, NULL);
    int64_t c2 = store_llm_call_add(s, t, 0, "first", "h", "{}", "two", NULL, 0.01, 1, NULL);
    store_close(s);

    s = open_ok(dir, false);   /* killed after the replies arrived: resume finds them */
    char *r = store_llm_reply_lookup(s, t, "h", &id);
    assert_string_equal(r, "one");
    assert_int_equal(id, c1);
    free(r);
    assert_true(store_node_add(s, t, 0, 0, 0, "first", "k1", c1) > 0);
    r = store_llm_reply_lookup(s, t, "h", &id);   /* the used one is skipped */
    assert_string_equal(r, "two");
    assert_int_equal(id, c2);
    free(r);
    assert_true(store_node_add(s, t, 0, 0, 0, "first", "k2", c2) > 0);
    assert_null(store_llm_reply_lookup(s, t, "h", &id));
    assert_null(store_llm_reply_lookup(s, t + 1, "h", NULL));
    store_close(s);
    rm_rf(dir);
    free(dir);
}

/* ---------------------------------------------------------------- threads */

#define NTHREADS 8
#define PER_THREAD 40

struct worker_arg {
    store *s;
    int64_t task;
    int index;
    int failures;
};

static void *worker(void *p)
{
    struct worker_arg *a = p;
    int64_t parent = 0;
    for (int i = 0; i < PER_THREAD; i++) {
        char *src = xasprintf("// thread %d node %d\n", a->index, i);
        char *hash = xasprintf("t%d-%d", a->index, i);
        int64_t call = store_llm_call_add(a->s, a->task, parent, "optimise", hash, "{}", src,
                                          "{\"input_tokens\":10,\"output_tokens\":1}", 0.001, 0.1, NULL);
        int64_t id = store_node_add(a->s, a->task, parent, i, 0, "optimise", src, call);
        if (call <= 0 || id <= 0 ||
            store_node_judged(a->s, id, "ok", 1.0 + i, 1.0, "m", "{}", NULL) != 0 ||
            store_node_attach(a->s, id, "worker.log", src, strlen(src)) != 0 ||
            store_event(a->s, a->task, "node", "{}") != 0)
            a->failures++;
        if (id > 0)
            parent = id;
        free(src);
        free(hash);
    }
    return NULL;
}

static void test_threads(void **state)
{
    (void)state;
    char *dir = make_tmpdir();
    store *s = open_ok(dir, true);
    int64_t t = store_task(s, "a", NULL, NULL, NULL);
    pthread_t th[NTHREADS];
    struct worker_arg args[NTHREADS];
    for (int i = 0; i < NTHREADS; i++) {
        args[i] = (struct worker_arg){ s, t, i, 0 };
        assert_int_equal(pthread_create(&th[i], NULL, worker, &args[i]), 0);
    }
    for (int i = 0; i < NTHREADS; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(args[i].failures, 0);
    }
    store_node *nodes = NULL;
    size_t n = 0;
    assert_int_equal(store_nodes(s, t, &nodes, &n), 0);
    assert_int_equal(n, NTHREADS * PER_THREAD);
    for (size_t i = 0; i < n; i++) {
        if (i > 0)
            assert_true(nodes[i].id > nodes[i - 1].id);
        assert_file_sha(nodes[i].source_path, nodes[i].source_sha256);
        if (nodes[i].parent_id) {   /* each thread's chain stays its own */
            store_node parent;
            assert_int_equal(store_node_get(s, nodes[i].parent_id, &parent), 0);
            assert_int_equal(parent.depth + 1, nodes[i].depth);
            int a = -1, b = -2;
            char *ps = slurp(parent.source_path), *cs = slurp(nodes[i].source_path);
            sscanf(ps, "// thread %d", &a);
            sscanf(cs, "// thread %d", &b);
            assert_int_equal(a, b);
            free(ps);
            free(cs);
            store_node_release(&parent);
        }
    }
    store_nodes_free(nodes, n);
    int64_t calls = 0, tin = 0;
    assert_int_equal(store_totals(s, 0, NULL, &calls, &tin, NULL), 0);
    assert_int_equal(calls, NTHREADS * PER_THREAD);
    assert_int_equal(tin, 10 * NTHREADS * PER_THREAD);
    store_close(s);
    assert_int_equal(check_run(dir), 3 * NTHREADS * PER_THREAD + NTHREADS * PER_THREAD);
    rm_rf(dir);
    free(dir);
}

/* ---------------------------------------------------------------- kill -9 */

/* Temporary files a killed writer left under artifacts/nodes (store_open removes them). */
static int count_leftovers(const char *dir)
{
    int count = 0;
    char *nodes_dir = xasprintf("%s/artifacts/nodes", dir);
    DIR *d = opendir(nodes_dir);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char *nd = xasprintf("%s/%s", nodes_dir, e->d_name);
        DIR *n = opendir(nd);
        struct dirent *f;
        while (n && (f = readdir(n)) != NULL)
            count += strstr(f->d_name, ".tmp.") != NULL;
        if (n)
            closedir(n);
        free(nd);
    }
    if (d)
        closedir(d);
    free(nodes_dir);
    return count;
}

/* The child: resumes the run and adds nodes, judgments and attachments until killed,
 * telling the parent each node id once its last call has returned (is committed). */
static void crash_child(const char *dir, int fd)
{
    strbuf err = STRBUF_INIT;
    strbuf_init(&err);
    store *s = NULL;
    if (store_open(dir, true, &s, &err) != 0)
        _exit(3);
    int64_t open_marker = 0;   /* the run exists: the parent's random clock starts now */
    if (write(fd, &open_marker, sizeof(open_marker)) != (ssize_t)sizeof(open_marker))
        _exit(6);
    int64_t t = store_task(s, "crash", NULL, NULL, NULL);
    strbuf big = STRBUF_INIT;
    strbuf_init(&big);
    for (int i = 0; i < 2000; i++)
        strbuf_addf(&big, "ncu line %d: dram__throughput.avg.pct_of_peak_sustained_elapsed 91.2\n", i);
    for (int i = 0;; i++) {
        char *src = xasprintf("// kernel %d\n%s", i, i % 3 ? "" : big.buf);
        int64_t call = store_llm_call_add(s, t, 0, "first", "h", "{}", src, "{\"input_tokens\":5}", 0.01,
                                          0.1, NULL);
        int64_t id = store_node_add(s, t, 0, 0, 0, "first", src, call);
        if (call <= 0 || id <= 0)
            _exit(4);
        if (store_node_attach(s, id, "ncu.txt", big.buf, big.len) ||
            store_node_judged(s, id, "ok", 1.0, 1.0, "ok", "{\"verdict\":\"ok\"}", "fp"))
            _exit(5);
        free(src);
        if (write(fd, &id, sizeof(id)) != (ssize_t)sizeof(id))
            _exit(6);
    }
}

static void test_kill9(void **state)
{
    (void)state;
    char *dir = make_tmpdir();
    srand((unsigned)time(NULL) ^ (unsigned)getpid());
    int64_t acknowledged[4096];
    size_t nack = 0;
    int leftovers = 0;
    for (int round = 0; round < 6; round++) {
        int fds[2];
        assert_int_equal(pipe(fds), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            close(fds[0]);
            crash_child(dir, fds[1]);
        }
        close(fds[1]);
        /* Wait for the child's store to exist: a kill before its schema commits leaves a run
         * that never started, which resume refuses by design (and a loaded CI host can take
         * longer than the shortest sleep to get there). */
        int64_t marker = -1;
        assert_int_equal(read(fds[0], &marker, sizeof(marker)), (ssize_t)sizeof(marker));
        assert_int_equal(marker, 0);
        struct timespec ts = { 0, (long)(20 + rand() % 300) * 1000000L };
        nanosleep(&ts, NULL);
        kill(pid, SIGKILL);
        int status = 0;
        waitpid(pid, &status, 0);
        assert_true(WIFSIGNALED(status));   /* killed, not failed */
        int64_t id;
        while (read(fds[0], &id, sizeof(id)) == (ssize_t)sizeof(id))
            if (nack < sizeof(acknowledged) / sizeof(acknowledged[0]))
                acknowledged[nack++] = id;
        close(fds[0]);
        leftovers += count_leftovers(dir);

        /* resume: recovery runs in store_open; everything acknowledged is there */
        store *s = open_ok(dir, false);
        int64_t t = store_task_find(s, "crash");
        for (size_t i = 0; i < nack; i++) {
            store_node n;
            assert_int_equal(store_node_get(s, acknowledged[i], &n), 0);
            assert_string_equal(n.state, "judged");
            assert_file_sha(n.source_path, n.source_sha256);
            store_node_release(&n);
            char *p = store_node_artifact(s, acknowledged[i], "ncu.txt");
            assert_non_null(p);
            free(p);
        }
        store_node *nodes = NULL;
        size_t n = 0;
        if (t > 0) {
            assert_int_equal(store_nodes(s, t, &nodes, &n), 0);
            assert_true(n >= nack);
            store_nodes_free(nodes, n);
        }
        store_close(s);
        check_run(dir);
    }
    assert_true(nack > 0);
    print_message("kill -9: 6 rounds, %zu nodes acknowledged, %d temporary files swept\n", nack,
                  leftovers);
    rm_rf(dir);
    free(dir);
}

/* ---------------------------------------------------------------- secrets */

static void test_planted_key(void **state)
{
    (void)state;
    const char *key = "sk-ant-PLANTED-7f3a9c2e11d04b5e";
    char *dir = make_tmpdir();
    store *s = open_ok(dir, true);
    int64_t t = store_task(s, "a", "/p/a.py", "00", "{}");
    int64_t n = store_node_add(s, t, 0, 0, 0, "first", KERNEL, 0);
    store_node_attach(s, n, "build.log", "ok\n", 3);
    store_llm_call_add(s, t, n, "first", "h", "{\"headers\":{\"x-api-key\":\"[redacted]\"}}", "r", NULL,
                       0, 0, NULL);
    assert_false(store_contains(s, key));
    assert_false(store_contains(s, ""));
    assert_true(store_contains(s, "[redacted]"));   /* a text column */
    assert_true(store_contains(s, "__global__"));   /* an artifact */

    /* a caller that failed to redact: the store writes what it is given, and says so */
    char *req = xasprintf("{\"headers\":{\"x-api-key\":\"%s\"}}", key);
    assert_true(store_llm_call_add(s, t, n, "first", "h2", req, "r", NULL, 0, 0, NULL) > 0);
    assert_true(store_contains(s, key));
    store_close(s);
    s = open_ok(dir, false);   /* after the checkpoint into run.db */
    assert_true(store_contains(s, key));
    store_close(s);

    /* in a large attachment, across read boundaries */
    char *dir2 = make_tmpdir();
    s = open_ok(dir2, true);
    t = store_task(s, "a", NULL, NULL, NULL);
    n = store_node_add(s, t, 0, 0, 0, "first", KERNEL, 0);
    size_t len = (1 << 16) * 3;
    char *blob = xmalloc(len);
    memset(blob, 'x', len);
    memcpy(blob + (1 << 16) - 7, key, strlen(key));
    assert_int_equal(store_node_attach(s, n, "ncu-report.bin", blob, len), 0);
    assert_true(store_contains(s, key));
    store_close(s);

    free(blob);
    free(req);
    rm_rf(dir);
    rm_rf(dir2);
    free(dir);
    free(dir2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_and_resume),
        cmocka_unit_test(test_open_errors),
        cmocka_unit_test(test_best_node),
        cmocka_unit_test(test_reply_lookup),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_kill9),
        cmocka_unit_test(test_planted_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
