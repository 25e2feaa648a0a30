/*
 * report: loads finished runs through the store and writes what they achieved as
 * Markdown, CSV, JSON (KernelBench's analysis shape) or one HTML page with inline SVG
 * plots. docs/report.md defines the numbers; report.h is the API.
 *
 * DESIGN. Loading is the only part that touches the store; a problem is one flat row
 * (report_problem) and everything else is a function of the rows, so the statistics are
 * tested on hand-made rows (tests/unit/test_report.c). The plots are drawn by hand: a
 * frame with axes, bars, a step curve, a scatter and a tree, each a few dozen lines of
 * SVG text; no script, no external file, so the page can be mailed or archived.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "store.h"
#include "util.h"

const double report_fast_p_values[REPORT_N_FAST] = { 0.0, 1.0, 1.5, 2.0 };

static const char *const verdict_names[] = { "ok", "compile_error", "runtime_error", "wrong_result",
                                             "timeout", "rejected" };

/* ================================================================ statistics */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double report_fast_p(const double *speedup, size_t n, double p)
{
    if (!n)
        return NAN;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(speedup[i]) && speedup[i] > p)
            k++;
    return (double)k / (double)n;
}

void report_stats_of(const double *speedup, size_t n, report_stats *out)
{
    memset(out, 0, sizeof *out);
    out->n = n;
    double *ok = xmalloc((n ? n : 1) * sizeof *ok);
    double log_all = 0, log_ok = 0, sum = 0;
    for (size_t i = 0; i < n; i++) {
        if (isnan(speedup[i]) || speedup[i] <= 0) {
            continue; /* a failure: 1.0x, log 0 */
        }
        ok[out->correct++] = speedup[i];
        log_all += log(speedup[i]);
        log_ok += log(speedup[i]);
        sum += speedup[i];
    }
    out->correct_rate = n ? (double)out->correct / (double)n : NAN;
    for (int k = 0; k < REPORT_N_FAST; k++)
        out->fast[k] = report_fast_p(speedup, n, report_fast_p_values[k]);
    out->geo_all = n ? exp(log_all / (double)n) : NAN;
    if (out->correct) {
        out->geo_correct = exp(log_ok / (double)out->correct);
        out->mean = sum / (double)out->correct;
        qsort(ok, out->correct, sizeof *ok, cmp_double);
        size_t m = out->correct / 2;
        out->median = out->correct % 2 ? ok[m] : (ok[m - 1] + ok[m]) / 2;
    } else {
        out->geo_correct = out->mean = out->median = NAN;
    }
    free(ok);
}

/* ================================================================ categories */

enum cat { CAT_NONE = -1, CAT_LAYOUT = -2, CAT_MATMUL = 0, CAT_CONV, CAT_NORM, CAT_POOL, CAT_LOSS,
           CAT_REDUCTION, CAT_ELEMENTWISE, CAT_N };
static const char *const cat_names[CAT_N] = { "matmul", "conv", "norm", "pooling", "loss", "reduction",
                                              "elementwise" };

static bool word_in(const char *w, const char *const *list)
{
    for (; *list; list++)
        if (!strcmp(w, *list))
            return true;
    return false;
}

/* The category of one operator, by its last dotted name component (lowercase). */
static enum cat op_category(const char *target)
{
    static const char *const matmul[] = { "matmul", "mm", "bmm", "linear", "addmm", "baddbmm", "einsum",
                                          "tensordot", "mv", "dot", "bilinear", "matrix_power",
                                          "scaled_dot_product_attention", "multiheadattention",
                                          "__matmul__", "matmul_", NULL };
    static const char *const norm[] = { "layer_norm", "batch_norm", "group_norm", "instance_norm",
                                        "rms_norm", "normalize", "norm", "local_response_norm",
                                        "frobenius_norm", NULL };
    static const char *const red[] = { "sum", "mean", "max", "min", "amax", "amin", "argmax", "argmin",
                                       "prod", "cumsum", "cumprod", "cummax", "cummin", "softmax",
                                       "log_softmax", "softmin", "logsumexp", "var", "std", "all",
                                       "any", "logcumsumexp", "var_mean", "std_mean", NULL };
    static const char *const layout[] = { "view", "reshape", "flatten", "unsqueeze", "squeeze", "permute",
                                          "transpose", "t", "contiguous", "size", "getattr", "getitem",
                                          "expand", "expand_as", "chunk", "split", "to", "float", "type",
                                          "identity", "dropout", "unflatten", "view_as", "flatten_",
                                          "narrow", "movedim", "dim", "numel", NULL };
    char low[96];
    const char *dot = strrchr(target, '.');
    const char *w = dot ? dot + 1 : target;
    size_t i = 0;
    for (; w[i] && i < sizeof low - 1; i++)
        low[i] = (char)(w[i] >= 'A' && w[i] <= 'Z' ? w[i] + 32 : w[i]);
    low[i] = 0;
    if (strstr(low, "loss") || word_in(low, (const char *const[]){ "cross_entropy", "nll", "kl_div",
                                        "binary_cross_entropy", "binary_cross_entropy_with_logits",
                                        "hinge_embedding", "cosine_embedding", "margin_ranking",
                                        "triplet_margin", "smooth_l1", "huber", NULL }))
        return CAT_LOSS;
    if (strstr(low, "conv"))
        return CAT_CONV;
    if (strstr(low, "pool"))
        return CAT_POOL;
    if (strstr(low, "norm") && strcmp(low, "normal_"))
        return CAT_NORM;
    if (word_in(low, matmul) || !strcmp(low, "linear") || strstr(low, "attention") ||
        !strcmp(low, "lstm") || !strcmp(low, "gru") || !strcmp(low, "rnn"))
        return CAT_MATMUL;
    if (word_in(low, norm))
        return CAT_NORM;
    if (word_in(low, red))
        return CAT_REDUCTION;
    if (word_in(low, layout))
        return CAT_LAYOUT;
    return CAT_ELEMENTWISE;
}

/* The categories a KernelBench-style name mentions, as a bit set. */
static unsigned name_categories(const char *name)
{
    char low[256];
    size_t n = 0;
    for (const char *p = name; *p && *p != '.' && n < sizeof low - 2; p++) {
        char c = *p;
        if (c >= 'A' && c <= 'Z')
            c = (char)(c + 32);
        low[n++] = ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) ? c : '_';
    }
    low[n] = 0;
    unsigned set = 0;
    /* substrings, for words that come glued ("LayerNorm", "MaxPool2d", "MSELoss") */
    static const struct { const char *s; enum cat c; } subs[] = {
        { "loss", CAT_LOSS }, { "crossentropy", CAT_LOSS }, { "cross_entropy", CAT_LOSS },
        { "conv", CAT_CONV }, { "pool", CAT_POOL }, { "norm", CAT_NORM },
        { "matmul", CAT_MATMUL }, { "gemm", CAT_MATMUL }, { "matrix_mult", CAT_MATMUL },
        { "matrix_vector", CAT_MATMUL }, { "attention", CAT_MATMUL }, { "softmax", CAT_REDUCTION },
        { "reduction", CAT_REDUCTION }, { "cumsum", CAT_REDUCTION }, { "cumprod", CAT_REDUCTION },
        { "argmax", CAT_REDUCTION }, { "argmin", CAT_REDUCTION }, { "scan", CAT_REDUCTION },
        { "relu", CAT_ELEMENTWISE }, { "gelu", CAT_ELEMENTWISE }, { "sigmoid", CAT_ELEMENTWISE },
        { "tanh", CAT_ELEMENTWISE }, { "swish", CAT_ELEMENTWISE }, { "softplus", CAT_ELEMENTWISE },
        { "softsign", CAT_ELEMENTWISE }, { "elu", CAT_ELEMENTWISE }, { "mish", CAT_ELEMENTWISE },
        { "clamp", CAT_ELEMENTWISE }, { "biasadd", CAT_ELEMENTWISE }, { "scaling", CAT_ELEMENTWISE },
        { "hardtanh", CAT_ELEMENTWISE }, { "hardswish", CAT_ELEMENTWISE }, { "dropout", CAT_ELEMENTWISE },
    };
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++)
        if (strstr(low, subs[i].s))
            set |= 1u << subs[i].c;
    /* whole words, for short ones */
    static const struct { const char *w; enum cat c; } words[] = {
        { "sum", CAT_REDUCTION }, { "mean", CAT_REDUCTION }, { "max", CAT_REDUCTION },
        { "min", CAT_REDUCTION }, { "prod", CAT_REDUCTION }, { "product", CAT_REDUCTION },
        { "linear", CAT_MATMUL }, { "bmm", CAT_MATMUL }, { "mse", CAT_LOSS }, { "kldiv", CAT_LOSS },
        { "add", CAT_ELEMENTWISE }, { "multiply", CAT_ELEMENTWISE }, { "subtract", CAT_ELEMENTWISE },
        { "divide", CAT_ELEMENTWISE }, { "scale", CAT_ELEMENTWISE }, { "exp", CAT_ELEMENTWISE },
    };
    char *save = NULL;
    for (char *w = strtok_r(low, "_", &save); w; w = strtok_r(NULL, "_", &save))
        for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
            if (!strcmp(w, words[i].w))
                set |= 1u << words[i].c;
    /* "Matmul_with_..." names the matmul; "max" in "MaxPool" was caught as pool already */
    if (set & (1u << CAT_POOL))
        set &= ~(1u << CAT_REDUCTION);
    if (set & (1u << CAT_NORM))
        set &= ~(1u << CAT_REDUCTION);
    return set;
}

