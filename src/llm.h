/*
 * llm: the clients through which cutegen talks to language models.
 *
 * DESIGN. A caller fills a provider-neutral llm_request (model, system prompt, messages,
 * limits, reasoning settings) and calls llm_call() on an llm_client made from an
 * llm_config. The client sends it to one of four providers:
 *   openai     OpenAI-compatible chat completions (OpenAI, vLLM, SGLang, llama.cpp, Ollama)
 *   anthropic  the Anthropic Messages API, with extended thinking
 *   command    an external program: request JSON on stdin, reply text on stdout
 *   replay     replies served from a recorded transcript (JSON Lines)
 * and fills a typed llm_result: the text, why it stopped, the usage as the API reported
 * it, latency, retries, cost from the price table, and a failure kind with a message
 * that says what to do. The library never prints and never exits.
 *
 * Thread safety: llm_call() may be called from many threads at once on one client.
 * Each call uses its own curl handle; the transcript writer, the replay index and the
 * budgets each have their own lock. API keys live only in the client and in the request
 * headers: they are scrubbed from every message, and never written to a transcript.
 *
 * The file is split in banners: the public API first, then the pieces the llm_*.c files
 * share with each other and with the unit tests.
 */
#ifndef CUTEGEN_LLM_H
#define CUTEGEN_LLM_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "strbuf.h"

/* ---------------------------------------------------------------- requests, results */

typedef enum llm_fail {
    LLM_FAIL_NONE = 0,
    LLM_FAIL_HTTP_STATUS,      /* the server answered with an unexpected HTTP status */
    LLM_FAIL_RATE_LIMITED,     /* 429, still after all retries */
    LLM_FAIL_AUTH,             /* 401/403 or no key: the key is missing or refused */
    LLM_FAIL_BAD_REQUEST,      /* 400/404/422: the request is wrong (unknown model, ...) */
    LLM_FAIL_CONTEXT_TOO_LONG, /* the prompt does not fit the model's context */
    LLM_FAIL_TIMEOUT,          /* the call's time limit passed */
    LLM_FAIL_CONNECTION,       /* could not connect, or the connection broke */
    LLM_FAIL_TRUNCATED,        /* the reply hit the output token limit (text is partial) */
    LLM_FAIL_EMPTY_REPLY,      /* the model answered with no text */
    LLM_FAIL_MALFORMED_REPLY,  /* the reply is not what the API promises */
    LLM_FAIL_BUDGET_EXCEEDED,  /* refused before it started: a budget is spent */
    LLM_FAIL_COMMAND_FAILED,   /* the command provider exited non-zero or did not start */
    LLM_FAIL_REPLAY_MISS,      /* the transcript has no reply for this request */
    LLM_FAIL_CONFIG,           /* the client is misconfigured (unknown provider, ...) */
    LLM_FAIL__COUNT
} llm_fail;

/* "none", "http_status", "rate_limited", ... (the names transcripts use). */
const char *llm_fail_name(llm_fail f);
/* The inverse; LLM_FAIL__COUNT for an unknown name. */
llm_fail llm_fail_from_name(const char *name);
/* Whether a failure of this kind is worth another attempt. */
bool llm_fail_retryable(llm_fail f);

typedef struct llm_message {
    char *role;    /* "user" or "assistant" */
    char *content;
} llm_message;

#define LLM_THINKING_OFF 0
#define LLM_THINKING_ADAPTIVE (-1)

typedef struct llm_request {
    char *model;            /* NULL: the client's configured model */
    char *system;           /* NULL: none */
    llm_message *messages;
    size_t n_messages, alloc_messages;
    int max_tokens;         /* output limit; 0: the client's default */
    double temperature;     /* < 0: not sent */
    char *reasoning_effort; /* openai: "low", "medium", "high", ...; NULL: not sent */
    int thinking_budget;    /* anthropic: tokens, LLM_THINKING_ADAPTIVE, or OFF */
    char **stop;
    size_t n_stop;
} llm_request;

