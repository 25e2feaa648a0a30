/*
 * store: the run directory (run.db + artifacts/), see store.h and docs/store.md.
 *
 * DESIGN. One SQLite connection guarded by one mutex; every public function takes the
 * mutex for its whole length and is one transaction (a single statement in autocommit,
 * or BEGIN IMMEDIATE ... COMMIT). Files are written under the same mutex, inside the
 * transaction, before the row that names them: write_file_atomic() (temporary file,
 * fsync, rename), then an fsync of the directory so the rename itself is durable. If the
 * process dies between the file and the COMMIT, the file has no row: store_open()
 * sweeps such orphans and any temporary file, under the run's process lock, before the
 * run is used again. Node ids are max(id)+1, so an id whose row never committed is handed
 * out again and its directory is rewritten.
 */
#include "store.h"

/* flock, open, fsync, directory walking */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
/* PRId64, NAN, isnan; the mutex; time stamps; variadic binders */
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
/* the database and the usage JSON */
#include <jansson.h>
#include <sqlite3.h>

#include "util.h"

/* 'CTGN': marks run.db as a cutegen run (PRAGMA application_id). */
#define STORE_APPLICATION_ID 0x4354474e

struct store {
    char *dir;        /* absolute run directory */
    char *db_path;    /* dir/run.db */
    char *nodes_dir;  /* dir/artifacts/nodes */
    sqlite3 *db;
    pthread_mutex_t mu;
    int lock_fd;
};

/* ================================================================ errors */

static _Thread_local char last_error[1024];

__attribute__((format(printf, 1, 2))) static void set_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof(last_error), fmt, ap);
    va_end(ap);
}

/* "<what>: <sqlite's message>", for the last failed call on the connection. */
static void db_error(store *s, const char *what)
{
    set_error("%s: %s", what, sqlite3_errmsg(s->db));
}

const char *store_error(const store *s)
{
    (void)s;
    return last_error;
}

/* ================================================================ small helpers */

static double unix_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void lock(store *s)
{
    pthread_mutex_lock(&s->mu);
    last_error[0] = '\0';
}

static void unlock(store *s)
{
    pthread_mutex_unlock(&s->mu);
}

/* Makes a rename or a new entry in dir durable. */
static int fsync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = fsync(fd);
    int saved = errno;
    close(fd);
    errno = saved;
    return rc;
}

/* Attachment names are plain file names we choose or the caller does: no paths. */
static bool valid_artifact_name(const char *name)
{
    if (!name || !*name || name[0] == '.' || strlen(name) > 128)
        return false;
    for (const char *p = name; *p; p++) {
        char c = *p;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '_' || c == '-';
        if (!ok)
            return false;
    }
    return strstr(name, ".tmp.") == NULL;   /* reserved for write_file_atomic's temporaries */
}

/* ================================================================ statements */

/*
 * Binding by a format string, one letter per parameter:
 *   s  const char *   (NULL binds NULL)
 *   i  int64_t
 *   z  int64_t        (0 binds NULL: "no task", "no parent", "no call")
 *   f  double         (NAN binds NULL)
 * Arguments must have exactly these types (cast literals).
 */
static sqlite3_stmt *vprep(store *s, const char *sql, const char *fmt, va_list ap)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK) {
        db_error(s, "unable to prepare a statement");
        return NULL;
    }
    int idx = 1;
    for (const char *f = fmt; f && *f; f++, idx++) {
        int rc;
        switch (*f) {
        case 's': {
            const char *v = va_arg(ap, const char *);
            rc = v ? sqlite3_bind_text(st, idx, v, -1, SQLITE_TRANSIENT) : sqlite3_bind_null(st, idx);
            break;
        }
        case 'i':
            rc = sqlite3_bind_int64(st, idx, va_arg(ap, int64_t));
            break;
        case 'z': {
            int64_t v = va_arg(ap, int64_t);
            rc = v ? sqlite3_bind_int64(st, idx, v) : sqlite3_bind_null(st, idx);
            break;
        }
        case 'f': {
            double v = va_arg(ap, double);
            rc = isnan(v) ? sqlite3_bind_null(st, idx) : sqlite3_bind_double(st, idx, v);
            break;
        }
        default:
            BUG("store: bad bind format '%c'", *f);
        }
        if (rc != SQLITE_OK) {
            db_error(s, "unable to bind a parameter");
            sqlite3_finalize(st);
            return NULL;
        }
    }
    return st;
}

static sqlite3_stmt *prep(store *s, const char *sql, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sqlite3_stmt *st = vprep(s, sql, fmt, ap);
    va_end(ap);
    return st;
}