static int popcount(unsigned x)
{
    int n = 0;
    for (; x; x &= x - 1)
        n++;
    return n;
}

static int lowest_bit(unsigned x)
{
    for (int i = 0; i < 32; i++)
        if (x & (1u << i))
            return i;
    return -1;
}

const char *report_category(const char *name, json_t *graph, int level)
{
    unsigned named = name ? name_categories(name) : 0;
    unsigned seen = 0;
    int ops = 0;
    if (json_is_array(graph)) {
        size_t i;
        json_t *node;
        json_array_foreach(graph, i, node) {
            const char *op = json_string_value(json_object_get(node, "op"));
            if (!op || (strcmp(op, "call_function") && strcmp(op, "call_method") && strcmp(op, "call_module")))
                continue;
            const char *t = !strcmp(op, "call_module") ? json_string_value(json_object_get(node, "module"))
                                                      : json_string_value(json_object_get(node, "target"));
            enum cat c = op_category(t ? t : "");
            if (c < 0)
                continue;
            seen |= 1u << c;
            ops++;
        }
    }
    if (seen) {
        if (popcount(seen) == 1)
            return cat_names[lowest_bit(seen)];
        /* Mixed. A hand-written norm or softmax (reductions and elementwise ops) that its
         * name calls one thing is that thing, unless the graph has another heavy op. */
        unsigned heavy = seen & ~((1u << CAT_ELEMENTWISE) | (1u << CAT_REDUCTION));
        if (popcount(named) == 1 && level < 2) {
            int c = lowest_bit(named);
            if (!heavy || heavy == (1u << c))
                return cat_names[c];
        }
        return "fused";
    }
    (void)ops;
    if (popcount(named) == 1 && level < 2)
        return cat_names[lowest_bit(named)];
    if (popcount(named) > 1 || level >= 2)
        return "fused";
    return popcount(named) == 1 ? cat_names[lowest_bit(named)] : "other";
}

int report_level_of(const char *path)
{
    if (!path)
        return 0;
    const char *p = path;
    int level = 0;
    while ((p = strstr(p, "level"))) {
        p += 5;
        if (*p == '_' || *p == '-')
            p++;
        if (*p >= '1' && *p <= '9')
            level = (int)strtol(p, NULL, 10);
    }
    return level;
}

/* ================================================================ loading */

void report_init(report *r)
{
    memset(r, 0, sizeof *r);
    strbuf_init(&r->warnings);
}

static void problem_release(report_problem *p)
{
    free(p->name);
    free(p->run_dir);
    free(p->problem_path);
    free(p->stop_reason);
    free(p->gpu);
    for (size_t i = 0; i < p->n_nodes; i++) {
        free(p->nodes[i].params);
        free(p->nodes[i].message);
    }
    free(p->nodes);
}

/* The length of s's first n bytes cut to at most max without cutting a UTF-8 sequence,
 * and a copy of such a prefix (JSON strings must be valid UTF-8: jansson refuses the rest). */
static size_t utf8_cut(const char *s, size_t n, size_t max)
{
    if (n <= max)
        return n;
    n = max;
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
        n--; /* s[n] continues a sequence: cut before the sequence's first byte */
    return n;
}

static char *utf8_prefix(const char *s, size_t max)
{
    return xstrndup(s, utf8_cut(s, strlen(s), max));
}

/* A generated recipe kernel's variant, from its "// Parameters: ..." header line (the
 * built-in proposer writes it second); NULL for any other source. */
static char *recipe_params_of(const char *source_path)
{
    FILE *f = source_path ? fopen(source_path, "r") : NULL;
    if (!f)
        return NULL;
    char line[512];
    char *out = NULL;
    for (int i = 0; i < 3 && !out && fgets(line, sizeof line, f); i++)
        if (!strncmp(line, "// Parameters: ", 15)) {
            line[strcspn(line, "\n")] = '\0';
            out = xstrdup(line + 15);
        }
    fclose(f);
    return out;
}

void report_release(report *r)
{
    for (size_t i = 0; i < r->n; i++)
        problem_release(&r->p[i]);
    free(r->p);
    for (size_t i = 0; i < r->n_runs; i++)
        free(r->runs[i]);
    free(r->runs);
    strbuf_release(&r->warnings);
    memset(r, 0, sizeof *r);
}