void llm_request_init(llm_request *r);
void llm_request_release(llm_request *r);
/* Copies role and content. */
void llm_request_add(llm_request *r, const char *role, const char *content);
void llm_request_add_stop(llm_request *r, const char *stop);

typedef struct llm_usage {
    long input_tokens;        /* all prompt tokens, cached ones included */
    long cached_input_tokens; /* of which read from the provider's prompt cache */
    long cache_write_tokens;  /* of which written to the cache (anthropic) */
    long output_tokens;       /* all output tokens, reasoning included */
    long reasoning_tokens;    /* of which reasoning (when the API says) */
} llm_usage;

typedef struct llm_result {
    llm_fail fail;
    int http_status;      /* last HTTP status seen, 0 if none */
    strbuf message;       /* why it failed, and what to do; "" on success */
    strbuf text;          /* the reply (partial when truncated) */
    strbuf thinking;      /* thinking text, where the API returns it */
    char *finish_reason;  /* as the API said: "stop", "end_turn", "length", ... */
    char *model;          /* the model that answered, as the API said */
    llm_usage usage;
    double latency_s;     /* wall time of the whole call, retries included */
    int retries;          /* attempts after the first */
    double cost_usd;      /* from the price table; see cost_known */
    bool cost_known;
    bool replayed;        /* served from a transcript */
} llm_result;

void llm_result_init(llm_result *r);
void llm_result_release(llm_result *r);
/* Clears a result for another attempt (keeps nothing). */
void llm_result_reset(llm_result *r);
/* Sets fail and message (printf style). */
__attribute__((format(printf, 3, 4))) void llm_result_fail(llm_result *r, llm_fail f,
                                                           const char *fmt, ...);

/* ---------------------------------------------------------------- configuration */

typedef enum llm_provider_kind {
    LLM_PROVIDER_OPENAI,
    LLM_PROVIDER_ANTHROPIC,
    LLM_PROVIDER_COMMAND,
    LLM_PROVIDER_REPLAY,
    LLM_PROVIDER__COUNT
} llm_provider_kind;

const char *llm_provider_name(llm_provider_kind k);
/* -1 for an unknown name. */
int llm_provider_from_name(const char *name);

/* Limits; 0 means no limit. */
typedef struct llm_limits {
    long calls;
    long tokens;     /* input + output */
    double dollars;
    double seconds;  /* wall time since the budget was made */
} llm_limits;

typedef struct llm_config {
    llm_provider_kind provider;
    char *model;
    char *base_url;         /* NULL: the provider's public endpoint */
    char *api_key_env;      /* NULL: OPENAI_API_KEY / ANTHROPIC_API_KEY */
    char *anthropic_version;
    char **command;         /* command provider: argv, NULL-terminated */
    char *replay_path;
    bool replay_order;      /* serve in order instead of by request hash */
    char *record_path;      /* append every call to this transcript */
    char *prices_path;      /* NULL: the shipped table */
    bool stream;            /* stream replies (SSE) */
    bool max_completion_tokens; /* openai: send max_completion_tokens, not max_tokens */
    int max_tokens;         /* default output limit */
    double timeout_s;       /* total time limit of one call, retries included */
    double connect_timeout_s;
    double idle_timeout_s;  /* no byte for this long: the attempt fails */
    int max_retries;
    double retry_base_s;    /* first backoff delay */
    double retry_max_s;     /* longest backoff delay */
    llm_limits run_limits;  /* budget of the client (a run) */
} llm_config;

/* Defaults: openai, streaming on, 4 retries, 1 s..60 s backoff, 30 min limit. */
void llm_config_init(llm_config *c);
void llm_config_release(llm_config *c);
/* Where the config file is: path if given, else $CUTEGEN_CONFIG, else
 * ~/.config/cutegen/config.json. malloc'd; *explicit_path says whether it must exist. */