/* Runs a statement that returns no rows. 0, or -1 with "<what>: <why>". */
static int exec_sql(store *s, const char *what, const char *sql, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sqlite3_stmt *st = vprep(s, sql, fmt, ap);
    va_end(ap);
    if (!st)
        return -1;
    int rc = sqlite3_step(st);
    while (rc == SQLITE_ROW)
        rc = sqlite3_step(st);
    if (rc != SQLITE_DONE)
        db_error(s, what);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

/* The first column of the first row as an integer: 1 found, 0 no row, -1 error. */
static int query_i64(store *s, int64_t *out, const char *sql, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sqlite3_stmt *st = vprep(s, sql, fmt, ap);
    va_end(ap);
    if (!st)
        return -1;
    int rc = sqlite3_step(st);
    int ret;
    if (rc == SQLITE_ROW) {
        *out = sqlite3_column_int64(st, 0);
        ret = 1;
    } else if (rc == SQLITE_DONE) {
        ret = 0;
    } else {
        db_error(s, "unable to read the run database");
        ret = -1;
    }
    sqlite3_finalize(st);
    return ret;
}

/* The first column of the first row as malloc'd text (NULL for SQL NULL): 1 found, 0 no
 * row, -1 error. */
static int query_text(store *s, char **out, const char *sql, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sqlite3_stmt *st = vprep(s, sql, fmt, ap);
    va_end(ap);
    *out = NULL;
    if (!st)
        return -1;
    int rc = sqlite3_step(st);
    int ret;
    if (rc == SQLITE_ROW) {
        const unsigned char *t = sqlite3_column_text(st, 0);
        *out = t ? xstrdup((const char *)t) : NULL;
        ret = 1;
    } else if (rc == SQLITE_DONE) {
        ret = 0;
    } else {
        db_error(s, "unable to read the run database");
        ret = -1;
    }
    sqlite3_finalize(st);
    return ret;
}

static int tx_begin(store *s)
{
    if (sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
        db_error(s, "unable to begin a transaction");
        return -1;
    }
    return 0;
}

/* Commits when rc == 0, else rolls back; returns 0 only when the commit succeeded. The
 * message of the step that failed is kept. */
static int tx_end(store *s, int rc)
{
    if (rc == 0) {
        if (sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK)
            return 0;
        db_error(s, "unable to commit");
    }
    if (!sqlite3_get_autocommit(s->db))
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    return -1;
}

static char *col_text(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    return t ? xstrdup((const char *)t) : NULL;
}

static double col_double(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

/* ================================================================ schema */

static const char schema_sql[] =
    "CREATE TABLE meta (\n"
    "  key TEXT PRIMARY KEY,\n"
    "  value TEXT\n"
    ");\n"
    "CREATE TABLE tasks (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  name TEXT NOT NULL UNIQUE,\n"
    "  problem_path TEXT,\n"
    "  problem_sha256 TEXT,\n"
    "  spec_json TEXT,\n"
    "  created_at REAL NOT NULL\n"
    ");\n"
    "CREATE TABLE task_kv (\n"
    "  task_id INTEGER NOT NULL REFERENCES tasks(id),\n"
    "  key TEXT NOT NULL,\n"
    "  value TEXT NOT NULL,\n"
    "  updated_at REAL NOT NULL,\n"
    "  PRIMARY KEY (task_id, key)\n"
    ");\n"
    "CREATE TABLE llm_calls (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  task_id INTEGER REFERENCES tasks(id),\n"
    "  parent_node INTEGER REFERENCES nodes(id),\n"
    "  prompt_kind TEXT,\n"
    "  request_hash TEXT,\n"
    "  request_json TEXT,\n"
    "  reply_text TEXT,\n"
    "  usage_json TEXT,\n"
    "  tokens_in INTEGER NOT NULL DEFAULT 0,\n"
    "  tokens_out INTEGER NOT NULL DEFAULT 0,\n"
    "  cost_usd REAL NOT NULL DEFAULT 0,\n"
    "  latency_s REAL,\n"
    "  failure TEXT,\n"
    "  created_at REAL NOT NULL\n"
    ");\n"
    "CREATE INDEX llm_calls_by_request ON llm_calls(task_id, request_hash);\n"
    "CREATE TABLE nodes (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  task_id INTEGER NOT NULL REFERENCES tasks(id),\n"
    "  parent_id INTEGER REFERENCES nodes(id),\n"
    "  depth INTEGER NOT NULL,\n"
    "  attempt INTEGER NOT NULL,\n"
    "  kind TEXT NOT NULL,\n"
    "  source_path TEXT,\n"
    "  source_sha256 TEXT,\n"
    "  state TEXT NOT NULL CHECK (state IN ('pending', 'judged')),\n"
    "  verdict TEXT,\n"
    "  time_ms REAL,\n"
    "  speedup REAL,\n"
    "  message TEXT,\n"
    "  fingerprint TEXT,\n"
    "  llm_call_id INTEGER REFERENCES llm_calls(id),\n"
    "  created_at REAL NOT NULL,\n"
    "  judged_at REAL\n"
    ");\n"
    "CREATE INDEX nodes_by_task ON nodes(task_id, id);\n"
    "CREATE INDEX nodes_by_call ON nodes(llm_call_id);\n"
    "CREATE TABLE evaluations (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  node_id INTEGER NOT NULL REFERENCES nodes(id),\n"
    "  verdict TEXT NOT NULL,\n"
    "  time_ms REAL,\n"
    "  speedup REAL,\n"
    "  message TEXT,\n"
    "  fingerprint TEXT,\n"
    "  report_path TEXT,\n"
    "  created_at REAL NOT NULL\n"
    ");\n"
    "CREATE INDEX evaluations_by_node ON evaluations(node_id);\n"
    "CREATE TABLE artifacts (\n"
    "  node_id INTEGER NOT NULL REFERENCES nodes(id),\n"
    "  name TEXT NOT NULL,\n"
    "  path TEXT NOT NULL,\n"
    "  sha256 TEXT NOT NULL,\n"
    "  bytes INTEGER NOT NULL,\n"
    "  created_at REAL NOT NULL,\n"
    "  PRIMARY KEY (node_id, name)\n"
    ");\n"
    "CREATE TABLE profiles (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  node_id INTEGER NOT NULL REFERENCES nodes(id),\n"
    "  digest_text TEXT,\n"
    "  digest_json TEXT,\n"
    "  created_at REAL NOT NULL\n"
    ");\n"
    "CREATE INDEX profiles_by_node ON profiles(node_id);\n"
    "CREATE TABLE events (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  task_id INTEGER REFERENCES tasks(id),\n"
    "  kind TEXT NOT NULL,\n"
    "  json TEXT,\n"
    "  created_at REAL NOT NULL\n"
    ");\n";

static int pragma_int(store *s, const char *pragma, int *out, strbuf *err)
{
    char *sql = xasprintf("PRAGMA %s", pragma);
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
    free(sql);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        strbuf_addf(err, "unable to read '%s': %s", s->db_path, sqlite3_errmsg(s->db));
        if (rc == SQLITE_NOTADB)
            strbuf_adds(err, " (not a cutegen run database)");
        sqlite3_finalize(st);
        return -1;
    }
    *out = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return 0;
}

static int create_schema(store *s, strbuf *err)
{
    char *sql = xasprintf("BEGIN IMMEDIATE;\n%s"
                          "INSERT INTO meta VALUES ('cutegen_version', '%s');\n"
                          "INSERT INTO meta VALUES ('created_at', '%.3f');\n"
                          "PRAGMA application_id = %d;\n"
                          "PRAGMA user_version = %d;\n"
                          "COMMIT;",
                          schema_sql, CUTEGEN_VERSION, unix_now(), STORE_APPLICATION_ID,
                          STORE_SCHEMA_VERSION);
    char *msg = NULL;
    int rc = sqlite3_exec(s->db, sql, NULL, NULL, &msg);
    free(sql);
    if (rc != SQLITE_OK) {
        strbuf_addf(err, "unable to create the run database '%s': %s", s->db_path,
                    msg ? msg : sqlite3_errmsg(s->db));
        sqlite3_free(msg);
        if (!sqlite3_get_autocommit(s->db))
            sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
        return -1;
    }
    return 0;
}

/* Checks what the file holds and creates the schema in an empty one (create only). */
static int check_schema(store *s, bool create, strbuf *err)
{
    int app = 0, version = 0, ntables = 0;
    if (pragma_int(s, "application_id", &app, err) || pragma_int(s, "user_version", &version, err))
        return -1;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(s->db, "SELECT count(*) FROM sqlite_master", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        ntables = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);

    if ((app != 0 && app != STORE_APPLICATION_ID) || (app == 0 && ntables > 0)) {
        strbuf_addf(err, "'%s' is a SQLite database but not a cutegen run", s->db_path);
        return -1;
    }
    if (version > STORE_SCHEMA_VERSION) {
        strbuf_addf(err,
                    "run database '%s' has schema version %d, newer than this cutegen knows (%d): "
                    "open it with a newer cutegen",
                    s->db_path, version, STORE_SCHEMA_VERSION);
        return -1;
    }
    if (version == 0) {
        if (!create) {
            strbuf_addf(err, "run database '%s' is empty (the run never started): start it again "
                             "without --resume", s->db_path);
            return -1;
        }
        return create_schema(s, err);
    }
    /* Versions older than STORE_SCHEMA_VERSION are migrated here, one step at a time. */
    return 0;
}

/* ================================================================ recovery */

static void remove_tree(const char *path)
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
        remove_tree(p);
        free(p);
    }
    closedir(d);
    rmdir(path);
}

