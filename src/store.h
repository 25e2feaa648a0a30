/*
 * store: a run directory, the memory of a cutegen run. It holds `run.db` (SQLite: run
 * metadata, tasks, the search tree's nodes and their evaluations, LLM calls with usage
 * and cost, profiler digests, an event log) and `artifacts/` (each node's kernel source
 * and the files attached to it: build log, worker log, ncu report, eval report JSON).
 *
 * DESIGN. Everything the agent learns is written here before it is acted on, so a run
 * killed at any moment (kill -9, power loss) resumes with nothing lost and nothing paid
 * twice (docs/store.md says how resume uses it):
 *  - every API call is one SQLite transaction (WAL, synchronous=FULL, foreign keys on);
 *  - an artifact file is written atomically (temporary file, fsync, rename, fsync of the
 *    directory) *before* the row that points at it is committed, so a committed row never
 *    names a missing or partial file; a file whose row never committed is an orphan that
 *    store_open() removes;
 *  - one connection under a mutex: every function may be called from any thread;
 *  - one process at a time: store_open() takes an exclusive lock on `run_dir/lock`
 *    (released by the kernel when the process dies, kill -9 included).
 *
 * The store writes exactly the bytes it is given. It never redacts: callers pass JSON
 * from which secrets (API keys, Authorization headers) were already removed.
 *
 * Errors: store_open() appends to err; every other function returns -1 (or NULL, 0,
 * false, as documented) and leaves a message for store_error(). Library code: nothing
 * here prints or exits.
 */
#ifndef CUTEGEN_STORE_H
#define CUTEGEN_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "strbuf.h"

/* The schema version this build writes (PRAGMA user_version). */
#define STORE_SCHEMA_VERSION 1

typedef struct store store;

/* Opens the run at run_dir. create=true makes the directory and database when missing
 * (and opens an existing run as is); create=false requires an existing run (resume).
 * Fails, with a message in err, for a missing run, a database of a newer schema, a
 * file that is not a cutegen run, or a run held by another live process. */
int store_open(const char *run_dir, bool create, store **out, strbuf *err);
void store_close(store *s);
/* The run directory, absolute. */
const char *store_dir(const store *s);
/* The calling thread's last error from a store function ("" when none). */
const char *store_error(const store *s);

/* ---------------------------------------------------------------- run metadata */

/* Run options (JSON text), status, stop reason, ...: a key/value table, last write wins. */
int store_meta_set(store *s, const char *key, const char *value);
char *store_meta_get(store *s, const char *key);   /* malloc'd, or NULL when unset */

/* ---------------------------------------------------------------- tasks */

/* Upserts by name: a new task, or the existing one with path, sha256 and spec updated
 * (NULL arguments leave a field as it is). Returns the id (>0) or -1. */
int64_t store_task(store *s, const char *name, const char *problem_path, const char *problem_sha256,
                   const char *spec_json);
/* Looks a task up by name: its id, 0 when there is none, -1 on error. */
int64_t store_task_find(store *s, const char *name);
/* Per-task key/values: status, stop_reason, best_node, baseline JSON, ... value NULL
 * removes the key. */
int store_task_set(store *s, int64_t task, const char *key, const char *value);
/* A key set by store_task_set, or one of the task's own fields: "name", "problem_path",
 * "problem_sha256", "spec_json". malloc'd, or NULL. */
char *store_task_get(store *s, int64_t task, const char *key);

/* ---------------------------------------------------------------- nodes */

typedef struct store_node {
    int64_t id, task_id, parent_id;   /* parent 0 for roots */
    int depth, attempt;               /* attempt: 0 for a fresh child, k for its k-th fix */
    char *kind;                       /* prompt kind that made it: first, fix_compile, fix_wrong,
                                         fix_runtime, optimise, tune, seed, recipe */
    char *source_path;                /* artifacts/nodes/<id>/kernel.cu (absolute); NULL: no source */
    char *source_sha256;
    char *state;                      /* "pending" (made, not judged), "judged" */
    char *verdict;                    /* NULL until judged */
    double time_ms, speedup;          /* NAN when unknown */
    char *message;                    /* the short message for the model */
    char *fingerprint;                /* structure hash, NULL when unknown */
    int64_t llm_call_id;              /* the call whose reply made it, 0 if none */
    double created_at, judged_at;     /* unix seconds; judged_at NAN until judged */
} store_node;

void store_node_release(store_node *n);

/* Adds a pending node: writes artifacts/nodes/<id>/kernel.cu, then commits the row.
 * parent 0 makes a root; a parent must belong to the same task. source NULL records a
 * node with no kernel (a reply with no usable code). Returns the id or -1. */