char *llm_config_path(const char *path, bool *must_exist);
/* Reads a JSON config file over c. A missing file that need not exist is no error. */
int llm_config_load_file(llm_config *c, const char *path, bool must_exist, strbuf *err);
/* What a command does before its flags: the config file (--config FILE or
 * --config=FILE found in argv, else the default path) and then the environment. */
int llm_config_load_cli(int argc, char **argv, llm_config *c, strbuf *err);
/* Applies CUTEGEN_PROVIDER, CUTEGEN_MODEL, CUTEGEN_BASE_URL. */
int llm_config_load_env(llm_config *c, strbuf *err);
/* Splits "prog arg arg" on blanks (no shell, no quoting) into c->command. */
void llm_config_set_command(llm_config *c, const char *line);
/* The variable that holds the key for this config ("" for command and replay). */
const char *llm_config_key_env(const llm_config *c);

/* ---------------------------------------------------------------- budgets */

/* A thread-safe account of calls, tokens, dollars and time against limits. */
typedef struct llm_budget {
    pthread_mutex_t lock;
    llm_limits limits;
    double started;   /* now_seconds() at init */
    long calls;       /* admitted, finished or not */
    long tokens;
    double dollars;
} llm_budget;

void llm_budget_init(llm_budget *b, const llm_limits *limits);
void llm_budget_release(llm_budget *b);
/* Admits one more call, or returns -1 with the reason in why when a limit is reached. */
int llm_budget_admit(llm_budget *b, const char *name, strbuf *why);
/* Adds a finished call's tokens and cost. */
void llm_budget_charge(llm_budget *b, const llm_result *r);

/* ---------------------------------------------------------------- the client */

typedef struct llm_client llm_client;

/* Makes a client; NULL with err set when the config cannot work (no key, unknown
 * provider, unreadable transcript or price table). The config is copied. */
llm_client *llm_client_new(const llm_config *cfg, strbuf *err);
void llm_client_free(llm_client *c);
/* The client's run budget (its config's run_limits). */
llm_budget *llm_client_budget(llm_client *c);

/* Makes one call. task may be NULL; both it and the run budget must admit the call.
 * Returns 0 when res->fail is LLM_FAIL_NONE, else -1; res is filled either way. */
int llm_call(llm_client *c, const llm_request *req, llm_budget *task, llm_result *res);

/* ---------------------------------------------------------------- prices */

typedef struct llm_price {
    char *model;           /* exact name or prefix ("claude-sonnet-4-5" covers dated ids) */
    double input;          /* dollars per million tokens */
    double cached_input;
    double cache_write;
    double output;
} llm_price;

typedef struct llm_prices {
    llm_price *items;
    size_t n;
    char *date;            /* when the prices were taken */
    char *path;
} llm_prices;

/* Loads a price table (path NULL: $CUTEGEN_SOURCE_DIR/prices/prices.json). */
int llm_prices_load(llm_prices *p, const char *path, strbuf *err);
void llm_prices_release(llm_prices *p);
/* The entry for a model: exact match, else the longest prefix; NULL if none. */
const llm_price *llm_prices_find(const llm_prices *p, const char *model);
/* Cost in dollars of a usage at a price. */
double llm_price_cost(const llm_price *price, const llm_usage *u);

/* ================================================================ internals
 * Shared by the llm_*.c files and their unit tests; not for other modules. */

/* Server-sent events: bytes in, (event, data) out. Lines are capped at max_line. */
typedef int (*llm_sse_fn)(void *ctx, const char *event, const char *data);
typedef struct llm_sse {
    strbuf line;     /* partial line */
    strbuf event;    /* event name of the event being read */
    strbuf data;     /* its data lines joined by \n */
    size_t max_line;
    bool last_cr;    /* the last byte fed was \r */
    llm_sse_fn fn;
    void *ctx;
} llm_sse;

void llm_sse_init(llm_sse *s, llm_sse_fn fn, void *ctx);
void llm_sse_release(llm_sse *s);
/* Feeds bytes; returns what fn returned when non-zero (stop), -2 on an over-long line. */
int llm_sse_feed(llm_sse *s, const char *data, size_t len);

