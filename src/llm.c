/*
 * llm: the client (see llm.h). It holds a private copy of the config, the API key read
 * from the environment, the price table, the run budget, the replay index and the
 * transcript lock; llm_call() admits a call against the budgets, sends it to the
 * provider, prices it, records it, and charges the budgets. Everything a call touches
 * that other calls share is either read-only after llm_client_new() or locked.
 */
#include "llm.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

struct llm_client {
    llm_config cfg;
    char *key;            /* from the environment; NULL when none */
    llm_prices prices;
    bool have_prices;
    llm_budget run;
    llm_replay *replay;
    pthread_mutex_t record_lock;
};

static char **copy_argv(char **argv)
{
    if (!argv)
        return NULL;
    size_t n = 0;
    while (argv[n])
        n++;
    char **out = xcalloc(n + 1, sizeof *out);
    for (size_t i = 0; i < n; i++)
        out[i] = xstrdup(argv[i]);
    return out;
}

static char *dup_or_null(const char *s)
{
    return s ? xstrdup(s) : NULL;
}

static void copy_config(llm_config *dst, const llm_config *src)
{
    *dst = *src;
    dst->model = dup_or_null(src->model);
    dst->base_url = dup_or_null(src->base_url);
    dst->api_key_env = dup_or_null(src->api_key_env);
    dst->anthropic_version = dup_or_null(src->anthropic_version);
    dst->command = copy_argv(src->command);
    dst->replay_path = dup_or_null(src->replay_path);
    dst->record_path = dup_or_null(src->record_path);
    dst->prices_path = dup_or_null(src->prices_path);
}

/* Reads the key; a hosted endpoint without one is a configuration error. */
static int load_key(llm_client *c, strbuf *err)
{
    const char *var = llm_config_key_env(&c->cfg);
    if (!*var)
        return 0;
    const char *v = getenv(var);
    if (v && *v) {
        c->key = xstrdup(v);
        return 0;
    }
    bool hosted = !c->cfg.base_url || strstr(c->cfg.base_url, "api.openai.com") ||
                  strstr(c->cfg.base_url, "api.anthropic.com");
    if (hosted) {
        strbuf_addf(err, "no API key for provider '%s': set %s (or name another variable "
                    "with --api-key-env)", llm_provider_name(c->cfg.provider), var);
        return -1;
    }
    return 0;
}

static int check_config(const llm_config *cfg, strbuf *err)
{
    if (cfg->provider >= LLM_PROVIDER__COUNT) {
        strbuf_addf(err, "unknown provider: use openai, anthropic, command or replay");
        return -1;
    }
    if ((cfg->provider == LLM_PROVIDER_OPENAI || cfg->provider == LLM_PROVIDER_ANTHROPIC) &&
        (!cfg->model || !*cfg->model)) {
        strbuf_addf(err, "no model for provider '%s': give --model, set CUTEGEN_MODEL, or "
                    "put \"model\" in the config", llm_provider_name(cfg->provider));
        return -1;
    }
    if (cfg->provider == LLM_PROVIDER_REPLAY && !cfg->replay_path) {
        strbuf_addf(err, "the replay provider needs a transcript: give --replay FILE");
        return -1;
    }
    if (cfg->provider == LLM_PROVIDER_COMMAND && (!cfg->command || !cfg->command[0])) {
        strbuf_addf(err, "the command provider needs a program: give --command 'PROG ARGS'");
        return -1;
    }
    return 0;
}

llm_client *llm_client_new(const llm_config *cfg, strbuf *err)
{
    if (check_config(cfg, err) < 0)
        return NULL;
    llm_client *c = xcalloc(1, sizeof *c);
    copy_config(&c->cfg, cfg);
    pthread_mutex_init(&c->record_lock, NULL);
    llm_budget_init(&c->run, &cfg->run_limits);
    if (load_key(c, err) < 0)
        goto fail;
    if (llm_prices_load(&c->prices, cfg->prices_path, err) < 0) {
        if (cfg->prices_path)
            goto fail;
        /* The shipped table is missing: costs are unknown, calls still work. */
        strbuf_reset(err);
        llm_prices_release(&c->prices);
    } else {
        c->have_prices = true;
    }
    if (cfg->provider == LLM_PROVIDER_REPLAY &&
        !(c->replay = llm_replay_open(cfg->replay_path, cfg->replay_order, err)))
        goto fail;
    return c;
fail:
    llm_client_free(c);
    return NULL;
}