static double num(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static void read_timing(json_t *o, report_timing *t)
{
    t->mean = num(o, "mean_ms");
    t->median = num(o, "median_ms");
    t->std = num(o, "std_ms");
    t->min = num(o, "min_ms");
    t->max = num(o, "max_ms");
    double n = num(o, "n");
    t->n = isnan(n) ? 0 : (int)n;
}

static void no_timing(report_timing *t)
{
    t->mean = t->median = t->std = t->min = t->max = NAN;
    t->n = 0;
}

static json_t *load_json(const char *path)
{
    if (!path)
        return NULL;
    return json_load_file(path, 0, NULL);
}

/* The eval report of the best node: its latest judgment if that one is ok, else the first. */
static json_t *best_report(store *s, int64_t node)
{
    char *path = store_node_latest_report(s, node);
    json_t *j = load_json(path);
    free(path);
    const char *v = json_string_value(json_object_get(j, "verdict"));
    if (j && v && !strcmp(v, "ok"))
        return j;
    json_decref(j);
    path = store_node_artifact(s, node, "eval.json");
    j = load_json(path);
    free(path);
    return j;
}

static void load_problem(store *s, int64_t task, const char *run_dir, report_problem *p, strbuf *warn)
{
    memset(p, 0, sizeof *p);
    p->name = store_task_get(s, task, "name");
    if (!p->name)
        p->name = xasprintf("task-%lld", (long long)task);
    p->run_dir = xstrdup(run_dir);
    p->problem_path = store_task_get(s, task, "problem_path");
    char *lv = store_task_get(s, task, "level");
    p->level = lv ? atoi(lv) : report_level_of(p->problem_path);
    if (!p->level)
        p->level = report_level_of(p->name);
    free(lv);
    p->problem_id = (p->name[0] >= '0' && p->name[0] <= '9') ? atoi(p->name) : 0;
    char *spec_text = store_task_get(s, task, "spec_json");
    json_t *spec = spec_text ? json_loads(spec_text, 0, NULL) : NULL;
    free(spec_text);
    p->category = report_category(p->name, json_object_get(spec, "graph"), p->level);
    json_decref(spec);

    store_node *nodes = NULL;
    size_t n = 0;
    store_nodes(s, task, &nodes, &n);
    p->nodes = xcalloc(n ? n : 1, sizeof *p->nodes);
    p->n_nodes = n;
    for (size_t i = 0; i < n; i++) {
        report_node *rn = &p->nodes[i];
        rn->id = nodes[i].id;
        rn->parent = nodes[i].parent_id;
        rn->depth = nodes[i].depth;
        snprintf(rn->kind, sizeof rn->kind, "%s", nodes[i].kind ? nodes[i].kind : "");
        snprintf(rn->verdict, sizeof rn->verdict, "%s", nodes[i].verdict ? nodes[i].verdict : "");
        rn->time_ms = nodes[i].time_ms;
        if (nodes[i].kind && !strcmp(nodes[i].kind, "recipe"))
            rn->params = recipe_params_of(nodes[i].source_path);
        if (nodes[i].message && nodes[i].message[0])
            rn->message = utf8_prefix(nodes[i].message, 400);
        if (!nodes[i].verdict)
            continue;
        int k = 6;
        for (int v = 0; v < 6; v++)
            if (!strcmp(nodes[i].verdict, verdict_names[v]))
                k = v;
        p->verdicts[k]++;
        if (k != 1 && nodes[i].source_path)
            p->compiled = true;
    }

    char *best_s = store_task_get(s, task, "best_node");
    p->best_node = best_s ? strtoll(best_s, NULL, 10) : 0;
    free(best_s);
    if (p->best_node <= 0)
        p->best_node = store_best_node(s, task);
    no_timing(&p->kernel);
    no_timing(&p->eager);
    no_timing(&p->compile);
    p->speedup_eager = p->speedup_compile = p->sol_fraction = NAN;
    store_node best;
    if (p->best_node > 0 && store_node_get(s, p->best_node, &best) == 0) {
        if (best.verdict && !strcmp(best.verdict, "ok")) {
            p->correct = true;
            json_t *rep = best_report(s, p->best_node);
            if (!rep)
                strbuf_addf(warn, "%s: node %lld has no readable eval report; using the node's own time\n",
                            p->name, (long long)p->best_node);
            read_timing(json_object_get(rep, "kernel_time"), &p->kernel);
            json_t *base = json_object_get(rep, "baseline");
            read_timing(json_object_get(base, "eager"), &p->eager);
            read_timing(json_object_get(base, "compile"), &p->compile);
            json_t *sp = json_object_get(rep, "speedup");
            p->speedup_eager = num(sp, "eager");
            p->speedup_compile = num(sp, "compile");
            if (isnan(p->kernel.median))
                p->kernel.median = best.time_ms;
            if (isnan(p->speedup_eager))
                p->speedup_eager = !isnan(best.speedup) ? best.speedup : p->eager.median / p->kernel.median;
            if (isnan(p->speedup_compile))
                p->speedup_compile = p->compile.median / p->kernel.median;
            json_t *sol = json_object_get(rep, "speed_of_light");
            double sol_ms = num(sol, "sol_ms");
            if (sol_ms > 0 && p->kernel.median > 0)
                p->sol_fraction = isnan(num(sol, "fraction")) || num(sol, "fraction") <= 0
                                      ? sol_ms / p->kernel.median : num(sol, "fraction");
            const char *g = json_string_value(json_object_get(json_object_get(rep, "gpu"), "name"));
            p->gpu = g ? xstrdup(g) : NULL;
            json_decref(rep);
        }
        store_node_release(&best);
    }
    if (!p->correct)
        p->best_node = 0;

    double cost = 0;
    store_totals(s, task, &cost, &p->calls, &p->tokens_in, &p->tokens_out);
    p->cost_usd = cost;
    double t0, t1;
    store_task_span(s, task, &t0, &t1);
    p->wall_s = t1 - t0;
    p->stop_reason = store_task_get(s, task, "stop_reason");
    store_nodes_free(nodes, n);
}

/* Whether a is a better result than b for the same problem. */
static bool better(const report_problem *a, const report_problem *b)
{
    if (a->correct != b->correct)
        return a->correct;
    if (!a->correct)
        return a->n_nodes > b->n_nodes;
    return a->speedup_eager > b->speedup_eager;
}

int report_load(report *r, const char *run_dir, strbuf *err)
{
    store *s = NULL;
    strbuf e = STRBUF_INIT;
    if (store_open(run_dir, false, &s, &e) < 0) {
        strbuf_addf(err, "cannot read run '%s': %s", run_dir, e.buf);
        strbuf_release(&e);
        return -1;
    }
    strbuf_release(&e);
    int64_t *ids = NULL;
    size_t n = 0;
    if (store_task_ids(s, &ids, &n) < 0) {
        strbuf_addf(err, "cannot list the tasks of run '%s': %s", run_dir, store_error(s));
        store_close(s);
        return -1;
    }
    r->runs = xrealloc(r->runs, (r->n_runs + 1) * sizeof *r->runs);
    r->runs[r->n_runs++] = xstrdup(store_dir(s));
    for (size_t i = 0; i < n; i++) {
        report_problem p;
        load_problem(s, ids[i], store_dir(s), &p, &r->warnings);
        size_t j = 0;
        while (j < r->n && strcmp(r->p[j].name, p.name))
            j++;
        if (j < r->n) {
            bool take = better(&p, &r->p[j]);
            strbuf_addf(&r->warnings, "%s is in runs '%s' and '%s': using the one from '%s'\n", p.name,
                        r->p[j].run_dir, p.run_dir, take ? p.run_dir : r->p[j].run_dir);
            if (take) {
                problem_release(&r->p[j]);
                r->p[j] = p;
            } else {
                problem_release(&p);
            }
            continue;
        }
        if (r->n == r->cap) {
            r->cap = r->cap ? 2 * r->cap : 32;
            r->p = xrealloc(r->p, r->cap * sizeof *r->p);
        }
        r->p[r->n++] = p;
    }
    free(ids);
    store_close(s);
    return 0;
}

static int cmp_problem(const void *a, const void *b)
{
    const report_problem *x = a, *y = b;
    if (x->level != y->level)
        return x->level < y->level ? -1 : 1;
    if (x->problem_id != y->problem_id)
        return x->problem_id < y->problem_id ? -1 : 1;
    return strcmp(x->name, y->name);
}

void report_sort(report *r)
{
    if (r->n)
        qsort(r->p, r->n, sizeof *r->p, cmp_problem);
}

/* ================================================================ groups */

typedef struct group {
    char name[64];
    report_stats eager, compile;
    double cost;
    int64_t calls, tokens;
    double wall_s;
} group;

/* Groups: overall, each level, each category (in a fixed order); *n of them. */
static group *make_groups(const report *r, size_t *n_out)
{
    static const char *const cats[] = { "matmul", "conv", "elementwise", "reduction", "norm", "pooling",
                                        "loss", "fused", "other" };
    size_t cap = 1 + 8 + sizeof cats / sizeof cats[0];
    group *g = xcalloc(cap, sizeof *g);
    size_t ng = 0;
    double *se = xmalloc((r->n ? r->n : 1) * sizeof *se);
    double *sc = xmalloc((r->n ? r->n : 1) * sizeof *sc);
    for (int pass = 0; pass < 3; pass++) {
        int nkeys = pass == 0 ? 1 : pass == 1 ? 9 : (int)(sizeof cats / sizeof cats[0]);
        for (int key = 0; key < nkeys; key++) {
            size_t m = 0;
            group cur;
            memset(&cur, 0, sizeof cur);
            for (size_t i = 0; i < r->n; i++) {
                const report_problem *p = &r->p[i];
                bool in = pass == 0 || (pass == 1 && p->level == key) ||
                          (pass == 2 && !strcmp(p->category, cats[key]));
                if (!in)
                    continue;
                se[m] = p->correct ? p->speedup_eager : NAN;
                sc[m] = p->correct ? p->speedup_compile : NAN;
                m++;
                cur.cost += p->cost_usd;
                cur.calls += p->calls;
                cur.tokens += p->tokens_in + p->tokens_out;
                if (!isnan(p->wall_s))
                    cur.wall_s += p->wall_s;
            }
            if (!m)
                continue;
            if (pass == 0)
                snprintf(cur.name, sizeof cur.name, "all");
            else if (pass == 1)
                snprintf(cur.name, sizeof cur.name, key ? "level %d" : "level ?", key);
            else
                snprintf(cur.name, sizeof cur.name, "%s", cats[key]);
            report_stats_of(se, m, &cur.eager);
            report_stats_of(sc, m, &cur.compile);
            g[ng++] = cur;
        }
    }
    free(se);
    free(sc);
    *n_out = ng;
    return g;
}

/* ================================================================ text helpers */

static void add_num(strbuf *sb, const char *fmt, double v, const char *none)
{
    if (isnan(v) || isinf(v))
        strbuf_adds(sb, none);
    else
        strbuf_addf(sb, fmt, v);
}

/* Markdown and HTML cells: no pipes, no newlines; HTML escapes. */
static void add_md_text(strbuf *sb, const char *s)
{
    for (; s && *s; s++) {
        if (*s == '|')
            strbuf_adds(sb, "\\|");
        else if (*s == '\n' || *s == '\r')
            strbuf_addc(sb, ' ');
        else
            strbuf_addc(sb, *s);
    }
}

static void add_xml(strbuf *sb, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '&': strbuf_adds(sb, "&amp;"); break;
        case '<': strbuf_adds(sb, "&lt;"); break;
        case '>': strbuf_adds(sb, "&gt;"); break;
        case '"': strbuf_adds(sb, "&quot;"); break;
        default: strbuf_addc(sb, *s);
        }
    }
}