/* One HTTP POST attempt's outcome. */
typedef struct llm_http_reply {
    long status;
    strbuf body;          /* the body when not streamed (capped) */
    double retry_after_s; /* from Retry-After / retry-after-ms, or -1 */
    int curl_code;        /* CURLcode */
    strbuf curl_error;
    bool streamed;        /* the body went to the SSE parser */
} llm_http_reply;

typedef struct llm_http_call llm_http_call;

/* What a wire format (openai, anthropic) supplies to the HTTP exchange. */
typedef struct llm_wire {
    /* Parses a whole non-streamed 2xx body into res. */
    void (*parse_body)(const char *body, size_t len, llm_result *res);
    /* Starts, feeds and ends a stream; state is wire-owned. */
    void *(*stream_begin)(llm_result *res);
    int (*stream_event)(void *state, const char *event, const char *data);
    void (*stream_end)(void *state, bool complete_transfer);
    /* Classifies a non-2xx reply. */
    void (*parse_error)(const llm_http_call *call, long status, const char *body,
                        llm_result *res);
} llm_wire;

struct llm_http_call {
    const char *url;
    const char *const *headers; /* "Name: value", NULL-terminated */
    const char *body;
    bool stream;
    const llm_wire *wire;
    const llm_config *cfg;
    const char *secret;         /* scrubbed from every message */
    const char *key_env;        /* named in auth messages */
    const char *model;
};

/* POSTs with retries, backoff, Retry-After and the total time limit; fills res. */
void llm_http_exchange(const llm_http_call *call, llm_result *res);
/* Parses a Retry-After value (seconds or HTTP date); -1 if unusable. */
double llm_parse_retry_after(const char *value);
/* The backoff before retry number n (0-based), with jitter from seed. */
double llm_backoff_delay(const llm_config *cfg, int n, unsigned *seed);
/* Replaces every occurrence of secret in sb by "[redacted]". */
void llm_redact(strbuf *sb, const char *secret);
/* Common classification of HTTP error statuses (messages say what to do). */
void llm_classify_status(long status, const char *api_message, const char *api_code,
                         const char *model, const char *key_env, llm_result *res);

/* Wire formats. */
extern const llm_wire llm_openai_wire;
extern const llm_wire llm_anthropic_wire;
/* Request bodies (malloc'd JSON text). */
char *llm_openai_body(const llm_config *cfg, const llm_request *req, bool stream);
char *llm_anthropic_body(const llm_config *cfg, const llm_request *req, bool stream);

/* The canonical JSON of a request (sorted keys, compact) and its SHA-256. */
char *llm_request_canonical(const llm_request *req);
void llm_request_hash(const llm_request *req, char out[65]);
/* The effective model/max_tokens of a request under a config. */
const char *llm_effective_model(const llm_config *cfg, const llm_request *req);
int llm_effective_max_tokens(const llm_config *cfg, const llm_request *req);
/* Checks a finished reply: empty text or a hit output limit become failures. */
void llm_result_check_reply(llm_result *res);

/* Providers. */
void llm_openai_call(const llm_config *cfg, const char *key, const llm_request *req,
                     llm_result *res);
void llm_anthropic_call(const llm_config *cfg, const char *key, const llm_request *req,
                        llm_result *res);
void llm_command_call(const llm_config *cfg, const llm_request *req, llm_result *res);

/* Transcripts: the recorder appends; the replay index serves. */
typedef struct llm_replay llm_replay;
llm_replay *llm_replay_open(const char *path, bool in_order, strbuf *err);
void llm_replay_free(llm_replay *rp);
void llm_replay_call(llm_replay *rp, const llm_request *req, const char *model,
                     llm_result *res);
/* Appends one line for a finished call (thread-safe per process through lock). */
int llm_record(const char *path, pthread_mutex_t *lock, const char *provider,
               const llm_request *req, const char *model, const llm_result *res,
               const char *secret, strbuf *err);

#endif
