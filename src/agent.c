/*
 * agent: the tree search (see agent.h).
 *
 * DESIGN. The store is the memory: every LLM reply is stored before it is used, every
 * node's source before it is judged, every verdict as soon as it is known. On resume
 * the tree is read back, pending nodes are judged, and a request whose reply is already
 * stored is answered from the store, so nothing is paid twice. Prompts are built only
 * from stored facts, so a resumed run asks the same questions it would have asked.
 */
#include "agent.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "edit.h"
#include "gpu.h"
#include "kb.h"
#include "prompt.h"
#include "recipe.h"
#include "store.h"
#include "util.h"

void agent_opts_init(agent_opts *o)
{
    memset(o, 0, sizeof *o);
    o->children = 3;
    o->fix_attempts = 2;
    o->max_rounds = 6;
    o->max_depth = 8;
    o->plateau_gain = 0.02;
    o->plateau_rounds = 2;
    o->sol_stop = 0.9;
    o->profile = PROFILE_DELAYED;
    o->stable_steps = 2;
    o->kb_notes = 3;
    o->kb_chars = 7000; /* notes run 1.8-3.6 KB: room for two or three */
    eval_opts_init(&o->eval);
    o->eval.final = true;
    llm_config_init(&o->llm);
}

/* Everything one run holds. */
struct agent {
    agent_opts *o;
    store *st;
    eval_session *ev;
    llm_client *llm;
    llm_budget task_budget;
    kb *kb;
    int64_t task;
    json_t *spec;
    gpu_facts gpu;
    double sol_ms;
    const char *sol_bound;
    char *problem_source;
    char *abi_text;
    char *stop_reason;
    int verdicts[6];
    int stale_rounds;
    bool profiling_on;
    bool live;            /* a terminal: one status line, rewritten in place */
    bool budget_up;
    double started;
    int rounds_done;
};

static int64_t max_node_id(struct agent *a);
static int64_t best_within(struct agent *a, int64_t horizon);

/* Where the run stands: task, round, best so far, verdicts, spend, elapsed and ETA. On a
 * terminal one line rewritten in place; otherwise a log line (at round ends). */
/* $CUTEGEN_STATUS_FILE (set by cutegen bench): the run's state as one JSON object,
 * rewritten atomically at every step, for the sweep's live view. */
static void write_status(struct agent *a, const char *line, double best_ms, double best_speedup,
                         int64_t calls, double cost, const char *stop)
{
    const char *path = getenv("CUTEGEN_STATUS_FILE");
    if (!path || !*path)
        return;
    json_t *st = json_pack("{s:s, s:i, s:i, s:f, s:f, s:I, s:f, s:f, s:[iiiiii]}", "line", line,
                           "round", a->rounds_done, "max_rounds", a->o->max_rounds,
                           "best_ms", best_ms, "best_speedup", best_speedup,
                           "calls", (json_int_t)calls, "cost_usd", cost,
                           "elapsed_s", now_seconds() - a->started, "verdicts", a->verdicts[0],
                           a->verdicts[1], a->verdicts[2], a->verdicts[3], a->verdicts[4],
                           a->verdicts[5]);
    if (stop)
        json_object_set_new(st, "stopped", json_string(stop));
    char *text = json_dumps(st, JSON_COMPACT);
    write_file_atomic(path, text, strlen(text));
    free(text);
    json_decref(st);
}

static void show_progress(struct agent *a, int round, bool round_end)
{
    bool status_file = getenv("CUTEGEN_STATUS_FILE") != NULL;
    if (!a->live && !round_end && !status_file)
        return;
    double elapsed = now_seconds() - a->started;
    strbuf line = STRBUF_INIT;
    const char *base = strrchr(a->o->task_path, '/');
    strbuf_addf(&line, "[%s] round %d/%d", base ? base + 1 : a->o->task_path, round,
                a->o->max_rounds);
    int64_t best = best_within(a, max_node_id(a));
    store_node b;
    double best_ms = 0, best_speedup = 0;
    if (best > 0 && store_node_get(a->st, best, &b) == 0) {
        strbuf_addf(&line, " | best %.4f ms (%.2fx)", b.time_ms, b.speedup);
        best_ms = b.time_ms;
        best_speedup = b.speedup;
        store_node_release(&b);
    } else {
        strbuf_adds(&line, " | no correct kernel yet");
    }
    strbuf_addf(&line, " | ok %d ce %d re %d wr %d to %d rj %d", a->verdicts[0], a->verdicts[1],
                a->verdicts[2], a->verdicts[3], a->verdicts[4], a->verdicts[5]);
    double cost = 0;
    int64_t calls = 0, tin = 0, tout = 0;
    store_totals(a->st, a->task, &cost, &calls, &tin, &tout);
    strbuf_addf(&line, " | %lld calls $%.3f | %.0f s", (long long)calls, cost, elapsed);
    if (a->rounds_done > 0 && a->rounds_done < a->o->max_rounds)
        strbuf_addf(&line, ", at most ~%.0f s left",
                    elapsed / a->rounds_done * (a->o->max_rounds - a->rounds_done));
    write_status(a, line.buf, best_ms, best_speedup, calls, cost, NULL);
    if (a->live)
        fprintf(stderr, "\r\033[K%s", line.buf);
    else if (round_end)
        progress("%s", line.buf);
    strbuf_release(&line);
}

/* ------------------------------------------------------------------ facts for prompts */

static void describe_tensors(json_t *list, const char *label, strbuf *out)
{
    size_t i;
    json_t *t;
    json_array_foreach(list, i, t) {
        strbuf_addf(out, "%s %s (%s): %s [", label,
                    json_string_value(json_object_get(t, "name")) ?: "?",
                    json_string_value(json_object_get(t, "kind")) ?: label,
                    json_string_value(json_object_get(t, "dtype")) ?: "?");
        size_t j;
        json_t *d;
        json_array_foreach(json_object_get(t, "shape"), j, d)
            strbuf_addf(out, "%s%lld", j ? ", " : "", (long long)json_integer_value(d));
        strbuf_adds(out, "] stride [");
        json_array_foreach(json_object_get(t, "stride"), j, d)
            strbuf_addf(out, "%s%lld", j ? ", " : "", (long long)json_integer_value(d));
        strbuf_adds(out, "]\n");
    }
}