static bool parse_id(const char *name, int64_t *id)
{
    if (!*name || strlen(name) > 18)
        return false;
    int64_t v = 0;
    for (const char *p = name; *p; p++) {
        if (*p < '0' || *p > '9')
            return false;
        v = v * 10 + (*p - '0');
    }
    *id = v;
    return v > 0;
}

/* Removes what a killed process left under artifacts/nodes: temporary files, files whose
 * row never committed, and directories of nodes that do not exist. We hold the run's
 * process lock, so no writer is running. */
static int recover_artifacts(store *s, strbuf *err)
{
    DIR *d = opendir(s->nodes_dir);
    if (!d) {
        strbuf_addf(err, "unable to open '%s': %s", s->nodes_dir, strerror(errno));
        return -1;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char *ndir = xasprintf("%s/%s", s->nodes_dir, e->d_name);
        int64_t id = 0, found = 0;
        if (!parse_id(e->d_name, &id) ||
            query_i64(s, &found, "SELECT 1 FROM nodes WHERE id = ?", "i", id) == 0) {
            remove_tree(ndir);
            free(ndir);
            continue;
        }
        DIR *nd = opendir(ndir);
        struct dirent *f;
        while (nd && (f = readdir(nd)) != NULL) {
            if (!strcmp(f->d_name, ".") || !strcmp(f->d_name, ".."))
                continue;
            int64_t known = 0;
            if (strstr(f->d_name, ".tmp.") ||
                query_i64(s, &known, "SELECT 1 FROM artifacts WHERE node_id = ? AND name = ?", "is",
                          id, f->d_name) == 0) {
                char *p = xasprintf("%s/%s", ndir, f->d_name);
                remove_tree(p);
                free(p);
            }
        }
        if (nd)
            closedir(nd);
        free(ndir);
    }
    closedir(d);
    return 0;
}

/* ================================================================ open, close */

/* Takes run_dir/lock for this process, or says who holds it. */
static int take_lock(store *s, strbuf *err)
{
    char *path = xasprintf("%s/lock", s->dir);
    s->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (s->lock_fd < 0) {
        strbuf_addf(err, "unable to open '%s': %s", path, strerror(errno));
        free(path);
        return -1;
    }
    if (flock(s->lock_fd, LOCK_EX | LOCK_NB) < 0) {
        int saved = errno;
        if (saved == EWOULDBLOCK) {
            strbuf sb = STRBUF_INIT;
            strbuf_init(&sb);
            read_file(path, &sb, 64);
            strbuf_trim_end(&sb);
            strbuf_addf(err, "run '%s' is in use by another cutegen process%s%s%s", s->dir,
                        sb.len ? " (pid " : "", strbuf_str(&sb), sb.len ? ")" : "");
            strbuf_release(&sb);
        } else {
            strbuf_addf(err, "unable to lock '%s': %s", path, strerror(saved));
        }
        free(path);
        return -1;
    }
    free(path);
    char pid[32];
    int n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
    if (ftruncate(s->lock_fd, 0) == 0 && pwrite(s->lock_fd, pid, (size_t)n, 0) < 0) {
        /* the pid is only a hint for the message above */
    }
    return 0;
}

