/*
 * cutegen ask: one model call from the command line. Prints the reply on stdout and the
 * usage (tokens, cost, latency, retries) on stderr; a failed call exits with EXIT_LLM
 * and the reason. Settings come from defaults, the config file, the environment and
 * the flags, in that order (flags win). It is also the way to check that a provider is
 * set up before a long run, and to make and replay transcripts.
 */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/commands.h"
#include "llm.h"
#include "util.h"

#define PROMPT_MAX (64u << 20)

static const char usage_text[] =
"usage: cutegen ask [options] PROMPT\n"
"       cutegen ask [options] -          (the prompt is read from stdin)\n"
"\n"
"Sends one prompt to a model; prints the reply on stdout and the usage on stderr.\n"
"\n"
"providers (--provider):\n"
"  openai      OpenAI-compatible chat completions at BASE/chat/completions: OpenAI,\n"
"              vLLM, SGLang, llama.cpp server, Ollama (base URL e.g.\n"
"              http://127.0.0.1:8000/v1). Key from OPENAI_API_KEY; none needed for a\n"
"              local server. The default.\n"
"  anthropic   the Anthropic Messages API at BASE/messages, with extended thinking.\n"
"              Key from ANTHROPIC_API_KEY.\n"
"  command     runs --command 'PROG ARGS' (split on blanks, no shell); the request\n"
"              goes to its stdin as JSON {model, system, messages, max_tokens, ...};\n"
"              its stdout is the reply. A non-zero exit or time-out fails the call.\n"
"  replay      serves replies from a transcript (--replay FILE) made with --record,\n"
"              matched by a hash of the request, or in order with --replay-order.\n"
"\n"
"request:\n"
"  --model M                 model name (required for openai and anthropic)\n"
"  --system TEXT             system prompt; --system-file FILE reads it from a file\n"
"  --max-tokens N            output token limit (default 8192)\n"
"  --temperature T           sampling temperature (not sent unless given)\n"
"  --reasoning-effort E      openai reasoning models: minimal, low, medium, high;\n"
"                            sends max_completion_tokens instead of max_tokens\n"
"  --max-completion-tokens   openai: send max_completion_tokens even without effort\n"
"  --thinking N|adaptive     anthropic extended thinking: a budget of N tokens\n"
"                            (below --max-tokens), or adaptive\n"
"  --stop S                  a stop sequence (repeatable)\n"
"\n"
"connection:\n"
"  --provider P              openai, anthropic, command, replay\n"
"  --base-url URL            the API's base (default https://api.openai.com/v1 or\n"
"                            https://api.anthropic.com/v1)\n"
"  --api-key-env VAR         read the key from VAR instead of the default variable\n"
"  --anthropic-version V     the anthropic-version header (default 2023-06-01)\n"
"  --stream / --no-stream    stream the reply as server-sent events (default on: long\n"
"                            replies then never meet idle time-outs)\n"
"  --timeout S               total limit of the call, retries included (default 1800)\n"
"  --connect-timeout S       limit to connect (default 30)\n"
"  --idle-timeout S          an attempt with no byte for S seconds fails (default 300)\n"
"  --retries N               retries on 429, 408, 5xx, 529, time-outs and broken\n"
"                            connections (default 4); backoff doubles from\n"
"  --retry-base S            (default 1 s) up to --retry-max S (default 60 s) with\n"
"                            jitter; a Retry-After header is honoured instead.\n"
"                            400/401/403/404 are never retried.\n"
"  --command 'PROG ARGS'     the command provider's program\n"
"\n"
"transcripts, costs:\n"
"  --record FILE             append this call to a transcript (JSON Lines; no key)\n"
"  --replay FILE             the replay provider's transcript (implies --provider replay)\n"
"  --replay-order            serve the transcript in order, not by request hash\n"
"  --prices FILE             price table (default prices/prices.json in the source\n"
"                            tree: dollars per million tokens, dated; edit it)\n"
"\n"
"output:\n"
"  --json                    print {text, thinking, finish_reason, model, usage,\n"
"                            latency_s, retries, cost_usd, fail, message} on stdout\n"
"  --show-thinking           print the thinking text on stderr\n"
"  -q, --quiet               no usage line on stderr\n"
"  --config FILE             the config file (see below)\n"
"  -h, --help                this text\n"
"\n"
"config: a JSON object read from --config FILE, else $CUTEGEN_CONFIG, else\n"
"~/.config/cutegen/config.json (if present). Keys: provider, model, base_url,\n"
"api_key_env, anthropic_version, command (list of strings), replay, replay_order,\n"
"record, prices, stream, max_completion_tokens, max_tokens, timeout_s,\n"
"connect_timeout_s, idle_timeout_s, max_retries, retry_base_s, retry_max_s, budget\n"
"({calls, tokens, dollars, seconds}: limits of a run). Keys never go in the config.\n"
"Then the environment: CUTEGEN_PROVIDER, CUTEGEN_MODEL, CUTEGEN_BASE_URL. Flags win.\n"
"\n"
"environment: OPENAI_API_KEY, ANTHROPIC_API_KEY (or the variable --api-key-env names),\n"
"CUTEGEN_CONFIG, CUTEGEN_PROVIDER, CUTEGEN_MODEL, CUTEGEN_BASE_URL, CUTEGEN_SOURCE_DIR\n"
"(where prices/ is found).\n"
"\n"
"exit codes: 0 the reply was printed; 2 bad flags or config; 10 the call failed (the\n"
"message says why: auth, rate_limited, context_too_long, timeout, connection,\n"
"truncated, empty_reply, malformed_reply, http_status, bad_request, command_failed,\n"
"replay_miss, budget_exceeded). A reply cut at --max-tokens is printed, then exit 10.\n"
"See docs/llm.md.\n";