static void describe_graph(json_t *graph, strbuf *out)
{
    size_t i;
    json_t *n;
    json_array_foreach(graph, i, n) {
        char *args = json_dumps(json_object_get(n, "args"), JSON_COMPACT);
        strbuf_addf(out, "%%%s = %s %s%s%s\n", json_string_value(json_object_get(n, "name")),
                    json_string_value(json_object_get(n, "op")),
                    json_string_value(json_object_get(n, "target")), args ? " " : "",
                    args ? args : "");
        free(args);
    }
}

static void set_num(prompt_vars *v, const char *name, double x, const char *fmt)
{
    if (!isfinite(x))
        return;
    char buf[64];
    snprintf(buf, sizeof buf, fmt, x);
    prompt_vars_set(v, name, buf);
}

/* The variables every prompt of this task shares. */
static void task_vars(struct agent *a, prompt_vars *v)
{
    strbuf sb = STRBUF_INIT;
    prompt_vars_set(v, "problem_source", a->problem_source);
    describe_tensors(json_object_get(a->spec, "inputs"), "input", &sb);
    describe_tensors(json_object_get(a->spec, "outputs"), "output", &sb);
    prompt_vars_set(v, "task_spec", sb.buf);
    strbuf_reset(&sb);
    describe_graph(json_object_get(a->spec, "graph"), &sb);
    prompt_vars_set(v, "graph", sb.buf);
    strbuf_reset(&sb);
    set_num(v, "flops", json_number_value(json_object_get(a->spec, "flops")), "%.4g");
    set_num(v, "min_bytes", json_number_value(json_object_get(a->spec, "min_bytes")), "%.4g");
    set_num(v, "sol_ms", a->sol_ms, "%.4f");
    prompt_vars_set(v, "sol_bound", a->sol_bound);
    gpu_facts_describe(&a->gpu, &sb);
    prompt_vars_set(v, "gpu_facts", sb.buf);
    prompt_vars_set(v, "abi", a->abi_text);
    strbuf_release(&sb);
}

static char *read_text(const char *path)
{
    strbuf sb = STRBUF_INIT;
    if (read_file(path, &sb, 16u << 20) < 0) {
        strbuf_release(&sb);
        return xstrdup("");
    }
    return strbuf_detach(&sb);
}

/* The branch from the root to node, oldest first: what was tried and what it gave. */
static void branch_history(struct agent *a, int64_t node, strbuf *out)
{
    int64_t chain[64];
    int n = 0;
    for (int64_t id = node; id > 0 && n < 64;) {
        chain[n++] = id;
        store_node sn;
        if (store_node_get(a->st, id, &sn) < 0)
            break;
        id = sn.parent_id;
        store_node_release(&sn);
    }
    for (int i = n - 1; i >= 0; i--) {
        store_node sn;
        if (store_node_get(a->st, chain[i], &sn) < 0)
            continue;
        strbuf_addf(out, "- node %lld (%s, depth %d): %s", (long long)sn.id, sn.kind, sn.depth,
                    sn.verdict ? sn.verdict : "not judged");
        if (isfinite(sn.time_ms))
            strbuf_addf(out, ", %.4f ms", sn.time_ms);
        if (isfinite(sn.speedup))
            strbuf_addf(out, " (%.2fx eager)", sn.speedup);
        if (sn.message && *sn.message && strcmp(sn.verdict ? sn.verdict : "", "ok"))
            strbuf_addf(out, ": %.200s", sn.message);
        strbuf_addc(out, '\n');
        store_node_release(&sn);
    }
}

/* ------------------------------------------------------------------ the model */

/* Asks the model (or the store, when this request was already paid for); the reply is
 * stored before it is returned. Returns the reply (malloc'd) or NULL with why set. */
static char *ask_model(struct agent *a, const char *kind, int64_t parent, const char *tag,
                       prompt_vars *v, int64_t *call_id, strbuf *why)
{
    strbuf system = STRBUF_INIT, user = STRBUF_INIT, err = STRBUF_INIT;
    char *reply = NULL;
    if (prompt_render_kind("system", v, &system, &err) < 0 ||
        prompt_render_kind(kind, v, &user, &err) < 0) {
        strbuf_addf(why, "prompt '%s' does not render: %s", kind, err.buf);
        goto out;
    }
    llm_request req;
    llm_request_init(&req);
    req.system = xstrdup(system.buf);
    /* The step's place in the search makes every request unique, so a request seen
     * before is this very step run again after a resume: its stored reply is reused. */
    strbuf_addf(&user, "\n\n(Request %s.)\n", tag);
    llm_request_add(&req, "user", user.buf);
    char hash[65];
    llm_request_hash(&req, hash);
    reply = store_llm_reply_find(a->st, a->task, hash, call_id);
    if (reply) {
        progress("%s: reply already in the run (call %lld), not asked again", kind,
                 (long long)*call_id);
        llm_request_release(&req);
        goto out;
    }
    llm_result res;
    llm_result_init(&res);
    int rc = llm_call(a->llm, &req, &a->task_budget, &res);
    char *req_json = llm_request_canonical(&req);
    char usage[256];
    snprintf(usage, sizeof usage,
             "{\"input_tokens\":%ld,\"output_tokens\":%ld,\"cached_input_tokens\":%ld,"
             "\"reasoning_tokens\":%ld,\"retries\":%d}",
             res.usage.input_tokens, res.usage.output_tokens, res.usage.cached_input_tokens,
             res.usage.reasoning_tokens, res.retries);
    *call_id = store_llm_call_add(a->st, a->task, parent, kind, hash, req_json, res.text.buf,
                                  usage, res.cost_usd, res.latency_s,
                                  rc ? llm_fail_name(res.fail) : NULL);
    free(req_json);
    if (rc < 0)
        strbuf_addf(why, "the model call failed (%s): %s", llm_fail_name(res.fail), res.message.buf);
    else
        reply = xstrdup(res.text.buf);
    llm_result_release(&res);
    llm_request_release(&req);
out:
    strbuf_release(&system);
    strbuf_release(&user);
    strbuf_release(&err);
    return reply;
}

/* ------------------------------------------------------------------ judging */

