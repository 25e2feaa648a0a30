/*
 * llm_config: where the model settings come from. Defaults, then a JSON config file
 * (--config FILE, else $CUTEGEN_CONFIG, else ~/.config/cutegen/config.json), then the
 * environment (CUTEGEN_PROVIDER, CUTEGEN_MODEL, CUTEGEN_BASE_URL); the command line
 * applies its flags last, so flags win. Keys never live in the config: it may only name
 * the variable that holds one ("api_key_env").
 */
#include "llm.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

void llm_config_init(llm_config *c)
{
    memset(c, 0, sizeof *c);
    c->provider = LLM_PROVIDER_OPENAI;
    c->stream = true;
    c->timeout_s = 1800;
    c->connect_timeout_s = 30;
    c->idle_timeout_s = 300;
    c->max_retries = 4;
    c->retry_base_s = 1;
    c->retry_max_s = 60;
}

static void free_argv(char **argv)
{
    for (char **p = argv; p && *p; p++)
        free(*p);
    free(argv);
}

void llm_config_release(llm_config *c)
{
    free(c->model);
    free(c->base_url);
    free(c->api_key_env);
    free(c->anthropic_version);
    free_argv(c->command);
    free(c->replay_path);
    free(c->record_path);
    free(c->prices_path);
    memset(c, 0, sizeof *c);
}

const char *llm_config_key_env(const llm_config *c)
{
    if (c->api_key_env && *c->api_key_env)
        return c->api_key_env;
    switch (c->provider) {
    case LLM_PROVIDER_OPENAI:
        return "OPENAI_API_KEY";
    case LLM_PROVIDER_ANTHROPIC:
        return "ANTHROPIC_API_KEY";
    default:
        return "";
    }
}

void llm_config_set_command(llm_config *c, const char *line)
{
    free_argv(c->command);
    size_t n = 0;
    c->command = xcalloc(strlen(line) / 2 + 2, sizeof *c->command);
    const char *p = line;
    while (*p) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p)
            break;
        const char *start = p;
        while (*p && *p != ' ' && *p != '\t')
            p++;
        c->command[n++] = xstrndup(start, (size_t)(p - start));
    }
    c->command[n] = NULL;
}

char *llm_config_path(const char *path, bool *must_exist)
{
    *must_exist = true;
    if (path)
        return xstrdup(path);
    const char *env = getenv("CUTEGEN_CONFIG");
    if (env && *env)
        return xstrdup(env);
    *must_exist = false;
    const char *xdg = getenv("XDG_CONFIG_HOME");
    if (xdg && *xdg)
        return xasprintf("%s/cutegen/config.json", xdg);
    const char *home = getenv("HOME");
    return xasprintf("%s/.config/cutegen/config.json", home ? home : ".");
}

/* ---------------------------------------------------------------- the file */

static void set_string(char **dst, const char *v)
{
    free(*dst);
    *dst = v ? xstrdup(v) : NULL;
}

static int set_provider(llm_config *c, const char *name, const char *from, strbuf *err)
{
    int k = llm_provider_from_name(name);
    if (k < 0) {
        strbuf_addf(err, "unknown provider '%s' in %s: use openai, anthropic, command or "
                    "replay", name, from);
        return -1;
    }
    c->provider = (llm_provider_kind)k;
    return 0;
}

static int load_command(llm_config *c, json_t *v, const char *path, strbuf *err)
{
    if (json_is_string(v)) {
        llm_config_set_command(c, json_string_value(v));
        return 0;
    }
    if (!json_is_array(v) || json_array_size(v) == 0) {
        strbuf_addf(err, "config '%s': \"command\" must be a list of strings", path);
        return -1;
    }
    free_argv(c->command);
    c->command = xcalloc(json_array_size(v) + 1, sizeof *c->command);
    size_t i;
    json_t *a;
    json_array_foreach(v, i, a) {
        if (!json_is_string(a)) {
            strbuf_addf(err, "config '%s': \"command\" must be a list of strings", path);
            return -1;
        }
        c->command[i] = xstrdup(json_string_value(a));
    }
    return 0;
}

static void load_limits(llm_limits *l, json_t *o)
{
    json_t *v;
    if (json_is_integer(v = json_object_get(o, "calls")))
        l->calls = (long)json_integer_value(v);
    if (json_is_integer(v = json_object_get(o, "tokens")))
        l->tokens = (long)json_integer_value(v);
    if (json_is_number(v = json_object_get(o, "dollars")))
        l->dollars = json_number_value(v);
    if (json_is_number(v = json_object_get(o, "seconds")))
        l->seconds = json_number_value(v);
}

static const char *const known_keys[] = {
    "provider", "model", "base_url", "api_key_env", "anthropic_version", "command",
    "prices", "record", "replay", "replay_order", "stream", "max_completion_tokens", "max_tokens", "timeout_s",
    "connect_timeout_s", "idle_timeout_s", "max_retries", "retry_base_s", "retry_max_s",
    "budget", NULL,
};

