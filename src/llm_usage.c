/*
 * llm_usage: what calls cost and whether another may start. The price table is a JSON
 * file the user can edit (prices/prices.json ships with the date its prices were
 * taken): dollars per million tokens for input, cached input, cache writes and output,
 * by model name or name prefix. A budget is a small lock-protected account of calls,
 * tokens, dollars and wall time against limits; a call is admitted only while every
 * limit still has room, so a call never starts past a budget.
 */
#include "llm.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* ---------------------------------------------------------------- prices */

static double num(json_t *o, const char *key, double dflt)
{
    json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : dflt;
}

static int parse_prices(llm_prices *p, json_t *root, strbuf *err)
{
    json_t *models = json_object_get(root, "models");
    if (!json_is_object(models)) {
        strbuf_addf(err, "price table '%s' has no \"models\" object", p->path);
        return -1;
    }
    const char *d = json_string_value(json_object_get(root, "date"));
    p->date = xstrdup(d ? d : "unknown");
    p->items = xcalloc(json_object_size(models) + 1, sizeof *p->items);
    const char *name;
    json_t *m;
    json_object_foreach(models, name, m) {
        if (!json_is_object(m) || !json_is_number(json_object_get(m, "input")) ||
            !json_is_number(json_object_get(m, "output"))) {
            strbuf_addf(err, "price table '%s': model '%s' needs numbers \"input\" and "
                        "\"output\" (dollars per million tokens)", p->path, name);
            return -1;
        }
        llm_price *it = &p->items[p->n++];
        it->model = xstrdup(name);
        it->input = num(m, "input", 0);
        it->output = num(m, "output", 0);
        it->cached_input = num(m, "cached_input", it->input);
        it->cache_write = num(m, "cache_write", it->input);
    }
    return 0;
}

int llm_prices_load(llm_prices *p, const char *path, strbuf *err)
{
    memset(p, 0, sizeof *p);
    p->path = path ? xstrdup(path) : xasprintf("%s/prices/prices.json", cg_source_dir());
    json_error_t jerr;
    json_t *root = json_load_file(p->path, 0, &jerr);
    if (!root) {
        strbuf_addf(err, "cannot load price table '%s': %s (line %d): fix it or give "
                    "--prices FILE", p->path, jerr.text, jerr.line);
        return -1;
    }
    int rc = parse_prices(p, root, err);
    json_decref(root);
    return rc;
}

void llm_prices_release(llm_prices *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->items[i].model);
    free(p->items);
    free(p->date);
    free(p->path);
    memset(p, 0, sizeof *p);
}

const llm_price *llm_prices_find(const llm_prices *p, const char *model)
{
    const llm_price *best = NULL;
    size_t best_len = 0;
    if (!model)
        return NULL;
    for (size_t i = 0; i < p->n; i++) {
        const char *name = p->items[i].model;
        size_t len = strlen(name);
        if (!strcmp(name, model))
            return &p->items[i];
        if (str_starts_with(model, name) && len > best_len) {
            best = &p->items[i];
            best_len = len;
        }
    }
    return best;
}

double llm_price_cost(const llm_price *price, const llm_usage *u)
{
    long fresh = u->input_tokens - u->cached_input_tokens - u->cache_write_tokens;
    if (fresh < 0)
        fresh = 0;
    double dollars = (double)fresh * price->input +
                     (double)u->cached_input_tokens * price->cached_input +
                     (double)u->cache_write_tokens * price->cache_write +
                     (double)u->output_tokens * price->output;
    return dollars / 1e6;
}

/* ---------------------------------------------------------------- budgets */

void llm_budget_init(llm_budget *b, const llm_limits *limits)
{
    memset(b, 0, sizeof *b);
    pthread_mutex_init(&b->lock, NULL);
    if (limits)
        b->limits = *limits;
    b->started = now_seconds();
}

void llm_budget_release(llm_budget *b)
{
    pthread_mutex_destroy(&b->lock);
}

int llm_budget_admit(llm_budget *b, const char *name, strbuf *why)
{
    int rc = -1;
    pthread_mutex_lock(&b->lock);
    const llm_limits *l = &b->limits;
    double elapsed = now_seconds() - b->started;
    if (l->calls > 0 && b->calls >= l->calls)
        strbuf_addf(why, "the %s budget of %ld calls is spent", name, l->calls);
    else if (l->tokens > 0 && b->tokens >= l->tokens)
        strbuf_addf(why, "the %s budget of %ld tokens is spent (%ld used)", name, l->tokens,
                    b->tokens);
    else if (l->dollars > 0 && b->dollars >= l->dollars)
        strbuf_addf(why, "the %s budget of $%.4f is spent ($%.4f used)", name, l->dollars,
                    b->dollars);
    else if (l->seconds > 0 && elapsed >= l->seconds)
        strbuf_addf(why, "the %s budget of %g s is spent (%.1f s since it began)", name,
                    l->seconds, elapsed);
    else {
        b->calls++;
        rc = 0;
    }
    pthread_mutex_unlock(&b->lock);
    return rc;
}

void llm_budget_charge(llm_budget *b, const llm_result *r)
{
    pthread_mutex_lock(&b->lock);
    b->tokens += r->usage.input_tokens + r->usage.output_tokens;
    if (r->cost_known)
        b->dollars += r->cost_usd;
    pthread_mutex_unlock(&b->lock);
}