static int verdict_index(const char *v)
{
    static const char *names[] = { "ok", "compile_error", "runtime_error", "wrong_result",
                                   "timeout", "rejected" };
    for (int i = 0; i < 6; i++)
        if (v && strcmp(v, names[i]) == 0)
            return i;
    return 5;
}


/* Judges a stored node and records the verdict. Returns 0, or an EXIT_* code when the
 * harness itself cannot go on (no GPU, the reference process died). */
static int judge_node(struct agent *a, int64_t node, strbuf *err)
{
    store_node sn;
    if (store_node_get(a->st, node, &sn) < 0) {
        strbuf_addf(err, "node %lld is not in the run", (long long)node);
        return EXIT_INTERNAL;
    }
    if (sn.verdict) { /* judged before a resume */
        store_node_release(&sn);
        return 0;
    }
    char *dir = xasprintf("%s/artifacts/nodes/%lld", store_dir(a->st), (long long)node);
    json_t *report = NULL;
    progress("judging node %lld (%s, depth %d)", (long long)node, sn.kind, sn.depth);
    int rc = eval_session_judge(a->ev, sn.source_path, dir, &report, err);
    if (rc == 0) {
        const char *verdict = json_string_value(json_object_get(report, "verdict")) ?: "rejected";
        const char *message = json_string_value(json_object_get(report, "message")) ?: "";
        double t = json_number_value(json_object_get(json_object_get(report, "kernel_time"),
                                                     "median_ms"));
        double sp = json_number_value(json_object_get(json_object_get(report, "speedup"),
                                                      "eager"));
        bool ok = strcmp(verdict, "ok") == 0;
        char *fp = ok ? eval_session_structure(a->ev, sn.source_path) : NULL;
        char *text = json_dumps(report, JSON_COMPACT);
        store_node_judged(a->st, node, verdict, ok && t > 0 ? t : NAN, ok && sp > 0 ? sp : NAN,
                          message, text, fp);
        a->verdicts[verdict_index(verdict)]++;
        if (ok)
            progress("node %lld: ok, %.4f ms (%.2fx eager)", (long long)node, t, sp);
        else
            progress("node %lld: %s", (long long)node, verdict);
        show_progress(a, a->rounds_done + 1, false);
        free(text);
        free(fp);
    }
    json_decref(report);
    free(dir);
    store_node_release(&sn);
    return rc;
}

/* ------------------------------------------------------------------ making nodes */

static const char *fix_kind(const char *verdict)
{
    if (!verdict)
        return "fix_runtime";
    if (!strcmp(verdict, "compile_error"))
        return "fix_compile";
    if (!strcmp(verdict, "wrong_result") || !strcmp(verdict, "rejected"))
        return "fix_wrong";
    return "fix_runtime";
}

/* Asks for a child of parent (0: a first version) of the given kind, applies the edit
 * and stores the node. Returns the node id, 0 when the reply held no usable code (a
 * recorded failed attempt), or -1 when the model cannot be asked any more (why set). */
static int64_t make_child(struct agent *a, int64_t parent, const char *kind, int attempt,
                          const char *tag, const char *edit_error, strbuf *why)
{
    prompt_vars *v = prompt_vars_new();
    task_vars(a, v);
    store_node p = { 0 };
    char *current = xstrdup("");
    int depth = 0;
    if (parent > 0 && store_node_get(a->st, parent, &p) == 0) {
        free(current);
        current = read_text(p.source_path);
        depth = p.depth + 1;
        prompt_vars_set(v, "kernel", current);
        prompt_vars_set(v, "verdict", p.verdict ? p.verdict : "");
        prompt_vars_set(v, "message", p.message ? p.message : "");
        set_num(v, "time_ms", p.time_ms, "%.4f");
        set_num(v, "speedup", p.speedup, "%.3f");
        set_num(v, "eager_ms", p.time_ms * p.speedup, "%.4f");
        strbuf hist = STRBUF_INIT;
        branch_history(a, parent, &hist);
        prompt_vars_set(v, "history", hist.buf);
        strbuf_release(&hist);
        char *digest = a->profiling_on ? store_profile_get(a->st, parent) : NULL;
        if (digest)
            prompt_vars_set(v, "profile_digest", digest);
        free(digest);
    }
    char num[32];
    snprintf(num, sizeof num, "%d", attempt);
    prompt_vars_set(v, "attempt", num);
    snprintf(num, sizeof num, "%d", a->o->fix_attempts);
    prompt_vars_set(v, "max_attempts", num);
    if (edit_error)
        prompt_vars_set(v, "edit_error", edit_error);
    strbuf query = STRBUF_INIT, notes = STRBUF_INIT;
    strbuf_addf(&query, "%s %s %s", kind, p.message ? p.message : "",
                prompt_vars_get(v, "graph") ?: "");
    if (parent <= 0) /* a first version: what the problem computes is all there is */
        strbuf_addf(&query, " %s %s", prompt_vars_get(v, "task_spec") ?: "",
                    a->problem_source);
    if (a->kb)
        kb_search(a->kb, query.buf, a->o->kb_notes, (size_t)a->o->kb_chars, &notes);
    prompt_vars_set(v, "knowledge", notes.buf);
    int64_t call_id = 0;
    char *reply = ask_model(a, kind, parent, tag, v, &call_id, why);
    int64_t node = -1;
    if (reply && (node = store_node_of_call(a->st, call_id)) > 0) {
        /* made before the resume */
    } else if (reply) {
        edit_result er;
        edit_result_init(&er);
        edit_apply(current, reply, &er);
        if (er.ok) {
            node = store_node_add(a->st, a->task, parent, depth, attempt, kind, er.source.buf,
                                  call_id);
        } else {
            node = 0;
            json_t *evj = json_pack("{s:s, s:I, s:s}", "kind", kind, "call",
                                    (json_int_t)call_id, "error", er.error.buf);
            char *ev = json_dumps(evj, JSON_COMPACT);
            json_decref(evj);
            store_event(a->st, a->task, "unusable_reply", ev);
            free(ev);
            strbuf_reset(why);
            strbuf_add(why, er.error.buf, er.error.len);
        }
        edit_result_release(&er);
    }
    free(reply);
    free(current);
    strbuf_release(&query);
    strbuf_release(&notes);
    store_node_release(&p);
    prompt_vars_free(v);
    return node;
}