void llm_client_free(llm_client *c)
{
    if (!c)
        return;
    if (c->key) {
        memset(c->key, 0, strlen(c->key));
        free(c->key);
    }
    if (c->have_prices)
        llm_prices_release(&c->prices);
    llm_replay_free(c->replay);
    llm_budget_release(&c->run);
    pthread_mutex_destroy(&c->record_lock);
    llm_config_release(&c->cfg);
    free(c);
}

llm_budget *llm_client_budget(llm_client *c)
{
    return &c->run;
}

/* ---------------------------------------------------------------- one call */

static void price(llm_client *c, const char *model, llm_result *res)
{
    if (res->replayed) {
        res->cost_usd = 0;
        res->cost_known = true;
        return;
    }
    if (c->cfg.provider == LLM_PROVIDER_COMMAND) {
        res->cost_known = false;
        return;
    }
    const llm_price *p = c->have_prices ? llm_prices_find(&c->prices, model) : NULL;
    if (!p && res->model)
        p = c->have_prices ? llm_prices_find(&c->prices, res->model) : NULL;
    res->cost_known = p != NULL;
    res->cost_usd = p ? llm_price_cost(p, &res->usage) : 0;
}

static void dispatch(llm_client *c, const llm_request *req, llm_result *res)
{
    switch (c->cfg.provider) {
    case LLM_PROVIDER_OPENAI:
        llm_openai_call(&c->cfg, c->key, req, res);
        break;
    case LLM_PROVIDER_ANTHROPIC:
        llm_anthropic_call(&c->cfg, c->key, req, res);
        break;
    case LLM_PROVIDER_COMMAND:
        llm_command_call(&c->cfg, req, res);
        break;
    case LLM_PROVIDER_REPLAY: {
        double start = now_seconds();
        llm_replay_call(c->replay, req, llm_effective_model(&c->cfg, req), res);
        res->latency_s = now_seconds() - start;
        break;
    }
    default:
        llm_result_fail(res, LLM_FAIL_CONFIG, "unknown provider");
    }
}

static int admit(llm_client *c, llm_budget *task, llm_result *res)
{
    strbuf why = STRBUF_INIT;
    int rc = 0;
    if ((task && llm_budget_admit(task, "task", &why) < 0) ||
        llm_budget_admit(&c->run, "run", &why) < 0) {
        llm_result_fail(res, LLM_FAIL_BUDGET_EXCEEDED, "call refused: %s", why.buf);
        rc = -1;
    }
    strbuf_release(&why);
    return rc;
}

int llm_call(llm_client *c, const llm_request *req, llm_budget *task, llm_result *res)
{
    llm_result_reset(res);
    if (admit(c, task, res) < 0)
        return -1;
    /* The request as sent: with the model the config supplies, so hashes agree. */
    llm_request eff = *req;
    eff.model = (char *)llm_effective_model(&c->cfg, req);
    dispatch(c, &eff, res);
    llm_redact(&res->message, c->key);
    price(c, eff.model, res);
    if (task)
        llm_budget_charge(task, res);
    llm_budget_charge(&c->run, res);
    if (c->cfg.record_path && !res->replayed) {
        strbuf err = STRBUF_INIT;
        if (llm_record(c->cfg.record_path, &c->record_lock, llm_provider_name(c->cfg.provider),
                       &eff, eff.model, res, c->key, &err) < 0 && res->fail == LLM_FAIL_NONE)
            llm_result_fail(res, LLM_FAIL_CONFIG, "%s", err.buf);
        strbuf_release(&err);
    }
    return res->fail == LLM_FAIL_NONE ? 0 : -1;
}