enum {
    OPT_PROVIDER = 256, OPT_MODEL, OPT_BASE_URL, OPT_API_KEY_ENV, OPT_ANTHROPIC_VERSION,
    OPT_SYSTEM, OPT_SYSTEM_FILE, OPT_MAX_TOKENS, OPT_TEMPERATURE, OPT_REASONING_EFFORT,
    OPT_MAX_COMPLETION_TOKENS, OPT_THINKING, OPT_STOP, OPT_STREAM, OPT_NO_STREAM,
    OPT_TIMEOUT, OPT_CONNECT_TIMEOUT, OPT_IDLE_TIMEOUT, OPT_RETRIES, OPT_RETRY_BASE,
    OPT_RETRY_MAX, OPT_COMMAND, OPT_RECORD, OPT_REPLAY, OPT_REPLAY_ORDER, OPT_PRICES,
    OPT_JSON, OPT_SHOW_THINKING, OPT_CONFIG,
};

static const struct option options[] = {
    { "provider", required_argument, NULL, OPT_PROVIDER },
    { "model", required_argument, NULL, OPT_MODEL },
    { "base-url", required_argument, NULL, OPT_BASE_URL },
    { "api-key-env", required_argument, NULL, OPT_API_KEY_ENV },
    { "anthropic-version", required_argument, NULL, OPT_ANTHROPIC_VERSION },
    { "system", required_argument, NULL, OPT_SYSTEM },
    { "system-file", required_argument, NULL, OPT_SYSTEM_FILE },
    { "max-tokens", required_argument, NULL, OPT_MAX_TOKENS },
    { "temperature", required_argument, NULL, OPT_TEMPERATURE },
    { "reasoning-effort", required_argument, NULL, OPT_REASONING_EFFORT },
    { "max-completion-tokens", no_argument, NULL, OPT_MAX_COMPLETION_TOKENS },
    { "thinking", required_argument, NULL, OPT_THINKING },
    { "stop", required_argument, NULL, OPT_STOP },
    { "stream", no_argument, NULL, OPT_STREAM },
    { "no-stream", no_argument, NULL, OPT_NO_STREAM },
    { "timeout", required_argument, NULL, OPT_TIMEOUT },
    { "connect-timeout", required_argument, NULL, OPT_CONNECT_TIMEOUT },
    { "idle-timeout", required_argument, NULL, OPT_IDLE_TIMEOUT },
    { "retries", required_argument, NULL, OPT_RETRIES },
    { "retry-base", required_argument, NULL, OPT_RETRY_BASE },
    { "retry-max", required_argument, NULL, OPT_RETRY_MAX },
    { "command", required_argument, NULL, OPT_COMMAND },
    { "record", required_argument, NULL, OPT_RECORD },
    { "replay", required_argument, NULL, OPT_REPLAY },
    { "replay-order", no_argument, NULL, OPT_REPLAY_ORDER },
    { "prices", required_argument, NULL, OPT_PRICES },
    { "json", no_argument, NULL, OPT_JSON },
    { "show-thinking", no_argument, NULL, OPT_SHOW_THINKING },
    { "config", required_argument, NULL, OPT_CONFIG },
    { "quiet", no_argument, NULL, 'q' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
};

struct ask_opts {
    bool json, show_thinking, quiet;
    llm_request req;
};

/* ---------------------------------------------------------------- parsing */

static int parse_number(const char *flag, const char *s, double min, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || v < min)
        return error("%s wants a number of at least %g, not '%s'", flag, min, s);
    *out = v;
    return 0;
}

static void set_str(char **dst, const char *v)
{
    free(*dst);
    *dst = xstrdup(v);
}