/* A child and its fixes: judged, and on failure fixed up to fix_attempts times.
 * Returns the last node made (0 if none), or -1 when the model cannot be asked. */
/* Continues a child made by make_child (node, or 0 with why saying why the reply was
 * unusable): judges it and, on failure, fixes it up to fix_attempts times. Returns the
 * last node made (0 if none), or -1 when the model cannot be asked (err set). */
static int64_t grow_from(struct agent *a, int64_t parent, const char *kind, const char *tag,
                         int64_t node, strbuf *why, strbuf *err, int *fatal)
{
    for (int attempt = 1; node >= 0 && attempt <= a->o->fix_attempts; attempt++) {
        if (node == 0) { /* no usable code: ask again, saying why */
            strbuf msg = STRBUF_INIT;
            strbuf_add(&msg, why->buf, why->len);
            strbuf_reset(why);
            node = make_child(a, parent, kind, attempt, tag, msg.buf, why);
            strbuf_release(&msg);
            continue;
        }
        if ((*fatal = judge_node(a, node, err)))
            break;
        store_node sn;
        store_node_get(a->st, node, &sn);
        bool ok = sn.verdict && strcmp(sn.verdict, "ok") == 0;
        const char *fk = fix_kind(sn.verdict);
        store_node_release(&sn);
        if (ok)
            break;
        node = make_child(a, node, fk, attempt, tag, NULL, why);
    }
    if (node > 0 && !*fatal)
        *fatal = judge_node(a, node, err); /* a no-op when already judged */
    if (node < 0)
        strbuf_addf(err, "%s", why->buf);
    return node;
}

static int64_t grow(struct agent *a, int64_t parent, const char *kind, const char *tag,
                    strbuf *err, int *fatal)
{
    strbuf why = STRBUF_INIT;
    int64_t node = make_child(a, parent, kind, 0, tag, NULL, &why);
    node = grow_from(a, parent, kind, tag, node, &why, err, fatal);
    strbuf_release(&why);
    return node;
}

/* One child slot of a round: its first reply is asked for in a thread of its own. */
struct slot {
    struct agent *a;
    int64_t parent;
    const char *kind;
    char tag[64];
    int64_t node;
    strbuf why;
    pthread_t thread;
};

static void *ask_slot(void *arg)
{
    struct slot *s = arg;
    s->node = make_child(s->a, s->parent, s->kind, 0, s->tag, NULL, &s->why);
    return NULL;
}

/* Builds the round's new children in parallel, so that judging them finds them built. */
static void prebuild_slots(struct agent *a, struct slot *slots, int n)
{
    char **paths = xcalloc((size_t)n, sizeof *paths);
    int k = 0;
    for (int c = 0; c < n; c++) {
        store_node sn;
        if (slots[c].node > 0 && store_node_get(a->st, slots[c].node, &sn) == 0) {
            if (!sn.verdict && sn.source_path)
                paths[k++] = xstrdup(sn.source_path);
            store_node_release(&sn);
        }
    }
    strbuf err = STRBUF_INIT;
    if (k > 1 && eval_session_prebuild(a->ev, (const char *const *)paths, k, &err))
        warning("parallel builds failed (%s); each kernel is built when judged", err.buf);
    strbuf_release(&err);
    for (int i = 0; i < k; i++)
        free(paths[i]);
    free(paths);
}

/* A round's children: the model is asked for all of them at once (the calls are I/O),
 * then each is judged and fixed in turn (the GPU judges one thing at a time). */
static int grow_round(struct agent *a, int round, const int64_t *parents, size_t np, strbuf *err)
{
    int n = a->o->children, fatal = 0;
    struct slot *slots = xcalloc((size_t)n, sizeof *slots);
    for (int c = 0; c < n; c++) {
        struct slot *s = &slots[c];
        s->a = a;
        s->parent = parents[(c == n - 1 && np > 1) ? 1 : 0];
        s->kind = c % 2 ? "tune" : "optimise";
        snprintf(s->tag, sizeof s->tag, "in round %d, child %d of %d", round, c + 1, n);
        strbuf_init(&s->why);
        if (pthread_create(&s->thread, NULL, ask_slot, s) != 0)
            ask_slot(s), s->thread = 0;
    }
    for (int c = 0; c < n; c++)
        if (slots[c].thread)
            pthread_join(slots[c].thread, NULL);
    prebuild_slots(a, slots, n);
    for (int c = 0; c < n && !fatal && !a->stop_reason; c++) {
        struct slot *s = &slots[c];
        int64_t made = grow_from(a, s->parent, s->kind, s->tag, s->node, &s->why, err, &fatal);
        if (made < 0 && !fatal) {
            a->stop_reason = xasprintf("budget or model: %s", err->buf);
            strbuf_reset(err);
        }
    }
    for (int c = 0; c < n; c++)
        strbuf_release(&slots[c].why);
    free(slots);
    return fatal;
}

/* ------------------------------------------------------------------ the search */

static int cmp_time(const void *x, const void *y)
{
    const store_node *a = x, *b = y;
    return (a->time_ms > b->time_ms) - (a->time_ms < b->time_ms);
}

/* The best correct nodes, fastest first (at most max), that may still grow. */
static size_t select_parents(struct agent *a, int64_t *out, size_t max, int64_t horizon)
{
    store_node *nodes = NULL;
    size_t n = 0, k = 0;
    if (store_nodes(a->st, a->task, &nodes, &n) < 0)
        return 0;
    store_node *ok = xcalloc(n + 1, sizeof *ok);
    size_t nok = 0;
    for (size_t i = 0; i < n; i++)
        if (nodes[i].id <= horizon && nodes[i].verdict && !strcmp(nodes[i].verdict, "ok") &&
            isfinite(nodes[i].time_ms) && nodes[i].depth < a->o->max_depth)
            ok[nok++] = nodes[i];
    qsort(ok, nok, sizeof *ok, cmp_time);
    for (size_t i = 0; i < nok && k < max; i++)
        out[k++] = ok[i].id;
    free(ok);
    store_nodes_free(nodes, n);
    return k;
}

static int64_t max_node_id(struct agent *a)
{
    store_node *nodes = NULL;
    size_t n = 0;
    store_nodes(a->st, a->task, &nodes, &n);
    int64_t id = n ? nodes[n - 1].id : 0;
    store_nodes_free(nodes, n);
    return id;
}