int store_open(const char *run_dir, bool create, store **out, strbuf *err)
{
    *out = NULL;
    if (!run_dir || !*run_dir) {
        strbuf_adds(err, "no run directory given");
        return -1;
    }
    if (create && mkdir_p(run_dir, 0755) < 0) {
        strbuf_addf(err, "unable to create run directory '%s': %s", run_dir, strerror(errno));
        return -1;
    }
    char *abs = realpath(run_dir, NULL);
    if (!abs || !dir_exists(abs)) {
        strbuf_addf(err, "no run at '%s': %s", run_dir, abs ? "not a directory" : strerror(errno));
        free(abs);
        return -1;
    }

    store *s = xcalloc(1, sizeof(*s));
    s->dir = abs;
    s->db_path = xasprintf("%s/run.db", abs);
    s->nodes_dir = xasprintf("%s/artifacts/nodes", abs);
    s->lock_fd = -1;
    pthread_mutex_init(&s->mu, NULL);

    if (!create && !file_exists(s->db_path)) {
        strbuf_addf(err, "no run at '%s': 'run.db' not found (start a new run without --resume)",
                    run_dir);
        goto fail;
    }
    if (take_lock(s, err))
        goto fail;

    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX | (create ? SQLITE_OPEN_CREATE : 0);
    if (sqlite3_open_v2(s->db_path, &s->db, flags, NULL) != SQLITE_OK) {
        strbuf_addf(err, "unable to open '%s': %s", s->db_path,
                    s->db ? sqlite3_errmsg(s->db) : "out of memory");
        goto fail;
    }
    sqlite3_extended_result_codes(s->db, 1);
    sqlite3_busy_timeout(s->db, 10000);

    /* WAL first (it cannot change inside a transaction); then the schema. */
    char *mode = NULL;
    int rc = sqlite3_exec(s->db, "PRAGMA foreign_keys = ON; PRAGMA synchronous = FULL;", NULL, NULL,
                          NULL);
    if (rc == SQLITE_OK) {
        sqlite3_stmt *st = NULL;
        rc = sqlite3_prepare_v2(s->db, "PRAGMA journal_mode = WAL", -1, &st, NULL);
        if (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
            mode = col_text(st, 0);
        else
            rc = sqlite3_errcode(s->db);
        sqlite3_finalize(st);
    }
    if (rc != SQLITE_OK || !mode || strcmp(mode, "wal") != 0) {
        strbuf_addf(err, "unable to open '%s' in WAL mode: %s", s->db_path,
                    mode ? mode : sqlite3_errmsg(s->db));
        if (rc == SQLITE_NOTADB)
            strbuf_adds(err, " (not a cutegen run database)");
        free(mode);
        goto fail;
    }
    free(mode);
    if (check_schema(s, create, err))
        goto fail;

    char *art_dir = xasprintf("%s/artifacts", s->dir);
    bool made = mkdir_p(s->nodes_dir, 0755) == 0 && fsync_dir(s->dir) == 0 && fsync_dir(art_dir) == 0;
    free(art_dir);
    if (!made) {
        strbuf_addf(err, "unable to create '%s': %s", s->nodes_dir, strerror(errno));
        goto fail;
    }
    if (recover_artifacts(s, err))
        goto fail;
    *out = s;
    return 0;

fail:
    store_close(s);
    return -1;
}

void store_close(store *s)
{
    if (!s)
        return;
    if (s->db)
        sqlite3_close(s->db);
    if (s->lock_fd >= 0)
        close(s->lock_fd);   /* releases the flock */
    pthread_mutex_destroy(&s->mu);
    free(s->dir);
    free(s->db_path);
    free(s->nodes_dir);
    free(s);
}

const char *store_dir(const store *s)
{
    return s->dir;
}

/* ================================================================ run metadata */

int store_meta_set(store *s, const char *key, const char *value)
{
    if (!key) {
        set_error("store_meta_set: no key");
        return -1;
    }
    lock(s);
    int rc = value ? exec_sql(s, "unable to set run metadata",
                              "INSERT INTO meta (key, value) VALUES (?, ?) "
                              "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                              "ss", key, value)
                   : exec_sql(s, "unable to unset run metadata", "DELETE FROM meta WHERE key = ?",
                              "s", key);
    unlock(s);
    return rc;
}

char *store_meta_get(store *s, const char *key)
{
    char *v = NULL;
    lock(s);
    query_text(s, &v, "SELECT value FROM meta WHERE key = ?", "s", key);
    unlock(s);
    return v;
}

/* ================================================================ tasks */

int64_t store_task(store *s, const char *name, const char *problem_path, const char *problem_sha256,
                   const char *spec_json)
{
    if (!name || !*name) {
        set_error("store_task: no task name");
        return -1;
    }
    lock(s);
    int64_t id = 0;
    int rc = tx_begin(s);
    if (rc == 0) {
        int found = query_i64(s, &id, "SELECT id FROM tasks WHERE name = ?", "s", name);
        if (found < 0)
            rc = -1;
        else if (found)
            rc = exec_sql(s, "unable to update task",
                          "UPDATE tasks SET problem_path = coalesce(?, problem_path), "
                          "problem_sha256 = coalesce(?, problem_sha256), "
                          "spec_json = coalesce(?, spec_json) WHERE id = ?",
                          "sssi", problem_path, problem_sha256, spec_json, id);
        else {
            rc = exec_sql(s, "unable to add task",
                          "INSERT INTO tasks (name, problem_path, problem_sha256, spec_json, created_at) "
                          "VALUES (?, ?, ?, ?, ?)",
                          "ssssf", name, problem_path, problem_sha256, spec_json, unix_now());
            id = sqlite3_last_insert_rowid(s->db);
        }
        rc = tx_end(s, rc);
    }
    unlock(s);
    return rc == 0 ? id : -1;
}

int64_t store_task_find(store *s, const char *name)
{
    int64_t id = 0;
    lock(s);
    int found = query_i64(s, &id, "SELECT id FROM tasks WHERE name = ?", "s", name);
    unlock(s);
    return found < 0 ? -1 : found ? id : 0;
}

int store_task_set(store *s, int64_t task, const char *key, const char *value)
{
    if (!key) {
        set_error("store_task_set: no key");
        return -1;
    }
    lock(s);
    int rc = value ? exec_sql(s, "unable to set a task's value",
                              "INSERT INTO task_kv (task_id, key, value, updated_at) VALUES (?, ?, ?, ?) "
                              "ON CONFLICT (task_id, key) DO UPDATE SET value = excluded.value, "
                              "updated_at = excluded.updated_at",
                              "issf", task, key, value, unix_now())
                   : exec_sql(s, "unable to unset a task's value",
                              "DELETE FROM task_kv WHERE task_id = ? AND key = ?", "is", task, key);
    unlock(s);
    return rc;
}

char *store_task_get(store *s, int64_t task, const char *key)
{
    static const char *const own[] = { "name", "problem_path", "problem_sha256", "spec_json" };
    if (!key)
        return NULL;
    char *v = NULL;
    lock(s);
    bool done = false;
    for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++) {
        if (strcmp(key, own[i]) != 0)
            continue;
        char *sql = xasprintf("SELECT %s FROM tasks WHERE id = ?", own[i]);
        query_text(s, &v, sql, "i", task);
        free(sql);
        done = true;
    }
    if (!done)
        query_text(s, &v, "SELECT value FROM task_kv WHERE task_id = ? AND key = ?", "is", task, key);
    unlock(s);
    return v;
}

/* ================================================================ artifacts */

/* Writes artifacts/nodes/<node>/<name> durably; fills sha and the path relative to the
 * run directory. No row is written: the caller records it after the node's row exists. */
static int write_artifact_file(store *s, int64_t node, const char *name, const void *data, size_t len,
                               char sha[65], char **rel)
{
    char *ndir = xasprintf("%s/%" PRId64, s->nodes_dir, node);
    if (!dir_exists(ndir)) {
        if (mkdir_p(ndir, 0755) < 0 || fsync_dir(s->nodes_dir) < 0) {
            set_error("unable to create '%s': %s", ndir, strerror(errno));
            free(ndir);
            return -1;
        }
    }
    char *path = xasprintf("%s/%s", ndir, name);
    if (write_file_atomic(path, data, len) < 0 || fsync_dir(ndir) < 0) {
        set_error("unable to write '%s': %s", path, strerror(errno));
        free(path);
        free(ndir);
        return -1;
    }
    free(path);
    free(ndir);
    sha256_hex(data, len, sha);
    *rel = xasprintf("artifacts/nodes/%" PRId64 "/%s", node, name);
    return 0;
}

static int record_artifact(store *s, int64_t node, const char *name, const char *rel, const char *sha,
                           size_t len)
{
    return exec_sql(s, "unable to record an artifact",
                    "INSERT INTO artifacts (node_id, name, path, sha256, bytes, created_at) "
                    "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (node_id, name) DO UPDATE SET "
                    "path = excluded.path, sha256 = excluded.sha256, bytes = excluded.bytes, "
                    "created_at = excluded.created_at",
                    "isssif", node, name, rel, sha, (int64_t)len, unix_now());
}

/* One call: the file, then its row, in one transaction. */
static int put_artifact(store *s, int64_t node, const char *name, const void *data, size_t len, char **rel_out)
{
    char sha[65];
    char *rel = NULL;
    if (write_artifact_file(s, node, name, data, len, sha, &rel))
        return -1;
    int rc = record_artifact(s, node, name, rel, sha, len);
    if (rc == 0 && rel_out)
        *rel_out = rel;
    else
        free(rel);
    return rc;
}

int store_node_attach(store *s, int64_t node, const char *name, const char *data, size_t len)
{
    if (!valid_artifact_name(name) || !strcmp(name, "kernel.cu")) {
        set_error("invalid artifact name '%s' (use [A-Za-z0-9._-], not 'kernel.cu')", name ? name : "");
        return -1;
    }
    if (!data && len) {
        set_error("store_node_attach: no data");
        return -1;
    }
    lock(s);
    int64_t found = 0;
    int rc = tx_begin(s);
    if (rc == 0) {
        int q = query_i64(s, &found, "SELECT 1 FROM nodes WHERE id = ?", "i", node);
        if (q == 0)
            set_error("unable to attach '%s': no node %" PRId64, name, node);
        rc = q == 1 ? put_artifact(s, node, name, data ? data : "", len, NULL) : -1;
        rc = tx_end(s, rc);
    }
    unlock(s);
    return rc;
}

char *store_node_artifact(store *s, int64_t node, const char *name)
{
    char *rel = NULL;
    lock(s);
    query_text(s, &rel, "SELECT path FROM artifacts WHERE node_id = ? AND name = ?", "is", node, name);
    unlock(s);
    if (!rel)
        return NULL;
    char *abs = xasprintf("%s/%s", s->dir, rel);
    free(rel);
    return abs;
}

/* ================================================================ nodes */

#define NODE_COLUMNS                                                                             \
    "id, task_id, parent_id, depth, attempt, kind, source_path, source_sha256, state, verdict, " \
    "time_ms, speedup, message, fingerprint, llm_call_id, created_at, judged_at"

static void read_node(store *s, sqlite3_stmt *st, store_node *n)
{
    memset(n, 0, sizeof(*n));
    n->id = sqlite3_column_int64(st, 0);
    n->task_id = sqlite3_column_int64(st, 1);
    n->parent_id = sqlite3_column_int64(st, 2);
    n->depth = sqlite3_column_int(st, 3);
    n->attempt = sqlite3_column_int(st, 4);
    n->kind = col_text(st, 5);
    const unsigned char *rel = sqlite3_column_text(st, 6);
    n->source_path = rel ? xasprintf("%s/%s", s->dir, (const char *)rel) : NULL;
    n->source_sha256 = col_text(st, 7);
    n->state = col_text(st, 8);
    n->verdict = col_text(st, 9);
    n->time_ms = col_double(st, 10);
    n->speedup = col_double(st, 11);
    n->message = col_text(st, 12);
    n->fingerprint = col_text(st, 13);
    n->llm_call_id = sqlite3_column_int64(st, 14);
    n->created_at = col_double(st, 15);
    n->judged_at = col_double(st, 16);
}

void store_node_release(store_node *n)
{
    if (!n)
        return;
    free(n->kind);
    free(n->source_path);
    free(n->source_sha256);
    free(n->state);
    free(n->verdict);
    free(n->message);
    free(n->fingerprint);
    memset(n, 0, sizeof(*n));
    n->time_ms = n->speedup = n->created_at = n->judged_at = NAN;
}

int64_t store_node_add(store *s, int64_t task, int64_t parent, int depth, int attempt, const char *kind,
                       const char *source, int64_t llm_call_id)
{
    if (!kind || !*kind) {
        set_error("store_node_add: no kind");
        return -1;
    }
    lock(s);
    int64_t id = 0, found = 0, parent_task = 0;
    char *rel = NULL;
    char sha[65] = "";
    int rc = tx_begin(s);
    if (rc == 0) {
        int q = query_i64(s, &found, "SELECT 1 FROM tasks WHERE id = ?", "i", task);
        if (q == 0)
            set_error("unable to add a node: no task %" PRId64, task);
        rc = q == 1 ? 0 : -1;
        if (rc == 0 && parent) {
            q = query_i64(s, &parent_task, "SELECT task_id FROM nodes WHERE id = ?", "i", parent);
            if (q == 0 || (q == 1 && parent_task != task))
                set_error("unable to add a node to task %" PRId64 ": parent %" PRId64 " %s", task,
                          parent, q == 0 ? "does not exist" : "belongs to another task");
            rc = q == 1 && parent_task == task ? 0 : -1;
        }
        if (rc == 0 && query_i64(s, &id, "SELECT coalesce(max(id), 0) + 1 FROM nodes", "") != 1)
            rc = -1;
        /* The file first: the row below must never name a file that is not there. */
        if (rc == 0 && source)
            rc = write_artifact_file(s, id, "kernel.cu", source, strlen(source), sha, &rel);
        if (rc == 0)
            rc = exec_sql(s, "unable to add a node",
                          "INSERT INTO nodes (id, task_id, parent_id, depth, attempt, kind, source_path, "
                          "source_sha256, state, llm_call_id, created_at) "
                          "VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?)",
                          "iiziissszf", id, task, parent, (int64_t)depth, (int64_t)attempt, kind, rel,
                          source ? sha : NULL, llm_call_id, unix_now());
        if (rc == 0 && source)
            rc = record_artifact(s, id, "kernel.cu", rel, sha, strlen(source));
        rc = tx_end(s, rc);
    }
    unlock(s);
    free(rel);
    return rc == 0 ? id : -1;
}

int store_node_judged(store *s, int64_t node, const char *verdict, double time_ms, double speedup,
                      const char *message, const char *report_json, const char *fingerprint)
{
    if (!verdict || !*verdict) {
        set_error("store_node_judged: no verdict");
        return -1;
    }
    lock(s);
    int64_t found = 0, previous = 0;
    char *rel = NULL;
    double now = unix_now();
    int rc = tx_begin(s);
    if (rc == 0) {
        int q = query_i64(s, &found, "SELECT 1 FROM nodes WHERE id = ?", "i", node);
        if (q == 0)
            set_error("unable to judge node %" PRId64 ": no such node", node);
        rc = q == 1 ? 0 : -1;
        if (rc == 0 && query_i64(s, &previous, "SELECT count(*) FROM evaluations WHERE node_id = ?",
                                 "i", node) != 1)
            rc = -1;
        if (rc == 0 && report_json) {
            char name[64];
            if (previous == 0)
                snprintf(name, sizeof(name), "eval.json");
            else
                snprintf(name, sizeof(name), "eval.%" PRId64 ".json", previous + 1);
            rc = put_artifact(s, node, name, report_json, strlen(report_json), &rel);
        }
        if (rc == 0)
            rc = exec_sql(s, "unable to record an evaluation",
                          "INSERT INTO evaluations (node_id, verdict, time_ms, speedup, message, "
                          "fingerprint, report_path, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                          "isffsssf", node, verdict, time_ms, speedup, message, fingerprint, rel, now);
        if (rc == 0)
            rc = exec_sql(s, "unable to record a verdict",
                          "UPDATE nodes SET state = 'judged', verdict = ?, time_ms = ?, speedup = ?, "
                          "message = ?, fingerprint = ?, judged_at = ? WHERE id = ?",
                          "sffssfi", verdict, time_ms, speedup, message, fingerprint, now, node);
        rc = tx_end(s, rc);
    }
    unlock(s);
    free(rel);
    return rc;
}

int store_node_get(store *s, int64_t node, store_node *out)
{
    memset(out, 0, sizeof(*out));
    lock(s);
    int ret = -1;
    sqlite3_stmt *st = prep(s, "SELECT " NODE_COLUMNS " FROM nodes WHERE id = ?", "i", node);
    if (st) {
        int rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
            read_node(s, st, out);
            ret = 0;
        } else if (rc == SQLITE_DONE) {
            set_error("no node %" PRId64, node);
        } else {
            db_error(s, "unable to read a node");
        }
        sqlite3_finalize(st);
    }
    unlock(s);
    return ret;
}

int store_nodes(store *s, int64_t task, store_node **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    lock(s);
    int ret = -1;
    sqlite3_stmt *st = prep(s, "SELECT " NODE_COLUMNS " FROM nodes WHERE task_id = ? ORDER BY id", "i", task);
    if (st) {
        store_node *v = NULL;
        size_t len = 0, cap = 0;
        int rc;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            if (len == cap) {
                cap = cap ? 2 * cap : 16;
                v = xrealloc(v, cap * sizeof(*v));
            }
            read_node(s, st, &v[len++]);
        }
        if (rc == SQLITE_DONE) {
            *out = v;
            *n = len;
            ret = 0;
        } else {
            db_error(s, "unable to read nodes");
            store_nodes_free(v, len);
        }
        sqlite3_finalize(st);
    }
    unlock(s);
    return ret;
}