/* Applies one flag over the config and request; -1 on a bad value. */
static int apply_flag(int opt, const char *arg, llm_config *cfg, struct ask_opts *o)
{
    double d = 0;
    strbuf sb = STRBUF_INIT;
    switch (opt) {
    case OPT_PROVIDER: {
        int k = llm_provider_from_name(arg);
        if (k < 0)
            return error("unknown provider '%s': use openai, anthropic, command or replay", arg);
        cfg->provider = (llm_provider_kind)k;
        return 0;
    }
    case OPT_MODEL: set_str(&cfg->model, arg); return 0;
    case OPT_BASE_URL: set_str(&cfg->base_url, arg); return 0;
    case OPT_API_KEY_ENV: set_str(&cfg->api_key_env, arg); return 0;
    case OPT_ANTHROPIC_VERSION: set_str(&cfg->anthropic_version, arg); return 0;
    case OPT_SYSTEM: set_str(&o->req.system, arg); return 0;
    case OPT_SYSTEM_FILE:
        if (read_file(arg, &sb, PROMPT_MAX) < 0) {
            strbuf_release(&sb);
            return error("cannot read system prompt '%s'", arg);
        }
        free(o->req.system);
        o->req.system = strbuf_detach(&sb);
        return 0;
    case OPT_MAX_TOKENS:
        if (parse_number("--max-tokens", arg, 1, &d) < 0)
            return -1;
        o->req.max_tokens = (int)d;
        return 0;
    case OPT_TEMPERATURE:
        if (parse_number("--temperature", arg, 0, &d) < 0)
            return -1;
        o->req.temperature = d;
        return 0;
    case OPT_REASONING_EFFORT: set_str(&o->req.reasoning_effort, arg); return 0;
    case OPT_MAX_COMPLETION_TOKENS: cfg->max_completion_tokens = true; return 0;
    case OPT_THINKING:
        if (!strcmp(arg, "adaptive")) {
            o->req.thinking_budget = LLM_THINKING_ADAPTIVE;
            return 0;
        }
        if (parse_number("--thinking", arg, 1024, &d) < 0)
            return -1;
        o->req.thinking_budget = (int)d;
        return 0;
    case OPT_STOP: llm_request_add_stop(&o->req, arg); return 0;
    case OPT_STREAM: cfg->stream = true; return 0;
    case OPT_NO_STREAM: cfg->stream = false; return 0;
    case OPT_TIMEOUT: return parse_number("--timeout", arg, 0.001, &cfg->timeout_s);
    case OPT_CONNECT_TIMEOUT:
        return parse_number("--connect-timeout", arg, 0.001, &cfg->connect_timeout_s);
    case OPT_IDLE_TIMEOUT: return parse_number("--idle-timeout", arg, 1, &cfg->idle_timeout_s);
    case OPT_RETRIES:
        if (parse_number("--retries", arg, 0, &d) < 0)
            return -1;
        cfg->max_retries = (int)d;
        return 0;
    case OPT_RETRY_BASE: return parse_number("--retry-base", arg, 0.001, &cfg->retry_base_s);
    case OPT_RETRY_MAX: return parse_number("--retry-max", arg, 0.001, &cfg->retry_max_s);
    case OPT_COMMAND:
        llm_config_set_command(cfg, arg);
        cfg->provider = LLM_PROVIDER_COMMAND;
        return 0;
    case OPT_RECORD: set_str(&cfg->record_path, arg); return 0;
    case OPT_REPLAY:
        set_str(&cfg->replay_path, arg);
        cfg->provider = LLM_PROVIDER_REPLAY;
        return 0;
    case OPT_REPLAY_ORDER: cfg->replay_order = true; return 0;
    case OPT_PRICES: set_str(&cfg->prices_path, arg); return 0;
    case OPT_JSON: o->json = true; return 0;
    case OPT_SHOW_THINKING: o->show_thinking = true; return 0;
    case 'q': o->quiet = true; return 0;
    default: return 0; /* --config was handled before */
    }
}

/* Defaults, the config file and the environment: everything before the flags. */
static int load_config(int argc, char **argv, llm_config *cfg)
{
    strbuf err = STRBUF_INIT;
    int rc = llm_config_load_cli(argc, argv, cfg, &err);
    if (rc < 0)
        error("%s", err.buf);
    strbuf_release(&err);
    return rc;
}

static int read_prompt(const char *arg, strbuf *prompt)
{
    if (strcmp(arg, "-") != 0) {
        strbuf_adds(prompt, arg);
        return 0;
    }
    if (read_file("/dev/stdin", prompt, PROMPT_MAX) < 0)
        return error("cannot read the prompt from stdin");
    return 0;
}

/* ---------------------------------------------------------------- output */