/* The last node id when round r began: stored the first time, read back on a resume,
 * so that a replayed round sees the tree it saw then and asks the same questions. */
static int64_t round_horizon(struct agent *a, int round, bool create)
{
    char key[32];
    snprintf(key, sizeof key, "horizon.%d", round);
    char *v = store_task_get(a->st, a->task, key);
    int64_t h = v ? strtoll(v, NULL, 10) : -1;
    free(v);
    if (h < 0 && create) {
        h = max_node_id(a);
        char buf[32];
        snprintf(buf, sizeof buf, "%lld", (long long)h);
        store_task_set(a->st, a->task, key, buf);
    }
    return h;
}

/* The fastest correct node among those with id <= horizon, or 0. */
static int64_t best_within(struct agent *a, int64_t horizon)
{
    int64_t parents[1];
    return select_parents(a, parents, 1, horizon) ? parents[0] : 0;
}

static double node_time(struct agent *a, int64_t id)
{
    store_node sn;
    if (id <= 0 || store_node_get(a->st, id, &sn) < 0)
        return NAN;
    double t = sn.time_ms;
    store_node_release(&sn);
    return t;
}

/* Delayed profiling: on once the best's structure has held for stable_steps accepted
 * steps (or at profile_depth); then the best gets a digest if it has none. */
static void maybe_profile(struct agent *a, int64_t best)
{
    if (a->o->profile == PROFILE_NEVER || best <= 0)
        return;
    store_node b;
    if (store_node_get(a->st, best, &b) < 0)
        return;
    if (!a->profiling_on && a->o->profile == PROFILE_DELAYED) {
        int same = 0;
        for (int64_t id = b.parent_id; id > 0 && b.fingerprint;) {
            store_node p;
            if (store_node_get(a->st, id, &p) < 0)
                break;
            /* accepted steps only: the failed attempts of a fix chain do not count */
            bool accepted = p.verdict && !strcmp(p.verdict, "ok");
            bool eq = p.fingerprint && !strcmp(p.fingerprint, b.fingerprint);
            id = p.parent_id;
            store_node_release(&p);
            if (!accepted)
                continue;
            if (!eq)
                break;
            same++;
        }
        if (same >= a->o->stable_steps || (a->o->profile_depth && b.depth >= a->o->profile_depth)) {
            a->profiling_on = true;
            store_event(a->st, a->task, "profiling_on", "{}");
            progress("structure has settled: profiler digests join the prompts from now on");
        }
    }
    if (a->o->profile == PROFILE_ALWAYS)
        a->profiling_on = true;
    char *have = store_profile_get(a->st, best);
    if (a->profiling_on && !have) {
        eval_opts eo = a->o->eval;
        eo.kernel_path = b.source_path;
        eo.work_dir = NULL;
        profile_opts po;
        profile_opts_init(&po);
        json_t *report = NULL;
        strbuf details = STRBUF_INIT, err = STRBUF_INIT;
        progress("profiling node %lld", (long long)best);
        if (eval_profile(&eo, &po, &report, &details, &err) == 0) {
            json_t *prof = json_object_get(report, "profile");
            const char *digest = json_string_value(json_object_get(prof, "digest"));
            if (digest) {
                char *js = json_dumps(json_object_get(prof, "kernels"), JSON_COMPACT);
                store_profile_add(a->st, best, digest, js);
                free(js);
            }
        } else {
            warning("profiling node %lld failed: %s", (long long)best, err.buf);
        }
        json_decref(report);
        strbuf_release(&details);
        strbuf_release(&err);
    }
    free(have);
    store_node_release(&b);
}

static bool should_stop(struct agent *a, int round, int64_t best, double before)
{
    double t = node_time(a, best);
    strbuf why = STRBUF_INIT;
    if (round >= a->o->max_rounds)
        strbuf_addf(&why, "rounds: %d rounds done", round);
    else if (isfinite(t) && a->sol_ms > 0 && a->sol_ms / t >= a->o->sol_stop)
        strbuf_addf(&why, "speed of light: %.4f ms is %.0f%% of the %.4f ms bound", t,
                    100 * a->sol_ms / t, a->sol_ms);
    else if (a->stale_rounds >= a->o->plateau_rounds)
        strbuf_addf(&why, "plateau: no gain over %.0f%% in %d rounds", 100 * a->o->plateau_gain,
                    a->stale_rounds);
    (void)before;
    if (why.len) {
        a->stop_reason = strbuf_detach(&why);
        return true;
    }
    strbuf_release(&why);
    return false;
}

/* ------------------------------------------------------------------ built-in recipes */

/* The stored node holding exactly this source (a recipe variant made before a resume). */
static int64_t node_with_source(struct agent *a, const char *source)
{
    char sha[65];
    sha256_hex(source, strlen(source), sha);
    store_node *nodes = NULL;
    size_t n = 0;
    int64_t found = 0;
    store_nodes(a->st, a->task, &nodes, &n);
    for (size_t i = 0; i < n && !found; i++)
        if (nodes[i].source_sha256 && !strcmp(nodes[i].source_sha256, sha))
            found = nodes[i].id;
    store_nodes_free(nodes, n);
    return found;
}

/* Variant i of plan as a node of the run (the stored one when a resumed run made it
 * before): its id, with its source's path in *path; 0 when it could not be generated. */
static int64_t recipe_node(struct agent *a, const recipe_plan *plan, const recipe_params *k, int i, char **path)
{
    strbuf cu = STRBUF_INIT, gerr = STRBUF_INIT;
    int64_t id = 0;
    *path = NULL;
    if (recipe_generate(plan, k, recipe_dir(), &cu, &gerr) == 0) {
        id = node_with_source(a, cu.buf);
        if (!id)
            id = store_node_add(a->st, a->task, 0, 0, 0, "recipe", cu.buf, 0);
        store_node sn;
        if (id > 0 && store_node_get(a->st, id, &sn) == 0) {
            *path = xstrdup(sn.source_path);
            store_node_release(&sn);
        } else {
            id = 0;
        }
    } else {
        warning("recipe variant %d not generated: %s", i, gerr.buf);
    }
    strbuf_release(&cu);
    strbuf_release(&gerr);
    return id;
}