void store_nodes_free(store_node *nodes, size_t n)
{
    for (size_t i = 0; i < n; i++)
        store_node_release(&nodes[i]);
    free(nodes);
}

int64_t store_best_node(store *s, int64_t task)
{
    int64_t id = 0;
    lock(s);
    int q = query_i64(s, &id,
                      "SELECT id FROM nodes WHERE task_id = ? AND verdict = 'ok' AND time_ms IS NOT NULL "
                      "ORDER BY time_ms, id LIMIT 1",
                      "i", task);
    unlock(s);
    return q == 1 ? id : 0;
}

/* ================================================================ LLM calls */

static int64_t usage_field(json_t *u, const char *a, const char *b)
{
    json_t *v = json_object_get(u, a);
    if (!json_is_integer(v))
        v = json_object_get(u, b);
    return json_is_integer(v) ? (int64_t)json_integer_value(v) : 0;
}

int64_t store_llm_call_add(store *s, int64_t task, int64_t parent_node, const char *prompt_kind,
                           const char *request_hash, const char *request_json, const char *reply_text,
                           const char *usage_json, double cost_usd, double latency_s, const char *failure)
{
    int64_t tin = 0, tout = 0;
    if (usage_json) {
        json_t *u = json_loads(usage_json, 0, NULL);
        if (json_is_object(u)) {
            tin = usage_field(u, "input_tokens", "prompt_tokens");
            tout = usage_field(u, "output_tokens", "completion_tokens");
        }
        json_decref(u);
    }
    if (isnan(cost_usd))
        cost_usd = 0;
    lock(s);
    int rc = exec_sql(s, "unable to record an LLM call",
                      "INSERT INTO llm_calls (task_id, parent_node, prompt_kind, request_hash, request_json, "
                      "reply_text, usage_json, tokens_in, tokens_out, cost_usd, latency_s, failure, created_at) "
                      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                      "zzsssssiiffsf", task, parent_node, prompt_kind, request_hash, request_json,
                      reply_text, usage_json, tin, tout, cost_usd, latency_s, failure, unix_now());
    int64_t id = rc == 0 ? sqlite3_last_insert_rowid(s->db) : -1;
    unlock(s);
    return id;
}