static void add_csv_text(strbuf *sb, const char *s)
{
    if (!s)
        return;
    if (!strpbrk(s, ",\"\n\r")) {
        strbuf_adds(sb, s);
        return;
    }
    strbuf_addc(sb, '"');
    for (; *s; s++) {
        if (*s == '"')
            strbuf_addc(sb, '"');
        strbuf_addc(sb, *s);
    }
    strbuf_addc(sb, '"');
}

static void add_wall(strbuf *sb, double s)
{
    if (isnan(s) || s < 0)
        strbuf_adds(sb, "-");
    else if (s < 120)
        strbuf_addf(sb, "%.1f s", s);
    else if (s < 7200)
        strbuf_addf(sb, "%.1f min", s / 60);
    else
        strbuf_addf(sb, "%.1f h", s / 3600);
}

/* ================================================================ Markdown */

static const char *const group_head =
    "| group | problems | correct | fast_0 | fast_1 | fast_1.5 | fast_2 | geomean (fail=1x) | "
    "geomean (correct) | mean | median | geomean vs compile (fail=1x) | calls | tokens | cost |\n"
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";

static void md_group(strbuf *sb, const group *g)
{
    strbuf_addf(sb, "| %s | %zu | %zu (%.0f%%) |", g->name, g->eager.n, g->eager.correct,
                100 * g->eager.correct_rate);
    for (int k = 0; k < REPORT_N_FAST; k++)
        strbuf_addf(sb, " %.2f |", g->eager.fast[k]);
    strbuf_addf(sb, " %.3fx | ", g->eager.geo_all);
    add_num(sb, "%.3fx", g->eager.geo_correct, "-");
    strbuf_adds(sb, " | ");
    add_num(sb, "%.3fx", g->eager.mean, "-");
    strbuf_adds(sb, " | ");
    add_num(sb, "%.3fx", g->eager.median, "-");
    strbuf_addf(sb, " | %.3fx | %lld | %lld | $%.2f |\n", g->compile.geo_all, (long long)g->calls,
                (long long)g->tokens, g->cost);
}

/* Whether anything of the problem was judged or it stopped: a problem a sweep started and
 * its time limit cut before any variant's verdict is "not judged", not incorrect. */
static bool judged(const report_problem *p)
{
    for (int v = 0; v < 7; v++)
        if (p->verdicts[v])
            return true;
    return p->stop_reason != NULL;
}

static const char *correct_word(const report_problem *p)
{
    return p->correct ? "yes" : judged(p) ? "no" : "not judged";
}

static void md_problem(strbuf *sb, const report_problem *p)
{
    strbuf_adds(sb, "| ");
    add_md_text(sb, p->name);
    strbuf_adds(sb, " | ");
    if (p->level)
        strbuf_addf(sb, "%d", p->level);
    else
        strbuf_adds(sb, "-");
    strbuf_addf(sb, " | %s | %s | ", p->category, correct_word(p));
    add_num(sb, "%.3fx", p->correct ? p->speedup_eager : NAN, "-");
    strbuf_adds(sb, " | ");
    add_num(sb, "%.3fx", p->correct ? p->speedup_compile : NAN, "-");
    strbuf_adds(sb, " | ");
    add_num(sb, "%.4f", p->kernel.median, "-");
    strbuf_adds(sb, " | ");
    add_num(sb, "%.4f", p->eager.median, "-");
    strbuf_adds(sb, " | ");
    add_num(sb, "%.1f%%", 100 * p->sol_fraction, "-");
    if (p->sol_fraction > 1)
        strbuf_addc(sb, '*'); /* the legend under the table (sol_legend) */
    strbuf_addf(sb, " | %lld | %lld | $%.4f | ", (long long)p->calls,
                (long long)(p->tokens_in + p->tokens_out), p->cost_usd);
    add_wall(sb, p->wall_s);
    strbuf_adds(sb, " | ");
    add_md_text(sb, p->stop_reason ? p->stop_reason : "-");
    strbuf_adds(sb, " |\n");
}

/* What a fraction above 100% (marked '*') means: the Markdown's legend, the HTML cell's title. */
static const char sol_over[] = "above 100% of its speed of light: the bound did not hold for this kernel";

/* Under the problems' table when a kernel ran faster than its speed of light: the bound,
 * not the kernel, is what such a row questions. */
static void sol_legend(const report *r, strbuf *sb)
{
    for (size_t i = 0; i < r->n; i++)
        if (r->p[i].sol_fraction > 1) {
            strbuf_addf(sb, "\n\\* %s. It counts the spec's FLOPs (PyTorch's counter: a triangular product "
                            "as dense) and every input and output once, at the fastest rate that keeps the "
                            "problem's precision (docs/report.md); a kernel that skips work the count includes "
                            "can beat it, and one that skips an input it needed is wrong.\n",
                        sol_over);
            return;
        }
}

/* The built-in recipe variants judged anything but ok, a line each (problem, node, the
 * variant's parameters, verdict, the message's first line): which variant of a sweep
 * failed and why, without the run's store. Nothing when none failed. */
static void md_failed_variants(const report *r, strbuf *sb)
{
    bool head = false;
    for (size_t i = 0; i < r->n; i++)
        for (size_t j = 0; j < r->p[i].n_nodes; j++) {
            const report_node *n = &r->p[i].nodes[j];
            if (strcmp(n->kind, "recipe") || !n->verdict[0] || !strcmp(n->verdict, "ok"))
                continue;
            if (!head)
                strbuf_adds(sb, "\n## Built-in variants that failed\n\n");
            head = true;
            const char *m = n->message ? n->message : "";
            const size_t line = strcspn(m, "\n"), len = utf8_cut(m, line, 160);
            strbuf_addf(sb, "- %s, node %lld (%s): %s%s%.*s%s\n", r->p[i].name, (long long)n->id,
                        n->params ? n->params : "no parameters line", n->verdict, len ? ": " : "",
                        (int)len, m, len < line ? " ..." : "");
        }
}