int64_t store_node_add(store *s, int64_t task, int64_t parent, int depth, int attempt, const char *kind,
                       const char *source, int64_t llm_call_id);
/* Records a judgment: the node becomes "judged" with these values (time_ms, speedup NAN
 * when unknown; message, report_json, fingerprint may be NULL). report_json is written
 * to artifacts/nodes/<id>/eval.json (eval.<k>.json for the k-th judgment of the same
 * node); every judgment also stays in the evaluations table. */
int store_node_judged(store *s, int64_t node, const char *verdict, double time_ms, double speedup,
                      const char *message, const char *report_json, const char *fingerprint);
/* Fills out (release it with store_node_release). 0, or -1 when there is no such node. */
int store_node_get(store *s, int64_t node, store_node *out);
/* All nodes of a task, ordered by id. */
int store_nodes(store *s, int64_t task, store_node **out, size_t *n);
void store_nodes_free(store_node *nodes, size_t n);
/* The node with verdict "ok" and the smallest time_ms (the lowest id on a tie); 0 if none. */
int64_t store_best_node(store *s, int64_t task);
/* Writes data to artifacts/nodes/<id>/<name> (replacing an earlier file of that name),
 * then records it with its sha256. name: [A-Za-z0-9._-], not starting with '.', and not
 * "kernel.cu". */
int store_node_attach(store *s, int64_t node, const char *name, const char *data, size_t len);
/* The absolute path of a node's attachment, malloc'd; NULL when none was recorded. */
char *store_node_artifact(store *s, int64_t node, const char *name);

/* ---------------------------------------------------------------- LLM calls */

/* Records one model call, paid or failed, before its reply is used. task and
 * parent_node may be 0. request_json must already be redacted: it is stored as given.
 * usage_json: {"input_tokens":..,"output_tokens":..} (prompt_tokens/completion_tokens
 * also read) or NULL. failure NULL for a call that returned reply_text. Returns the id. */
int64_t store_llm_call_add(store *s, int64_t task, int64_t parent_node, const char *prompt_kind,
                           const char *request_hash, const char *request_json, const char *reply_text,
                           const char *usage_json, double cost_usd, double latency_s, const char *failure);
/* Resume: the reply of a call already paid for (same task and request hash, no failure)
 * that no node was made from yet, the oldest first; NULL when there is none. *call_id
 * (may be NULL) gets its id. Once a node names the call (store_node_add's llm_call_id),
 * the reply is used and the lookup skips it, so N siblings asked with one request each
 * get their own reply back. */
char *store_llm_reply_lookup(store *s, int64_t task, const char *request_hash, int64_t *call_id);
/* Memoisation: the reply of the oldest successful call with this request hash, used or
 * not (the agent makes every request unique, so a repeated request is a re-run of the
 * same step after a resume). NULL when there is none. */
char *store_llm_reply_find(store *s, int64_t task, const char *request_hash, int64_t *call_id);
/* The node made from a call's reply, or 0. */
int64_t store_node_of_call(store *s, int64_t llm_call_id);

/* ---------------------------------------------------------------- profiles, events */

int store_profile_add(store *s, int64_t node, const char *digest_text, const char *digest_json);
char *store_profile_get(store *s, int64_t node);   /* the latest digest text, or NULL */
/* An append-only log: round started, stop reason, ... task 0: the run as a whole. */
int store_event(store *s, int64_t task, const char *kind, const char *json);

/* Spend of a task (0: the whole run). Any output pointer may be NULL. */
int store_totals(store *s, int64_t task, double *cost_usd, int64_t *calls, int64_t *tokens_in,
                 int64_t *tokens_out);

/* ---------------------------------------------------------------- checking */

/* Whether needle occurs in any text or blob column of any table, or in any file under the
 * run directory (artifacts, and the raw database and WAL files). For tests that a secret
 * never reached the run. */
bool store_contains(store *s, const char *needle);

/* ---------------------------------------------------------------- read-only queries */

/* Every task's id, in id order (*ids malloc'd; free it). 0 or -1. */
int store_task_ids(store *s, int64_t **ids, size_t *n);
/* The earliest and latest time (unix seconds) anything of the task was recorded: its
 * row, nodes (made and judged), model calls, events, key/values. NAN when unknown. */
int store_task_span(store *s, int64_t task, double *first, double *last);
/* The absolute path of the report of a node's latest judgment (eval.json, or
 * eval.<k>.json after a re-timing), malloc'd; NULL when none. */
char *store_node_latest_report(store *s, int64_t node);

#endif