/* The oldest successful reply with this request hash; unused_only skips replies a node
 * was already made from. */
static char *reply_with_hash(store *s, int64_t task, const char *request_hash, int64_t *call_id,
                             bool unused_only)
{
    if (call_id)
        *call_id = 0;
    if (!request_hash)
        return NULL;
    char *reply = NULL;
    lock(s);
    sqlite3_stmt *st = prep(s,
                            "SELECT c.id, c.reply_text FROM llm_calls c "
                            "WHERE c.task_id IS ? AND c.request_hash = ? AND c.failure IS NULL "
                            "AND c.reply_text IS NOT NULL "
                            "AND (? = 0 OR NOT EXISTS (SELECT 1 FROM nodes n WHERE n.llm_call_id = c.id)) "
                            "ORDER BY c.id LIMIT 1",
                            "zsi", task, request_hash, (int64_t)unused_only);
    if (st) {
        int rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
            if (call_id)
                *call_id = sqlite3_column_int64(st, 0);
            reply = col_text(st, 1);
        } else if (rc != SQLITE_DONE) {
            db_error(s, "unable to look up an LLM reply");
        }
        sqlite3_finalize(st);
    }
    unlock(s);
    return reply;
}

char *store_llm_reply_lookup(store *s, int64_t task, const char *request_hash, int64_t *call_id)
{
    return reply_with_hash(s, task, request_hash, call_id, true);
}