static void write_md(const report *r, strbuf *sb)
{
    size_t ng;
    group *g = make_groups(r, &ng);
    strbuf_adds(sb, "# cutegen report\n\n");
    strbuf_addf(sb, "%zu problems from %zu run%s:", r->n, r->n_runs, r->n_runs == 1 ? "" : "s");
    for (size_t i = 0; i < r->n_runs; i++)
        strbuf_addf(sb, " `%s`", r->runs[i]);
    strbuf_adds(sb, "\n\nSpeedups are over PyTorch eager unless marked compile; fast_p counts "
                    "problems correct and faster than p times eager, over all problems attempted.\n\n");
    strbuf_adds(sb, "## Summary\n\n");
    strbuf_adds(sb, group_head);
    for (size_t i = 0; i < ng; i++)
        md_group(sb, &g[i]);
    size_t unjudged = 0;
    for (size_t i = 0; i < r->n; i++)
        unjudged += !judged(&r->p[i]);
    if (unjudged)
        strbuf_addf(sb, "\n%zu of the problems were started but not judged (no verdict, no stop: a run cut "
                        "short, or still going); they count as not correct above.\n",
                    unjudged);
    strbuf_adds(sb, "\n## Problems\n\n"
                    "| problem | level | category | correct | speedup | vs compile | kernel ms | eager ms | "
                    "of SoL | calls | tokens | cost | wall | stop reason |\n"
                    "|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
    for (size_t i = 0; i < r->n; i++)
        md_problem(sb, &r->p[i]);
    sol_legend(r, sb);
    md_failed_variants(r, sb);
    free(g);
}

/* ================================================================ CSV */

static void csv_num(strbuf *sb, const char *fmt, double v)
{
    if (!isnan(v) && !isinf(v))
        strbuf_addf(sb, fmt, v);
    strbuf_addc(sb, ',');
}

static void write_csv(const report *r, strbuf *sb)
{
    strbuf_adds(sb, "problem,level,problem_id,category,correct,compiled,speedup_eager,speedup_compile,"
                    "kernel_ms,eager_ms,compile_ms,sol_fraction,llm_calls,tokens_in,tokens_out,cost_usd,"
                    "wall_s,nodes,best_node,stop_reason,run\n");
    for (size_t i = 0; i < r->n; i++) {
        const report_problem *p = &r->p[i];
        add_csv_text(sb, p->name);
        strbuf_addf(sb, ",%d,%d,%s,%d,%d,", p->level, p->problem_id, p->category, p->correct, p->compiled);
        csv_num(sb, "%.6g", p->correct ? p->speedup_eager : NAN);
        csv_num(sb, "%.6g", p->correct ? p->speedup_compile : NAN);
        csv_num(sb, "%.6g", p->kernel.median);
        csv_num(sb, "%.6g", p->eager.median);
        csv_num(sb, "%.6g", p->compile.median);
        csv_num(sb, "%.6g", p->sol_fraction);
        strbuf_addf(sb, "%lld,%lld,%lld,%.6f,", (long long)p->calls, (long long)p->tokens_in,
                    (long long)p->tokens_out, p->cost_usd);
        csv_num(sb, "%.3f", p->wall_s);
        strbuf_addf(sb, "%zu,%lld,", p->n_nodes, (long long)p->best_node);
        add_csv_text(sb, p->stop_reason);
        strbuf_addc(sb, ',');
        add_csv_text(sb, p->run_dir);
        strbuf_addc(sb, '\n');
    }
}

/* ================================================================ JSON */

static json_t *jnum(double v)
{
    return isnan(v) || isinf(v) ? json_null() : json_real(v);
}

static json_t *stats_json(const report_stats *s)
{
    json_t *fast = json_object();
    for (int k = 0; k < REPORT_N_FAST; k++) {
        char key[16];
        double v = report_fast_p_values[k];
        snprintf(key, sizeof key, v == floor(v) ? "%.1f" : "%g", v);
        json_object_set_new(fast, key, jnum(s->fast[k]));
    }
    return json_pack("{s:I, s:I, s:o, s:o, s:o, s:o, s:o, s:o}", "problems", (json_int_t)s->n, "correct",
                     (json_int_t)s->correct, "correct_rate", jnum(s->correct_rate), "fast_p", fast,
                     "geomean_fail_as_1", jnum(s->geo_all), "geomean_correct", jnum(s->geo_correct),
                     "mean_correct", jnum(s->mean), "median_correct", jnum(s->median));
}

/* KernelBench's runtime_stats / baseline entry: mean, std, min, max, num_trials. */
/* A problem's judged nodes, one object each: which variant or edit it was, its verdict,
 * its time and the judgment's message, so that a report read away from the run's store
 * (a GPU host's sweep) still says which variant failed and why. */
static json_t *judged_nodes(const report_problem *p)
{
    json_t *list = json_array();
    for (size_t i = 0; i < p->n_nodes; i++) {
        const report_node *n = &p->nodes[i];
        if (!n->verdict[0])
            continue;
        json_t *o = json_pack("{s:I, s:s, s:s, s:o}", "node", (json_int_t)n->id, "kind", n->kind, "verdict",
                              n->verdict, "time_ms", jnum(n->time_ms));
        if (n->params)
            json_object_set_new(o, "params", json_string(n->params));
        if (n->message)
            json_object_set_new(o, "message", json_string(n->message));
        json_array_append_new(list, o);
    }
    return list;
}

static json_t *kb_stats(const report_timing *t, const char *gpu)
{
    return json_pack("{s:o, s:o, s:o, s:o, s:i, s:s, s:s}", "mean", jnum(t->mean), "std", jnum(t->std),
                     "min", jnum(t->min), "max", jnum(t->max), "num_trials", t->n, "hardware",
                     gpu ? gpu : "", "device", "cuda:0");
}

static void kb_level_key(char *buf, size_t n, int level)
{
    snprintf(buf, n, level ? "level%d" : "level_unknown", level);
}

static json_t *json_report(const report *r)
{
    json_t *root = json_object();
    json_object_set_new(root, "cutegen_report", json_integer(1));
    json_t *runs = json_array();
    for (size_t i = 0; i < r->n_runs; i++)
        json_array_append_new(runs, json_string(r->runs[i]));
    json_object_set_new(root, "runs", runs);

    size_t ng;
    group *g = make_groups(r, &ng);
    json_t *groups = json_array();
    for (size_t i = 0; i < ng; i++) {
        json_t *o = json_pack("{s:s, s:o, s:o, s:f, s:I, s:I, s:f}", "group", g[i].name, "eager",
                              stats_json(&g[i].eager), "compile", stats_json(&g[i].compile), "cost_usd",
                              g[i].cost, "llm_calls", (json_int_t)g[i].calls, "tokens",
                              (json_int_t)g[i].tokens, "wall_s", g[i].wall_s);
        json_array_append_new(groups, o);
    }
    free(g);
    json_object_set_new(root, "groups", groups);

    json_t *probs = json_array();
    json_t *kb_eval = json_object(), *kb_eager = json_object(), *kb_compile = json_object();
    for (size_t i = 0; i < r->n; i++) {
        const report_problem *p = &r->p[i];
        json_t *o = json_pack("{s:s, s:i, s:i, s:s, s:b, s:b, s:o, s:o, s:o, s:o, s:o, s:o, s:I, s:I, s:I, "
                              "s:f, s:o, s:I, s:I, s:s?, s:s}",
                              "problem", p->name, "level", p->level, "problem_id", p->problem_id, "category",
                              p->category, "correct", p->correct, "compiled", p->compiled, "speedup_eager",
                              jnum(p->correct ? p->speedup_eager : NAN), "speedup_compile",
                              jnum(p->correct ? p->speedup_compile : NAN), "kernel_ms", jnum(p->kernel.median),
                              "eager_ms", jnum(p->eager.median), "compile_ms", jnum(p->compile.median),
                              "sol_fraction", jnum(p->sol_fraction), "llm_calls", (json_int_t)p->calls,
                              "tokens_in", (json_int_t)p->tokens_in, "tokens_out", (json_int_t)p->tokens_out,
                              "cost_usd", p->cost_usd, "wall_s", jnum(p->wall_s), "nodes",
                              (json_int_t)p->n_nodes, "best_node", (json_int_t)p->best_node, "stop_reason",
                              p->stop_reason, "run", p->run_dir);
        json_t *verd = json_object();
        for (int v = 0; v < 6; v++)
            json_object_set_new(verd, verdict_names[v], json_integer(p->verdicts[v]));
        json_object_set_new(o, "verdicts", verd);
        json_object_set_new(o, "judged", judged_nodes(p));
        json_object_set_new(o, "not_judged", json_boolean(!judged(p)));
        json_array_append_new(probs, o);

        /* KernelBench: eval_results.json per level, keyed by problem id, a list of samples;
         * and results/timing/<hardware>/<baseline>.json keyed by level and file name. */
        char lk[32], pid[32];
        kb_level_key(lk, sizeof lk, p->level);
        if (p->problem_id)
            snprintf(pid, sizeof pid, "%d", p->problem_id);
        else
            snprintf(pid, sizeof pid, "%s", p->name);
        json_t *meta = json_pack("{s:s, s:s, s:s, s:I, s:s}", "hardware", p->gpu ? p->gpu : "", "device",
                                 "cuda:0", "cutegen_problem", p->name, "cutegen_best_node",
                                 (json_int_t)p->best_node, "cutegen_run", p->run_dir);
        json_t *sample = json_pack("{s:i, s:b, s:b, s:o, s:f, s:o}", "sample_id", 0, "compiled", p->compiled,
                                   "correctness", p->correct, "metadata", meta, "runtime",
                                   p->correct && !isnan(p->kernel.mean) ? p->kernel.mean : -1.0,
                                   "runtime_stats", p->correct ? kb_stats(&p->kernel, p->gpu) : json_object());
        json_t *lvl = json_object_get(kb_eval, lk);
        if (!lvl) {
            lvl = json_object();
            json_object_set_new(kb_eval, lk, lvl);
        }
        json_object_set_new(lvl, pid, json_pack("[o]", sample));
        json_t *targets[2] = { kb_eager, kb_compile };
        const report_timing *times[2] = { &p->eager, &p->compile };
        for (int k = 0; k < 2; k++) {
            if (isnan(times[k]->mean))
                continue;
            json_t *l = json_object_get(targets[k], lk);
            if (!l) {
                l = json_object();
                json_object_set_new(targets[k], lk, l);
            }
            json_object_set_new(l, p->name, kb_stats(times[k], p->gpu));
        }
    }
    json_object_set_new(root, "problems", probs);
    json_object_set_new(root, "kernelbench",
                        json_pack("{s:o, s:o, s:o}", "eval_results", kb_eval, "baseline_time_torch", kb_eager,
                                  "baseline_time_torch_compile_inductor_default", kb_compile));
    return root;
}

/* ================================================================ SVG plots */

#define PW 640
#define PH 300
#define ML 56  /* margins: left, right, top, bottom */
#define MR 16
#define MT 30
#define MB 54

static void svg_begin(strbuf *sb, const char *id, int w, int h, const char *title)
{
    strbuf_addf(sb, "<figure><svg id=\"%s\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                    "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"11\">\n",
                id, w, h, w, h);
    strbuf_addf(sb, "<rect width=\"%d\" height=\"%d\" fill=\"#fff\"/>\n", w, h);
    strbuf_addf(sb, "<text x=\"%d\" y=\"18\" font-size=\"13\" font-weight=\"bold\">", ML);
    add_xml(sb, title);
    strbuf_adds(sb, "</text>\n");
}

static void svg_end(strbuf *sb, const char *caption)
{
    strbuf_adds(sb, "</svg><figcaption>");
    add_xml(sb, caption);
    strbuf_adds(sb, "</figcaption></figure>\n");
}

/* Axes of a PW x PH plot: y from 0 to ymax with a few ticks, and a y label. */
static void svg_axes(strbuf *sb, double ymax, const char *yfmt, const char *ylabel)
{
    int x0 = ML, x1 = PW - MR, y0 = PH - MB, y1 = MT;
    strbuf_addf(sb, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>\n", x0, y0, x1, y0);
    strbuf_addf(sb, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>\n", x0, y0, x0, y1);
    for (int k = 0; k <= 4; k++) {
        double v = ymax * k / 4;
        double y = y0 - (y0 - y1) * k / 4.0;
        strbuf_addf(sb, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#eee\"/>", x0 + 1, y, x1, y);
        strbuf_addf(sb, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">", x0 - 4, y + 4);
        strbuf_addf(sb, yfmt, v);
        strbuf_adds(sb, "</text>\n");
    }
    strbuf_addf(sb, "<text transform=\"translate(14,%d) rotate(-90)\" text-anchor=\"middle\">", (y0 + y1) / 2);
    add_xml(sb, ylabel);
    strbuf_adds(sb, "</text>\n");
}

/* A bar chart: n bars with labels, values (NAN: no bar), optional notes over the bars,
 * and a dashed reference line at ref (NAN: none). */
static void svg_bars(strbuf *sb, const char *const *labels, const double *values, const char *const *notes,
                     size_t n, double ymax, double ref, const char *fill)
{
    int x0 = ML, x1 = PW - MR, y0 = PH - MB, y1 = MT;
    double slot = n ? (double)(x1 - x0) / (double)n : 1;
    for (size_t i = 0; i < n; i++) {
        double x = x0 + slot * (double)i;
        if (!isnan(values[i]) && values[i] > 0) {
            double h = (y0 - y1) * fmin(values[i], ymax) / ymax;
            strbuf_addf(sb, "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\">"
                            "<title>", x + slot * 0.15, y0 - h, slot * 0.7, h, fill);
            add_xml(sb, labels[i]);
            strbuf_addf(sb, ": %.4g</title></rect>\n", values[i]);
            if (notes && notes[i]) {
                strbuf_addf(sb, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", x + slot / 2, y0 - h - 3);
                add_xml(sb, notes[i]);
                strbuf_adds(sb, "</text>\n");
            }
        }
        strbuf_addf(sb, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">", x + slot / 2, y0 + 14);
        add_xml(sb, labels[i]);
        strbuf_adds(sb, "</text>\n");
    }
    if (!isnan(ref) && ref <= ymax) {
        double y = y0 - (y0 - y1) * ref / ymax;
        strbuf_addf(sb, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#c00\" stroke-dasharray=\"4 3\"/>\n",
                    x0, y, x1, y);
    }
}

static double nice_max(double v)
{
    if (!(v > 0) || isinf(v))
        return 1;
    double e = pow(10, floor(log10(v)));
    for (int k = 1; k <= 10; k++) {
        double m = k * e;
        if (m >= v * 1.05)
            return m;
    }
    return 10 * e;
}

static void plot_distribution(const report *r, strbuf *sb)
{
    static const double edges[] = { 0, 0.5, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0, 5.0, INFINITY };
    static const char *const labels[] = { "failed", "<0.5", "0.5-0.8", "0.8-1", "1-1.25", "1.25-1.5",
                                          "1.5-2", "2-3", "3-5", ">=5" };
    double count[10] = { 0 };
    for (size_t i = 0; i < r->n; i++) {
        const report_problem *p = &r->p[i];
        if (!p->correct || isnan(p->speedup_eager)) {
            count[0]++;
            continue;
        }
        for (int b = 0; b < 9; b++)
            if (p->speedup_eager >= edges[b] && p->speedup_eager < edges[b + 1])
                count[b + 1]++;
    }
    double mx = 0;
    char note_buf[10][16];
    const char *notes[10];
    for (int b = 0; b < 10; b++) {
        mx = fmax(mx, count[b]);
        snprintf(note_buf[b], sizeof note_buf[b], "%.0f", count[b]);
        notes[b] = note_buf[b];
    }
    svg_begin(sb, "plot-distribution", PW, PH, "Speedup over eager: distribution");
    double ymax = mx < 1 ? 4 : 4 * ceil(mx / 4); /* whole numbers at every tick */
    svg_axes(sb, ymax, "%.0f", "problems");
    const char *fills = "#4c78a8";
    svg_bars(sb, labels, count, notes, 10, ymax, NAN, fills);
    strbuf_addf(sb, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">speedup over PyTorch eager (x)</text>\n",
                (ML + PW - MR) / 2, PH - 12);
    svg_end(sb, "How many problems reached each speedup band; failed: no correct kernel.");
}

static void plot_fast_p(const report *r, strbuf *sb)
{
    double *se = xmalloc((r->n ? r->n : 1) * sizeof *se), *sc = xmalloc((r->n ? r->n : 1) * sizeof *sc);
    double top = 2.5;
    for (size_t i = 0; i < r->n; i++) {
        se[i] = r->p[i].correct ? r->p[i].speedup_eager : NAN;
        sc[i] = r->p[i].correct ? r->p[i].speedup_compile : NAN;
        if (!isnan(se[i]))
            top = fmax(top, se[i] * 1.1);
    }
    top = fmin(top, 10);
    top = ceil(top * 2) / 2;
    svg_begin(sb, "plot-fastp", PW, PH, "fast_p: fraction of problems correct and faster than p");
    svg_axes(sb, 1.0, "%.2f", "fast_p");
    int x0 = ML, x1 = PW - MR, y0 = PH - MB, y1 = MT;
    for (double t = 0; t <= top + 1e-9; t += (top > 5 ? 1.0 : 0.5)) {
        double x = x0 + (x1 - x0) * t / top;
        strbuf_addf(sb, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g</text>\n", x, y0 + 14, t);
    }
    const double marks[] = { 1.0, 1.5, 2.0 };
    for (int k = 0; k < 3; k++) {
        double x = x0 + (x1 - x0) * marks[k] / top;
        strbuf_addf(sb, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#bbb\" stroke-dasharray=\"3 3\"/>\n",
                    x, y0, x, y1);
    }
    const double *series[2] = { se, sc };
    const char *colors[2] = { "#4c78a8", "#f58518" };
    const char *names[2] = { "vs eager", "vs torch.compile" };
    for (int s = 0; s < 2; s++) {
        strbuf_addf(sb, "<polyline class=\"curve\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"",
                    colors[s]);
        for (int k = 0; k <= 200; k++) {
            double pval = top * k / 200.0;
            double f = r->n ? report_fast_p(series[s], r->n, pval) : 0;
            strbuf_addf(sb, "%.1f,%.1f ", x0 + (x1 - x0) * pval / top, y0 - (y0 - y1) * f);
        }
        strbuf_adds(sb, "\"/>\n");
        strbuf_addf(sb, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"3\" fill=\"%s\"/><text x=\"%d\" y=\"%d\">%s</text>\n",
                    x1 - 130, y1 + 4 + 14 * s, colors[s], x1 - 114, y1 + 9 + 14 * s, names[s]);
    }
    strbuf_addf(sb, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">p (speedup threshold)</text>\n",
                (x0 + x1) / 2, PH - 12);
    svg_end(sb, "fast_p over all problems attempted: a problem counts when its kernel is correct and more "
                "than p times as fast as the baseline.");
    free(se);
    free(sc);
}

static void plot_categories(const report *r, strbuf *sb)
{
    size_t ng;
    group *g = make_groups(r, &ng);
    const char *labels[16];
    double vals[16];
    char nb[16][32];
    const char *notes[16];
    size_t n = 0;
    double mx = 1;
    for (size_t i = 0; i < ng && n < 16; i++) {
        if (!strcmp(g[i].name, "all") || !strncmp(g[i].name, "level", 5))
            continue;
        labels[n] = g[i].name;
        vals[n] = g[i].eager.geo_all;
        snprintf(nb[n], sizeof nb[n], "%zu/%zu ok", g[i].eager.correct, g[i].eager.n);
        notes[n] = nb[n];
        mx = fmax(mx, vals[n]);
        n++;
    }
    svg_begin(sb, "plot-categories", PW, PH, "Geometric-mean speedup by category (failures as 1.0x)");
    double ymax = nice_max(mx);
    svg_axes(sb, ymax, "%.2f", "speedup over eager (x)");
    svg_bars(sb, labels, vals, notes, n, ymax, 1.0, "#54a24b");
    svg_end(sb, "Bars: geometric mean per category with failures counted as 1.0x; above each bar the "
                "problems correct out of those attempted; dashed line: parity with eager.");
    free(g);
}

static void plot_cost(const report *r, strbuf *sb)
{
    double xmax = 0, ymax = 2;
    bool by_cost = false;
    for (size_t i = 0; i < r->n; i++)
        if (r->p[i].cost_usd > 0)
            by_cost = true;
    for (size_t i = 0; i < r->n; i++) {
        const report_problem *p = &r->p[i];
        xmax = fmax(xmax, by_cost ? p->cost_usd : (double)p->calls);
        if (p->correct && !isnan(p->speedup_eager))
            ymax = fmax(ymax, p->speedup_eager);
    }
    xmax = nice_max(xmax);
    double lmax = ceil(log2(ymax * 1.05)), lmin = -2;
    svg_begin(sb, "plot-cost", PW, PH, by_cost ? "Cost against speedup" : "Model calls against speedup");
    int x0 = ML, x1 = PW - MR, y0 = PH - MB, y1 = MT;
    strbuf_addf(sb, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>\n", x0, y0, x1, y0);
    strbuf_addf(sb, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>\n", x0, y0, x0, y1);
    for (double l = lmin; l <= lmax; l++) {
        double y = y0 - (y0 - y1) * (l - lmin) / (lmax - lmin);
        strbuf_addf(sb, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\"/>"
                        "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%gx</text>\n",
                    x0 + 1, y, x1, y, l == 0 ? "#c00" : "#eee", x0 - 4, y + 4, pow(2, l));
    }
    for (int k = 0; k <= 4; k++) {
        double v = xmax * k / 4, x = x0 + (x1 - x0) * k / 4.0;
        strbuf_addf(sb, by_cost ? "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">$%.2f</text>\n"
                                : "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g</text>\n",
                    x, y0 + 14, v);
    }
    for (size_t i = 0; i < r->n; i++) {
        const report_problem *p = &r->p[i];
        double xv = by_cost ? p->cost_usd : (double)p->calls;
        double x = x0 + (x1 - x0) * xv / xmax;
        bool ok = p->correct && p->speedup_eager > 0;
        double l = ok ? fmax(lmin, fmin(lmax, log2(p->speedup_eager))) : lmin;
        double y = y0 - (y0 - y1) * (l - lmin) / (lmax - lmin);
        if (ok)
            strbuf_addf(sb, "<circle class=\"point\" cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"#4c78a8\" "
                            "fill-opacity=\"0.7\"><title>", x, y);
        else
            strbuf_addf(sb, "<path class=\"point\" d=\"M%.1f %.1fl6 6m0 -6l-6 6\" stroke=\"#c00\" "
                            "stroke-width=\"1.5\"><title>", x - 3, y - 3);
        add_xml(sb, p->name);
        if (ok)
            strbuf_addf(sb, ": %.3fx, $%.4f, %lld calls</title></circle>\n", p->speedup_eager, p->cost_usd,
                        (long long)p->calls);
        else
            strbuf_addf(sb, ": no correct kernel, $%.4f, %lld calls</title></path>\n", p->cost_usd,
                        (long long)p->calls);
    }
    strbuf_addf(sb, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", (x0 + x1) / 2, PH - 12,
                by_cost ? "model spend per problem (USD)" : "model calls per problem");
    strbuf_addf(sb, "<text transform=\"translate(14,%d) rotate(-90)\" text-anchor=\"middle\">speedup over "
                    "eager (log scale)</text>\n", (y0 + y1) / 2);
    svg_end(sb, "Each problem: what its search cost against the speedup it found; red crosses on the "
                "bottom line found no correct kernel.");
}

static const char *verdict_color(const char *v)
{
    if (!strcmp(v, "ok"))
        return "#54a24b";
    if (!strcmp(v, "compile_error"))
        return "#eeca3b";
    if (!strcmp(v, "wrong_result"))
        return "#e45756";
    if (!strcmp(v, "runtime_error") || !strcmp(v, "timeout"))
        return "#b279a2";
    if (!strcmp(v, "rejected"))
        return "#000";
    return "#bab0ac";
}

/* Leaves take consecutive slots in depth-first order; a parent sits over its children. */
static double tree_place(const report_problem *p, size_t i, double *x, double *next)
{
    double lo = INFINITY, hi = -INFINITY;
    for (size_t j = 0; j < p->n_nodes; j++) {
        if (p->nodes[j].parent != p->nodes[i].id)
            continue;
        double c = tree_place(p, j, x, next);
        lo = fmin(lo, c);
        hi = fmax(hi, c);
    }
    x[i] = isinf(lo) ? (*next)++ : (lo + hi) / 2;
    return x[i];
}

static void plot_tree(const report_problem *p, strbuf *sb)
{
    size_t n = p->n_nodes;
    double *x = xcalloc(n ? n : 1, sizeof *x);
    double next = 0;
    int maxd = 0;
    for (size_t i = 0; i < n; i++) {
        bool root = p->nodes[i].parent == 0;
        if (!root) { /* a parent not in the list makes a root too */
            root = true;
            for (size_t j = 0; j < n; j++)
                if (p->nodes[j].id == p->nodes[i].parent)
                    root = false;
        }
        if (root)
            tree_place(p, i, x, &next);
        maxd = p->nodes[i].depth > maxd ? p->nodes[i].depth : maxd;
    }
    int slot = 46, level_h = 64;
    int w = (int)fmax(PW, ML + slot * (next + 1)), h = MT + 30 + level_h * (maxd + 1);
    char title[320];
    snprintf(title, sizeof title, "Search tree: %s (%zu nodes)", p->name, n);
    svg_begin(sb, "plot-tree", w, h, title);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            if (p->nodes[j].id == p->nodes[i].parent)
                strbuf_addf(sb, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#999\"/>\n",
                            ML + slot * x[j], MT + 30 + level_h * p->nodes[j].depth, ML + slot * x[i],
                            MT + 30 + level_h * p->nodes[i].depth);
    for (size_t i = 0; i < n; i++) {
        const report_node *nd = &p->nodes[i];
        double cx = ML + slot * x[i];
        int cy = MT + 30 + level_h * nd->depth;
        bool best = nd->id == p->best_node;
        strbuf_addf(sb, "<circle class=\"node\" cx=\"%.1f\" cy=\"%d\" r=\"%d\" fill=\"%s\" stroke=\"%s\" "
                        "stroke-width=\"%d\"><title>node %lld (%s, depth %d): ",
                    cx, cy, best ? 10 : 8, verdict_color(nd->verdict), best ? "#000" : "#fff", best ? 3 : 1,
                    (long long)nd->id, nd->kind, nd->depth);
        add_xml(sb, nd->verdict[0] ? nd->verdict : "pending");
        if (!isnan(nd->time_ms))
            strbuf_addf(sb, ", %.4f ms", nd->time_ms);
        strbuf_adds(sb, "</title></circle>\n");
        strbuf_addf(sb, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" font-size=\"9\">%lld</text>\n", cx,
                    cy - 12, (long long)nd->id);
        if (!isnan(nd->time_ms))
            strbuf_addf(sb, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" font-size=\"9\">%.3g</text>\n",
                        cx, cy + 20, nd->time_ms);
    }
    const char *legend[] = { "ok", "compile_error", "wrong_result", "runtime_error", "rejected" };
    for (int k = 0; k < 5; k++)
        strbuf_addf(sb, "<circle cx=\"%d\" cy=\"%d\" r=\"5\" fill=\"%s\"/><text x=\"%d\" y=\"%d\">%s</text>\n",
                    w - 120, MT + 14 * k, verdict_color(legend[k]), w - 110, MT + 4 + 14 * k, legend[k]);
    svg_end(sb, "Each circle a candidate (number: node id; below: time in ms), coloured by verdict; "
                "the ringed one is the best. Depth grows downwards.");
    free(x);
}

static const char css[] =
    "body{font-family:sans-serif;margin:24px;color:#222;max-width:1400px}"
    "table{border-collapse:collapse;margin:8px 0 24px;font-size:12px}"
    "th,td{border:1px solid #ccc;padding:3px 6px;text-align:right}"
    "th:first-child,td:first-child{text-align:left}td.t{text-align:left}"
    "tr:nth-child(even){background:#f6f6f6}figure{display:inline-block;margin:8px 16px 16px 0;"
    "vertical-align:top}figcaption{font-size:11px;color:#555;max-width:640px}"
    ".no{color:#c00}.yes{color:#070}";

static void html_cell_num(strbuf *sb, const char *fmt, double v)
{
    strbuf_adds(sb, "<td>");
    add_num(sb, fmt, v, "-");
    strbuf_adds(sb, "</td>");
}

static void write_html(const report *r, const char *tree_problem, strbuf *sb)
{
    size_t ng;
    group *g = make_groups(r, &ng);
    strbuf_adds(sb, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                    "<title>cutegen report</title><style>");
    strbuf_adds(sb, css);
    strbuf_adds(sb, "</style></head><body>\n<h1>cutegen report</h1>\n<p>");
    strbuf_addf(sb, "%zu problems from %zu run%s:", r->n, r->n_runs, r->n_runs == 1 ? "" : "s");
    for (size_t i = 0; i < r->n_runs; i++) {
        strbuf_adds(sb, " <code>");
        add_xml(sb, r->runs[i]);
        strbuf_adds(sb, "</code>");
    }
    strbuf_adds(sb, ". Speedups are over PyTorch eager unless marked compile.</p>\n<h2>Summary</h2>\n"
                    "<table id=\"summary\"><tr><th>group</th><th>problems</th><th>correct</th><th>fast_0</th>"
                    "<th>fast_1</th><th>fast_1.5</th><th>fast_2</th><th>geomean (fail=1x)</th>"
                    "<th>geomean (correct)</th><th>mean</th><th>median</th><th>geomean vs compile</th>"
                    "<th>calls</th><th>tokens</th><th>cost</th></tr>\n");
    for (size_t i = 0; i < ng; i++) {
        strbuf_addf(sb, "<tr><td>%s</td><td>%zu</td><td>%zu (%.0f%%)</td>", g[i].name, g[i].eager.n,
                    g[i].eager.correct, 100 * g[i].eager.correct_rate);
        for (int k = 0; k < REPORT_N_FAST; k++)
            html_cell_num(sb, "%.2f", g[i].eager.fast[k]);
        html_cell_num(sb, "%.3fx", g[i].eager.geo_all);
        html_cell_num(sb, "%.3fx", g[i].eager.geo_correct);
        html_cell_num(sb, "%.3fx", g[i].eager.mean);
        html_cell_num(sb, "%.3fx", g[i].eager.median);
        html_cell_num(sb, "%.3fx", g[i].compile.geo_all);
        strbuf_addf(sb, "<td>%lld</td><td>%lld</td><td>$%.2f</td></tr>\n", (long long)g[i].calls,
                    (long long)g[i].tokens, g[i].cost);
    }
    strbuf_adds(sb, "</table>\n<h2>Plots</h2>\n");
    plot_distribution(r, sb);
    plot_fast_p(r, sb);
    plot_categories(r, sb);
    plot_cost(r, sb);
    const report_problem *tp = NULL;
    for (size_t i = 0; i < r->n && tree_problem; i++) {
        const char *nm = r->p[i].name;
        size_t tl = strlen(tree_problem);
        if (!strcmp(nm, tree_problem) || (!strncmp(nm, tree_problem, tl) && !strcmp(nm + tl, ".py")))
            tp = &r->p[i];
    }
    for (size_t i = 0; i < r->n && !tp && !tree_problem; i++)
        if (!tp || r->p[i].n_nodes > tp->n_nodes)
            tp = &r->p[i];
    for (size_t i = 0; i < r->n && !tree_problem; i++)
        if (r->p[i].n_nodes > tp->n_nodes)
            tp = &r->p[i];
    if (tp)
        plot_tree(tp, sb);
    strbuf_adds(sb, "<h2>Problems</h2>\n<table id=\"problems\"><tr><th>problem</th><th>level</th><th>category</th>"
                    "<th>correct</th><th>speedup</th><th>vs compile</th><th>kernel ms</th><th>eager ms</th>"
                    "<th>of SoL</th><th>calls</th><th>tokens</th><th>cost</th><th>wall</th>"
                    "<th>stop reason</th></tr>\n");
    for (size_t i = 0; i < r->n; i++) {
        const report_problem *p = &r->p[i];
        strbuf_adds(sb, "<tr><td>");
        add_xml(sb, p->name);
        strbuf_addf(sb, "</td><td>%d</td><td class=\"t\">%s</td><td class=\"t %s\">%s</td>", p->level, p->category,
                    p->correct ? "yes" : "no", correct_word(p));
        html_cell_num(sb, "%.3fx", p->correct ? p->speedup_eager : NAN);
        html_cell_num(sb, "%.3fx", p->correct ? p->speedup_compile : NAN);
        html_cell_num(sb, "%.4f", p->kernel.median);
        html_cell_num(sb, "%.4f", p->eager.median);
        if (p->sol_fraction > 1) { /* as the Markdown's mark and legend (sol_legend) */
            strbuf_addf(sb, "<td title=\"%s (docs/report.md)\">", sol_over);
            add_num(sb, "%.1f%%*", 100 * p->sol_fraction, "-");
            strbuf_adds(sb, "</td>");
        } else {
            html_cell_num(sb, "%.1f%%", 100 * p->sol_fraction);
        }
        strbuf_addf(sb, "<td>%lld</td><td>%lld</td><td>$%.4f</td><td>", (long long)p->calls,
                    (long long)(p->tokens_in + p->tokens_out), p->cost_usd);
        add_wall(sb, p->wall_s);
        strbuf_adds(sb, "</td><td class=\"t\">");
        add_xml(sb, p->stop_reason ? p->stop_reason : "-");
        strbuf_adds(sb, "</td></tr>\n");
    }
    strbuf_adds(sb, "</table>\n<p>Made by cutegen " CUTEGEN_VERSION "; definitions in docs/report.md.</p>\n"
                    "</body></html>\n");
    free(g);
}

/* ================================================================ entry */

int report_write(const report *r, const char *format, const char *tree_problem, strbuf *out, strbuf *err)
{
    if (!format || !strcmp(format, "md")) {
        write_md(r, out);
    } else if (!strcmp(format, "csv")) {
        write_csv(r, out);
    } else if (!strcmp(format, "json")) {
        json_t *j = json_report(r);
        char *text = json_dumps(j, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
        json_decref(j);
        if (!text) {
            strbuf_adds(err, "cannot encode the report as JSON");
            return -1;
        }
        strbuf_adds(out, text);
        strbuf_addc(out, '\n');
        free(text);
    } else if (!strcmp(format, "html")) {
        if (tree_problem) {
            bool found = false;
            size_t tl = strlen(tree_problem);
            for (size_t i = 0; i < r->n; i++)
                if (!strcmp(r->p[i].name, tree_problem) ||
                    (!strncmp(r->p[i].name, tree_problem, tl) && !strcmp(r->p[i].name + tl, ".py")))
                    found = true;
            if (!found) {
                strbuf_addf(err, "no problem '%s' in the runs (--tree takes a problem's file name)", tree_problem);
                return -1;
            }
        }
        write_html(r, tree_problem, out);
    } else {
        strbuf_addf(err, "unknown format '%s': use md, csv, html or json", format);
        return -1;
    }
    return 0;
}