static bool node_ok(struct agent *a, int64_t node)
{
    store_node sn;
    if (store_node_get(a->st, node, &sn) < 0)
        return false;
    bool ok = sn.verdict && !strcmp(sn.verdict, "ok");
    store_node_release(&sn);
    return ok;
}

/*
 * The built-in proposer: recognise the task, generate every variant worth trying (the
 * first --variants N of them), build them in parallel and judge each (autotuning through
 * the same evaluation as any candidate). A variant judged anything but correct (a plain
 * TF32 product that failed the tolerance, say) gives its place to the next variant of the
 * list, built when judged, up to N such replacements. Returns 0, or an EXIT_* code;
 * *covered says whether the task was recognised (why, when not).
 */
static int plant_recipes(struct agent *a, bool *covered, strbuf *why, strbuf *err)
{
    recipe_plan plan;
    recipe_plan_init(&plan);
    *covered = recipe_recognise(a->spec, &plan, why) == 0;
    if (!*covered) {
        recipe_plan_release(&plan);
        return 0;
    }
    recipe_hw hw;
    recipe_hw_from_gpu(&a->gpu, &hw);
    recipe_params params[RECIPE_MAX_VARIANTS];
    int all = recipe_variants(&plan, &hw, params, RECIPE_MAX_VARIANTS), nv = all;
    if (a->o->recipe_variants > 0 && nv > a->o->recipe_variants)
        nv = a->o->recipe_variants; /* the first are the best guesses */
    int64_t *nodes = xcalloc((size_t)nv + 1, sizeof *nodes);
    char **paths = xcalloc((size_t)nv + 1, sizeof *paths);
    int k = 0, fatal = 0;
    for (int i = 0; i < nv; i++)
        if ((nodes[k] = recipe_node(a, &plan, &params[i], i, &paths[k])) > 0)
            k++;
    strbuf desc = STRBUF_INIT;
    recipe_summary(&plan, &desc);
    progress("built-in recipe: %s; %d variants", desc.buf, k);
    strbuf_release(&desc);
    strbuf berr = STRBUF_INIT;
    if (k > 1 && eval_session_prebuild(a->ev, (const char *const *)paths, k, &berr))
        warning("parallel builds failed (%s); each variant is built when judged", berr.buf);
    strbuf_release(&berr);
    int next = nv, spare = nv < all ? nv : 0; /* replacements left */
    for (int i = 0; i < k && !fatal; i++) {
        fatal = judge_node(a, nodes[i], err);
        for (int64_t node = nodes[i]; !fatal && spare > 0 && next < all && !node_ok(a, node);) {
            char *path;
            spare--;
            progress("node %lld not correct: judging variant %d of the list in its place", (long long)node, next);
            node = recipe_node(a, &plan, &params[next], next, &path);
            next++;
            free(path);
            if (node > 0)
                fatal = judge_node(a, node, err);
        }
    }
    for (int i = 0; i < k; i++)
        free(paths[i]);
    free(paths);
    free(nodes);
    recipe_plan_release(&plan);
    return fatal;
}

/* The first node of a fresh run: the seed kernel, or a first version (with fixes). */
static int plant_root(struct agent *a, strbuf *err)
{
    int fatal = 0;
    bool builtin = a->o->seed_kernel && !strcmp(a->o->seed_kernel, "builtin");
    if (a->o->recipes_only || builtin) {
        bool covered = false;
        strbuf why = STRBUF_INIT;
        fatal = plant_recipes(a, &covered, &why, err);
        if (!fatal && a->o->recipes_only) {
            int64_t best = store_best_node(a->st, a->task);
            a->stop_reason = !covered ? xasprintf("no model configured, and the built-in "
                                                  "recipes do not cover this task (%s)", why.buf)
                             : best > 0 ? xstrdup("recipes: the best built-in variant (no model "
                                                  "configured; give --provider to search further)")
                                        : xstrdup("recipes: no variant was correct");
        } else if (!fatal && !covered) {
            progress("the built-in recipes do not cover this task (%s): asking for a first "
                     "version instead", why.buf);
            builtin = false;
        }
        strbuf_release(&why);
        if (fatal || a->o->recipes_only || store_best_node(a->st, a->task) > 0)
            return fatal;
    }
    if (a->o->seed_kernel && !builtin) {
        int64_t node = 0;
        store_node *nodes = NULL;
        size_t n = 0;
        store_nodes(a->st, a->task, &nodes, &n);
        for (size_t i = 0; i < n && !node; i++)
            if (!strcmp(nodes[i].kind, "seed"))
                node = nodes[i].id;
        store_nodes_free(nodes, n);
        if (!node) {
            char *src = read_text(a->o->seed_kernel);
            node = store_node_add(a->st, a->task, 0, 0, 0, "seed", src, 0);
            free(src);
        }
        return node > 0 ? judge_node(a, node, err) : EXIT_INTERNAL;
    }
    int64_t node = grow(a, 0, "first", "for the first version", err, &fatal);
    if (node < 0 && !fatal) {
        a->stop_reason = xasprintf("model: %s", err->buf);
        strbuf_reset(err);
    }
    return fatal;
}

static int search(struct agent *a, strbuf *err)
{
    store_node *nodes = NULL;
    size_t n = 0;
    store_nodes(a->st, a->task, &nodes, &n);
    int fatal = 0;
    for (size_t i = 0; i < n && !fatal; i++) /* resume: judge what was made but not judged */
        if (!nodes[i].verdict)
            fatal = judge_node(a, nodes[i].id, err);
    store_nodes_free(nodes, n);
    if (fatal)
        return fatal;
    if ((fatal = plant_root(a, err))) /* a resumed run replays its stored steps */
        return fatal;
    if (a->o->recipes_only)
        return 0;
    for (int round = 1; !a->stop_reason; round++) {
        int64_t horizon = round_horizon(a, round, true);
        int64_t best = best_within(a, horizon);
        double before = node_time(a, best);
        if (best <= 0) {
            a->stop_reason = max_node_id(a) > 0 && store_best_node(a->st, a->task) <= 0
                                 ? xstrdup("no correct kernel: the first version and its fixes failed")
                                 : xasprintf("depth: every correct node is at depth %d", a->o->max_depth);
            break;
        }
        maybe_profile(a, best);
        int64_t parents[2];
        size_t np = select_parents(a, parents, 2, horizon);
        progress("round %d: best node %lld at %.4f ms; %d children", round, (long long)best,
                 before, a->o->children);
        if ((fatal = grow_round(a, round, parents, np, err)))
            return fatal;
        int64_t next = round_horizon(a, round + 1, false);
        double after = node_time(a, best_within(a, next >= 0 ? next : max_node_id(a)));
        a->stale_rounds = (isfinite(before) && isfinite(after) &&
                           after > before * (1 - a->o->plateau_gain))
                              ? a->stale_rounds + 1 : 0;
        a->rounds_done = round;
        show_progress(a, round, true);
        if (next < 0) { /* not a replayed round */
            char ev[160];
            snprintf(ev, sizeof ev, "{\"round\":%d,\"best_before_ms\":%.6f,\"best_after_ms\":%.6f}",
                     round, before, after);
            store_event(a->st, a->task, "round", ev);
        }
        if (!a->stop_reason)
            should_stop(a, round, best_within(a, max_node_id(a)), before);
    }
    return 0;
}