char *store_llm_reply_find(store *s, int64_t task, const char *request_hash, int64_t *call_id)
{
    return reply_with_hash(s, task, request_hash, call_id, false);
}

int64_t store_node_of_call(store *s, int64_t llm_call_id)
{
    int64_t id = 0;
    lock(s);
    if (query_i64(s, &id, "SELECT id FROM nodes WHERE llm_call_id = ? ORDER BY id LIMIT 1", "i",
                  llm_call_id) != 1)
        id = 0;
    unlock(s);
    return id;
}

/* ================================================================ profiles, events, totals */

int store_profile_add(store *s, int64_t node, const char *digest_text, const char *digest_json)
{
    lock(s);
    int rc = exec_sql(s, "unable to record a profile",
                      "INSERT INTO profiles (node_id, digest_text, digest_json, created_at) VALUES (?, ?, ?, ?)",
                      "issf", node, digest_text, digest_json, unix_now());
    unlock(s);
    return rc;
}

char *store_profile_get(store *s, int64_t node)
{
    char *v = NULL;
    lock(s);
    query_text(s, &v, "SELECT digest_text FROM profiles WHERE node_id = ? ORDER BY id DESC LIMIT 1", "i",
               node);
    unlock(s);
    return v;
}

int store_event(store *s, int64_t task, const char *kind, const char *json)
{
    if (!kind || !*kind) {
        set_error("store_event: no kind");
        return -1;
    }
    lock(s);
    int rc = exec_sql(s, "unable to record an event",
                      "INSERT INTO events (task_id, kind, json, created_at) VALUES (?, ?, ?, ?)", "zssf",
                      task, kind, json, unix_now());
    unlock(s);
    return rc;
}