static int check_keys(json_t *root, const char *path, strbuf *err)
{
    const char *key;
    json_t *v;
    json_object_foreach(root, key, v) {
        bool ok = false;
        for (const char *const *k = known_keys; *k && !ok; k++)
            ok = !strcmp(*k, key);
        if (!ok) {
            strbuf_addf(err, "config '%s': unknown key \"%s\" (see 'cutegen ask --help')",
                        path, key);
            return -1;
        }
    }
    if (json_object_get(root, "api_key")) {
        strbuf_addf(err, "config '%s': keys do not go in the config", path);
        return -1;
    }
    return 0;
}

static int apply_json(llm_config *c, json_t *root, const char *path, strbuf *err)
{
    json_t *v;
    if (check_keys(root, path, err) < 0)
        return -1;
    if (json_is_string(v = json_object_get(root, "provider")) &&
        set_provider(c, json_string_value(v), path, err) < 0)
        return -1;
    if (json_is_string(v = json_object_get(root, "model")))
        set_string(&c->model, json_string_value(v));
    if (json_is_string(v = json_object_get(root, "base_url")))
        set_string(&c->base_url, json_string_value(v));
    if (json_is_string(v = json_object_get(root, "api_key_env")))
        set_string(&c->api_key_env, json_string_value(v));
    if (json_is_string(v = json_object_get(root, "anthropic_version")))
        set_string(&c->anthropic_version, json_string_value(v));
    if (json_is_string(v = json_object_get(root, "prices")))
        set_string(&c->prices_path, json_string_value(v));
    if (json_is_string(v = json_object_get(root, "replay")))
        set_string(&c->replay_path, json_string_value(v));
    if (json_is_boolean(v = json_object_get(root, "replay_order")))
        c->replay_order = json_is_true(v);
    if (json_is_string(v = json_object_get(root, "record")))
        set_string(&c->record_path, json_string_value(v));
    if ((v = json_object_get(root, "command")) && load_command(c, v, path, err) < 0)
        return -1;
    if (json_is_boolean(v = json_object_get(root, "stream")))
        c->stream = json_is_true(v);
    if (json_is_boolean(v = json_object_get(root, "max_completion_tokens")))
        c->max_completion_tokens = json_is_true(v);
    if (json_is_integer(v = json_object_get(root, "max_tokens")))
        c->max_tokens = (int)json_integer_value(v);
    if (json_is_integer(v = json_object_get(root, "max_retries")))
        c->max_retries = (int)json_integer_value(v);
    if (json_is_number(v = json_object_get(root, "timeout_s")))
        c->timeout_s = json_number_value(v);
    if (json_is_number(v = json_object_get(root, "connect_timeout_s")))
        c->connect_timeout_s = json_number_value(v);
    if (json_is_number(v = json_object_get(root, "idle_timeout_s")))
        c->idle_timeout_s = json_number_value(v);
    if (json_is_number(v = json_object_get(root, "retry_base_s")))
        c->retry_base_s = json_number_value(v);
    if (json_is_number(v = json_object_get(root, "retry_max_s")))
        c->retry_max_s = json_number_value(v);
    if (json_is_object(v = json_object_get(root, "budget")))
        load_limits(&c->run_limits, v);
    return 0;
}

int llm_config_load_file(llm_config *c, const char *path, bool must_exist, strbuf *err)
{
    if (!file_exists(path)) {
        if (!must_exist)
            return 0;
        strbuf_addf(err, "config file '%s' does not exist", path);
        return -1;
    }
    json_error_t jerr;
    json_t *root = json_load_file(path, 0, &jerr);
    if (!json_is_object(root)) {
        strbuf_addf(err, "config file '%s' is not a JSON object: %s (line %d)", path,
                    root ? "another JSON value" : jerr.text, jerr.line);
        json_decref(root);
        return -1;
    }
    int rc = apply_json(c, root, path, err);
    json_decref(root);
    return rc;
}

int llm_config_load_env(llm_config *c, strbuf *err)
{
    const char *v;
    if ((v = getenv("CUTEGEN_PROVIDER")) && *v &&
        set_provider(c, v, "CUTEGEN_PROVIDER", err) < 0)
        return -1;
    if ((v = getenv("CUTEGEN_MODEL")) && *v)
        set_string(&c->model, v);
    if ((v = getenv("CUTEGEN_BASE_URL")) && *v)
        set_string(&c->base_url, v);
    return 0;
}

int llm_config_load_cli(int argc, char **argv, llm_config *c, strbuf *err)
{
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--"))
            break;
        if (!strcmp(argv[i], "--config") && i + 1 < argc)
            path = argv[i + 1];
        else if (str_starts_with(argv[i], "--config="))
            path = argv[i] + strlen("--config=");
    }
    bool must_exist;
    char *file = llm_config_path(path, &must_exist);
    int rc = llm_config_load_file(c, file, must_exist, err);
    if (rc == 0)
        rc = llm_config_load_env(c, err);
    free(file);
    return rc;
}