/* ------------------------------------------------------------------ set-up and end */

static char *default_run_dir(const char *task_path)
{
    const char *base = strrchr(task_path, '/');
    base = base ? base + 1 : task_path;
    char stamp[32];
    time_t now = time(NULL);
    strftime(stamp, sizeof stamp, "%Y-%m-%d-%H%M%S", localtime(&now));
    char *dir = xasprintf("runs/%s-%.*s", stamp, (int)strcspn(base, "."), base);
    return dir;
}

static int open_everything(struct agent *a, strbuf *err)
{
    agent_opts *o = a->o;
    int rc = store_open(o->run_dir, !o->resume, &a->st, err);
    if (rc < 0)
        return o->resume ? EXIT_USAGE : EXIT_INTERNAL;
    o->eval.kernel_path = NULL;
    if ((rc = eval_session_open(&o->eval, &a->ev, err)))
        return rc;
    a->spec = eval_session_spec(a->ev, err);
    if (!a->spec)
        return EXIT_BAD_TASK;
    a->problem_source = read_text(o->task_path);
    char *abi = xasprintf("%s/docs/abi.md", cg_source_dir());
    a->abi_text = read_text(abi);
    free(abi);
    char sha[65];
    sha256_hex(a->problem_source, strlen(a->problem_source), sha);
    char *spec = json_dumps(a->spec, JSON_COMPACT);
    const char *base = strrchr(o->task_path, '/');
    a->task = store_task(a->st, base ? base + 1 : o->task_path, o->task_path, sha, spec);
    free(spec);
    json_t *g = eval_session_gpu(a->ev);
    int major = 9, minor = 0;
    sscanf(json_string_value(json_object_get(g, "cc")) ?: "9.0", "%d.%d", &major, &minor);
    gpu_facts_for(&a->gpu, json_string_value(json_object_get(g, "name")) ?: "GPU", major, minor,
                  (int)json_integer_value(json_object_get(g, "sms")),
                  (double)json_integer_value(json_object_get(g, "sm_clock_khz")),
                  (double)json_integer_value(json_object_get(g, "mem_clock_khz")),
                  (int)json_integer_value(json_object_get(g, "bus_width_bits")),
                  (size_t)json_integer_value(json_object_get(g, "l2_bytes")));
    double flops = json_number_value(json_object_get(a->spec, "flops"));
    double bytes = json_number_value(json_object_get(a->spec, "min_bytes"));
    a->sol_ms = gpu_sol_seconds(&a->gpu, flops, bytes, GPU_DT_FP32) * 1e3;
    a->sol_bound = bytes / gpu_sol_bandwidth(&a->gpu) >= flops / gpu_peak_flops(&a->gpu, GPU_DT_FP32, true)
                       ? "memory" : "compute";
    llm_budget_init(&a->task_budget, &o->task_limits);
    a->budget_up = true;
    if (!o->recipes_only) {
        a->llm = llm_client_new(&o->llm, err);
        if (!a->llm)
            return EXIT_LLM;
    }
    strbuf kerr = STRBUF_INIT;
    if (kb_load(NULL, &a->kb, &kerr) < 0) {
        warning("no knowledge notes: %s", kerr.buf);
        a->kb = NULL;
    }
    strbuf_release(&kerr);
    return 0;
}

/* A final report (eval_session_final) of the node, kept from an earlier finish: a run
 * resumed after it ended is not timed again. NULL when there is none. */
static json_t *stored_final(struct agent *a, int64_t node)
{
    char *path = store_node_latest_report(a->st, node);
    json_t *r = path ? json_load_file(path, 0, NULL) : NULL;
    free(path);
    const char *timing = json_string_value(json_object_get(r, "timing"));
    const char *v = json_string_value(json_object_get(r, "verdict"));
    if (timing && !strcmp(timing, "interleaved") && v && !strcmp(v, "ok"))
        return r;
    json_decref(r);
    return NULL;
}

/*
 * The final numbers: the best kernel timed once more inside the reference process,
 * interleaved with PyTorch on fresh inputs. Their report becomes the node's latest
 * judgment (eval.<k>.json), which is what `cutegen report` shows. When it fails, the
 * node keeps the search's numbers; the failed report is attached as final.json and the
 * reason recorded as an event.
 */