int store_totals(store *s, int64_t task, double *cost_usd, int64_t *calls, int64_t *tokens_in,
                 int64_t *tokens_out)
{
    lock(s);
    int ret = -1;
    sqlite3_stmt *st = prep(s,
                            "SELECT coalesce(sum(cost_usd), 0), count(*), coalesce(sum(tokens_in), 0), "
                            "coalesce(sum(tokens_out), 0) FROM llm_calls WHERE ?1 = 0 OR task_id = ?1",
                            "i", task);
    if (st) {
        if (sqlite3_step(st) == SQLITE_ROW) {
            if (cost_usd)
                *cost_usd = sqlite3_column_double(st, 0);
            if (calls)
                *calls = sqlite3_column_int64(st, 1);
            if (tokens_in)
                *tokens_in = sqlite3_column_int64(st, 2);
            if (tokens_out)
                *tokens_out = sqlite3_column_int64(st, 3);
            ret = 0;
        } else {
            db_error(s, "unable to sum LLM calls");
        }
        sqlite3_finalize(st);
    }
    unlock(s);
    return ret;
}

/* ================================================================ store_contains */

static bool file_contains(const char *path, const char *needle, size_t nlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    size_t cap = 1 << 16;
    if (cap < 2 * nlen)
        cap = 2 * nlen;
    char *buf = xmalloc(cap);
    size_t have = 0;
    bool hit = false;
    for (;;) {
        ssize_t r = read(fd, buf + have, cap - have);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        have += (size_t)r;
        if (memmem(buf, have, needle, nlen)) {
            hit = true;
            break;
        }
        /* keep the last nlen-1 bytes: a match may straddle two reads */
        size_t keep = have < nlen - 1 ? have : nlen - 1;
        memmove(buf, buf + have - keep, keep);
        have = keep;
    }
    free(buf);
    close(fd);
    return hit;
}

static bool tree_contains(const char *dir, const char *needle, size_t nlen)
{
    DIR *d = opendir(dir);
    if (!d)
        return false;
    bool hit = false;
    struct dirent *e;
    while (!hit && (e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char *p = xasprintf("%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(p, &st) == 0) {
            if (S_ISDIR(st.st_mode))
                hit = tree_contains(p, needle, nlen);
            else if (S_ISREG(st.st_mode))
                hit = file_contains(p, needle, nlen);
        }
        free(p);
    }
    closedir(d);
    return hit;
}

static bool tables_contain(store *s, const char *needle, size_t nlen)
{
    sqlite3_stmt *tables = prep(s, "SELECT name FROM sqlite_master WHERE type = 'table'", "");
    if (!tables)
        return false;
    bool hit = false;
    while (!hit && sqlite3_step(tables) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(tables, 0);
        if (!name || strchr(name, '"'))
            continue;
        char *sql = xasprintf("SELECT * FROM \"%s\"", name);
        sqlite3_stmt *st = prep(s, sql, "");
        free(sql);
        if (!st)
            continue;
        while (!hit && sqlite3_step(st) == SQLITE_ROW) {
            int ncol = sqlite3_column_count(st);
            for (int i = 0; i < ncol && !hit; i++) {
                int type = sqlite3_column_type(st, i);
                if (type != SQLITE_TEXT && type != SQLITE_BLOB)
                    continue;
                const void *p = type == SQLITE_TEXT ? (const void *)sqlite3_column_text(st, i)
                                                    : sqlite3_column_blob(st, i);
                size_t n = (size_t)sqlite3_column_bytes(st, i);
                hit = p && memmem(p, n, needle, nlen) != NULL;
            }
        }
        sqlite3_finalize(st);
    }
    sqlite3_finalize(tables);
    return hit;
}

bool store_contains(store *s, const char *needle)
{
    if (!needle || !*needle)
        return false;
    size_t nlen = strlen(needle);
    lock(s);
    bool hit = tables_contain(s, needle, nlen) || tree_contains(s->dir, needle, nlen);
    unlock(s);
    return hit;
}

/* ================================================================ read-only queries (report, export) */

int store_task_ids(store *s, int64_t **ids, size_t *n)
{
    *ids = NULL;
    *n = 0;
    lock(s);
    sqlite3_stmt *st = prep(s, "SELECT id FROM tasks ORDER BY id", "");
    int ret = st ? 0 : -1;
    size_t cap = 0;
    while (st) {
        int rc = sqlite3_step(st);
        if (rc == SQLITE_DONE)
            break;
        if (rc != SQLITE_ROW) {
            db_error(s, "unable to list tasks");
            ret = -1;
            break;
        }
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            *ids = xrealloc(*ids, cap * sizeof **ids);
        }
        (*ids)[(*n)++] = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    unlock(s);
    if (ret < 0) {
        free(*ids);
        *ids = NULL;
        *n = 0;
    }
    return ret;
}

int store_task_span(store *s, int64_t task, double *first, double *last)
{
    *first = *last = NAN;
    lock(s);
    sqlite3_stmt *st = prep(s,
                            "SELECT min(t0), max(t1) FROM ("
                            " SELECT created_at AS t0, created_at AS t1 FROM tasks WHERE id = ?1"
                            " UNION ALL SELECT min(created_at), max(coalesce(judged_at, created_at))"
                            "  FROM nodes WHERE task_id = ?1"
                            " UNION ALL SELECT min(created_at), max(created_at) FROM llm_calls WHERE task_id = ?1"
                            " UNION ALL SELECT min(created_at), max(created_at) FROM events WHERE task_id = ?1"
                            " UNION ALL SELECT NULL, max(updated_at) FROM task_kv WHERE task_id = ?1)",
                            "i", task);
    int ret = -1;
    if (st) {
        if (sqlite3_step(st) == SQLITE_ROW) {
            *first = col_double(st, 0);
            *last = col_double(st, 1);
            ret = 0;
        } else {
            db_error(s, "unable to read a task's times");
        }
        sqlite3_finalize(st);
    }
    unlock(s);
    return ret;
}

char *store_node_latest_report(store *s, int64_t node)
{
    char *rel = NULL;
    lock(s);
    query_text(s, &rel,
               "SELECT report_path FROM evaluations WHERE node_id = ? AND report_path IS NOT NULL "
               "ORDER BY id DESC LIMIT 1", "i", node);
    unlock(s);
    if (!rel)
        return NULL;
    char *abs = xasprintf("%s/%s", s->dir, rel);
    free(rel);
    return abs;
}