static void print_usage_line(const llm_result *res, const char *model)
{
    strbuf sb = STRBUF_INIT;
    const llm_usage *u = &res->usage;
    strbuf_addf(&sb, "model %s: %ld input tokens (%ld cached), %ld output (%ld reasoning)",
                res->model ? res->model : model, u->input_tokens, u->cached_input_tokens,
                u->output_tokens, u->reasoning_tokens);
    if (res->cost_known)
        strbuf_addf(&sb, ", $%.6f", res->cost_usd);
    else
        strbuf_adds(&sb, ", cost unknown");
    strbuf_addf(&sb, ", %.3f s, %d %s%s", res->latency_s, res->retries,
                res->retries == 1 ? "retry" : "retries", res->replayed ? ", replayed" : "");
    fprintf(stderr, "cutegen: usage: %s\n", sb.buf);
    strbuf_release(&sb);
}

static void print_json(const llm_result *res)
{
    const llm_usage *u = &res->usage;
    json_t *o = json_pack("{s:s, s:s, s:s?, s:s?, s:{s:I, s:I, s:I, s:I, s:I}, s:f, s:i, s:s, "
                          "s:s, s:i, s:b}",
                          "text", strbuf_str(&res->text), "thinking", strbuf_str(&res->thinking),
                          "finish_reason", res->finish_reason, "model", res->model, "usage",
                          "input_tokens", (json_int_t)u->input_tokens, "cached_input_tokens",
                          (json_int_t)u->cached_input_tokens, "cache_write_tokens",
                          (json_int_t)u->cache_write_tokens, "output_tokens",
                          (json_int_t)u->output_tokens, "reasoning_tokens",
                          (json_int_t)u->reasoning_tokens, "latency_s", res->latency_s,
                          "retries", res->retries, "fail", llm_fail_name(res->fail), "message",
                          strbuf_str(&res->message), "http_status", res->http_status,
                          "replayed", res->replayed);
    json_object_set_new(o, "cost_usd", res->cost_known ? json_real(res->cost_usd) : json_null());
    char *s = json_dumps(o, JSON_COMPACT);
    puts(s);
    free(s);
    json_decref(o);
}

static void print_text(const strbuf *text)
{
    fputs(strbuf_str(text), stdout);
    if (!text->len || text->buf[text->len - 1] != '\n')
        fputc('\n', stdout);
}

/* ---------------------------------------------------------------- the command */

static int run_call(llm_config *cfg, struct ask_opts *o)
{
    strbuf err = STRBUF_INIT;
    llm_client *client = llm_client_new(cfg, &err);
    if (!client) {
        error("%s", err.buf);
        strbuf_release(&err);
        return EXIT_USAGE;
    }
    llm_result res;
    llm_result_init(&res);
    int rc = llm_call(client, &o->req, NULL, &res);
    if (o->show_thinking && res.thinking.len)
        fprintf(stderr, "cutegen: thinking:\n%s\n", res.thinking.buf);
    if (o->json)
        print_json(&res);
    else if (rc == 0 || res.fail == LLM_FAIL_TRUNCATED)
        print_text(&res.text);
    if (!o->quiet && res.fail != LLM_FAIL_BUDGET_EXCEEDED)
        print_usage_line(&res, llm_effective_model(cfg, &o->req));
    if (rc != 0)
        error("model call failed (%s): %s", llm_fail_name(res.fail), res.message.buf);
    int exit_code = rc == 0 ? EXIT_OK : res.fail == LLM_FAIL_CONFIG ? EXIT_USAGE : EXIT_LLM;
    llm_result_release(&res);
    llm_client_free(client);
    strbuf_release(&err);
    return exit_code;
}

int cmd_ask(int argc, char **argv)
{
    llm_config cfg;
    llm_config_init(&cfg);
    struct ask_opts o = { 0 };
    llm_request_init(&o.req);
    int rc = EXIT_USAGE;
    strbuf prompt = STRBUF_INIT;
    int opt;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(usage_text, stdout);
            rc = EXIT_OK;
            goto out;
        }
    if (load_config(argc, argv, &cfg) < 0)
        goto out;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "+qh", options, NULL)) != -1) {
        if (opt == '?' || apply_flag(opt, optarg, &cfg, &o) < 0) {
            fputs("see 'cutegen ask --help'\n", stderr);
            goto out;
        }
    }
    if (optind != argc - 1) {
        error("give one prompt, or '-' to read it from stdin (see 'cutegen ask --help')");
        goto out;
    }
    if (read_prompt(argv[optind], &prompt) < 0)
        goto out;
    llm_request_add(&o.req, "user", strbuf_str(&prompt));
    rc = run_call(&cfg, &o);
out:
    strbuf_release(&prompt);
    llm_request_release(&o.req);
    llm_config_release(&cfg);
    return rc;
}