static void final_timing(struct agent *a, int64_t node, const store_node *b)
{
    json_t *report = stored_final(a, node);
    strbuf line = STRBUF_INIT, err = STRBUF_INIT;
    if (report) {
        eval_final_describe(report, &line);
        printf("verified: %s (stored)\n", line.buf);
        goto out;
    }
    eval_final_opts fo = a->o->eval.final_opts;
    char *dir = xasprintf("%s/artifacts/nodes/%lld", store_dir(a->st), (long long)node);
    fo.dir = dir;
    progress("final timing of node %lld", (long long)node);
    int rc = eval_session_final(a->ev, b->source_path, &fo, &report, &err);
    free(dir);
    const char *v = json_string_value(json_object_get(report, "verdict"));
    char *text = json_dumps(report, JSON_COMPACT);
    if (!rc && v && !strcmp(v, "ok")) {
        double t = json_number_value(json_object_get(json_object_get(report, "kernel_time"),
                                                     "median_ms"));
        json_t *sp = json_object_get(json_object_get(report, "speedup"), "eager");
        double s = json_is_number(sp) ? json_number_value(sp) : NAN;
        const char *m = json_string_value(json_object_get(report, "message"));
        if (store_node_judged(a->st, node, "ok", t > 0 ? t : NAN, s > 0 ? s : NAN, m, text,
                              b->fingerprint) < 0)
            warning("cannot record the final timing of node %lld: %s", (long long)node,
                    store_error(a->st));
        eval_final_describe(report, &line);
        json_t *ev = json_pack("{s:b, s:I, s:s}", "ok", 1, "node", (json_int_t)node, "line",
                               line.buf);
        char *evs = json_dumps(ev, JSON_COMPACT);
        store_event(a->st, a->task, "final", evs);
        free(evs);
        json_decref(ev);
        printf("verified: %s\n", line.buf);
    } else {
        if (rc)
            strbuf_add(&line, err.buf, err.len);
        else
            strbuf_addf(&line, "%s: %s", v ? v : "?",
                        json_string_value(json_object_get(report, "message")) ?: "");
        if (text)
            store_node_attach(a->st, node, "final.json", text, strlen(text));
        json_t *ev = json_pack("{s:b, s:I, s:s, s:s?}", "ok", 0, "node", (json_int_t)node,
                               "why", line.buf, "verdict", v);
        char *evs = json_dumps(ev, JSON_COMPACT);
        store_event(a->st, a->task, "final", evs);
        free(evs);
        json_decref(ev);
        /* the first line, without the log tail a process that died leaves */
        size_t first = strcspn(line.buf, "\n");
        const char *tail = strstr(line.buf, "; its last output:");
        if (tail && (size_t)(tail - line.buf) < first)
            first = (size_t)(tail - line.buf);
        printf("verified: not done: the final timing failed (%.*s); the numbers above stay "
               "the search's (kernel and PyTorch timed in separate processes)\n", (int)first,
               line.buf);
    }
    free(text);
out:
    json_decref(report);
    strbuf_release(&line);
    strbuf_release(&err);
}

/* Says so when the best kernel (its latest judgment: the final timing's when there was
 * one) is slower than PyTorch eager: the reference is then the faster program. */
static void slower_note(struct agent *a, int64_t best, int64_t calls)
{
    store_node now;
    if (store_node_get(a->st, best, &now) != 0)
        return;
    if (now.speedup > 0 && now.speedup < 1.0)
        printf("note:     the best kernel is slower than PyTorch eager (%.3fx): keep the reference%s\n",
               now.speedup, calls == 0 ? ", or give --provider to search further" : "");
    store_node_release(&now);
}

/* The best kernel to run_dir/best.cu, the stop reason and totals to the store, and a
 * summary on stdout. */
static void finish(struct agent *a)
{
    int64_t best = store_best_node(a->st, a->task);
    store_task_set(a->st, a->task, "stop_reason", a->stop_reason ? a->stop_reason : "unknown");
    store_meta_set(a->st, "status", "done");
    printf("run:      %s\n", store_dir(a->st));
    printf("stopped:  %s\n", a->stop_reason ? a->stop_reason : "unknown");
    printf("verdicts: ok %d, compile_error %d, runtime_error %d, wrong_result %d, timeout %d, "
           "rejected %d\n", a->verdicts[0], a->verdicts[1], a->verdicts[2], a->verdicts[3],
           a->verdicts[4], a->verdicts[5]);
    double cost = 0;
    int64_t calls = 0, tin = 0, tout = 0;
    store_totals(a->st, a->task, &cost, &calls, &tin, &tout);
    printf("model:    %lld calls, %lld tokens in, %lld out, $%.4f\n", (long long)calls,
           (long long)tin, (long long)tout, cost);
    if (best <= 0) {
        printf("best:     none correct\n");
        write_status(a, "done: none correct", 0, 0, calls, cost, a->stop_reason ?: "unknown");
        return;
    }
    store_node b;
    store_node_get(a->st, best, &b);
    char *src = read_text(b.source_path);
    char *out = xasprintf("%s/best.cu", store_dir(a->st));
    write_file_atomic(out, src, strlen(src));
    char id[32];
    snprintf(id, sizeof id, "%lld", (long long)best);
    store_task_set(a->st, a->task, "best_node", id);
    printf("best:     node %lld (%s, depth %d): %.4f ms, %.3fx over eager", (long long)best, b.kind,
           b.depth, b.time_ms, b.speedup);
    if (a->sol_ms > 0) /* small problems' speed of light is microseconds: in us, not "0.0000 ms" */
        printf(", %.*f%% of the %.4g %s speed of light", 100 * a->sol_ms / b.time_ms < 1 ? 2 : 1,
               100 * a->sol_ms / b.time_ms, a->sol_ms < 0.1 ? a->sol_ms * 1e3 : a->sol_ms,
               a->sol_ms < 0.1 ? "us" : "ms");
    else
        printf(" (no speed of light: the GPU's peaks or the problem's bytes and flops are not known)");
    printf("\nkernel:   %s\n", out);
    fflush(stdout);
    if (a->o->eval.final)
        final_timing(a, best, &b);
    slower_note(a, best, calls);
    write_status(a, "done", b.time_ms, b.speedup, calls, cost, a->stop_reason ?: "unknown");
    free(out);
    free(src);
    store_node_release(&b);
}

int agent_run(agent_opts *o, strbuf *err)
{
    struct agent a;
    memset(&a, 0, sizeof a);
    a.o = o;
    a.started = now_seconds();
    a.live = !cg_quiet && isatty(2);
    if (a.live)
        cg_quiet = true; /* the status line replaces the evaluation's own progress lines */
    char *dir = NULL;
    if (!o->run_dir)
        o->run_dir = dir = default_run_dir(o->task_path);
    int rc = open_everything(&a, err);
    if (!rc)
        rc = search(&a, err);
    if (a.live)
        fputc('\n', stderr);
    if (!rc)
        finish(&a);
    if (a.llm)
        llm_client_free(a.llm);
    if (a.budget_up)
        llm_budget_release(&a.task_budget);
    kb_free(a.kb);
    eval_session_close(a.ev);
    if (a.st)
        store_close(a.st);
    free(a.problem_source);
    free(a.abi_text);
    free(a.stop_reason);
    free(dir);
    return rc;
}
