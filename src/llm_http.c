/*
 * llm_http: the HTTP transport of the openai and anthropic providers, over libcurl.
 *
 * One POST per attempt, each on its own curl handle (so calls from many threads never
 * share one); curl_global_init runs once. A 2xx text/event-stream reply is fed to the
 * wire format's stream parser as it arrives; any other body is collected (capped) and
 * parsed at the end. Failed attempts that are worth repeating (429, 408, 5xx, 529,
 * time-outs, broken connections) are repeated with exponential backoff and jitter, or
 * after the delay the server named in Retry-After, as long as the call's total time
 * limit allows. The API key is scrubbed from every message before it leaves.
 */
#include "llm.h"

#include <curl/curl.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

#define MAX_BODY (64u << 20)

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

static void curl_init_once(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* ---------------------------------------------------------------- helpers */

double llm_parse_retry_after(const char *value)
{
    while (*value == ' ' || *value == '\t')
        value++;
    if (!*value)
        return -1;
    char *end;
    errno = 0;
    double s = strtod(value, &end);
    if (end != value && errno == 0) {
        while (*end == ' ' || *end == '\r' || *end == '\n')
            end++;
        if (!*end)
            return s >= 0 ? s : -1;
    }
    time_t when = curl_getdate(value, NULL);
    if (when < 0)
        return -1;
    double d = difftime(when, time(NULL));
    return d > 0 ? d : 0;
}

double llm_backoff_delay(const llm_config *cfg, int n, unsigned *seed)
{
    double base = cfg->retry_base_s > 0 ? cfg->retry_base_s : 1.0;
    double cap = cfg->retry_max_s > 0 ? cfg->retry_max_s : 60.0;
    double d = base * pow(2.0, n);
    if (d > cap)
        d = cap;
    /* "Equal jitter": half fixed, half random, so retries from many threads spread. */
    double r = (double)rand_r(seed) / (double)RAND_MAX;
    return d * (0.5 + 0.5 * r);
}

void llm_redact(strbuf *sb, const char *secret)
{
    if (!secret || strlen(secret) < 4 || !sb->len)
        return;
    size_t n = strlen(secret);
    strbuf out = STRBUF_INIT;
    const char *p = sb->buf;
    const char *hit;
    while ((hit = strstr(p, secret))) {
        strbuf_add(&out, p, (size_t)(hit - p));
        strbuf_adds(&out, "[redacted]");
        p = hit + n;
    }
    if (p == sb->buf) {
        strbuf_release(&out);
        return;
    }
    strbuf_adds(&out, p);
    strbuf_release(sb);
    *sb = out;
}

static bool contains_ci(const char *s, const char *needle)
{
    return s && strcasestr(s, needle) != NULL;
}

static bool looks_like_context_error(const char *msg, const char *code)
{
    return contains_ci(code, "context_length") || contains_ci(msg, "context length") ||
           contains_ci(msg, "context_length") || contains_ci(msg, "prompt is too long") ||
           contains_ci(msg, "maximum context") || contains_ci(msg, "context window") ||
           contains_ci(msg, "too many tokens");
}

void llm_classify_status(long status, const char *api_message, const char *api_code,
                         const char *model, const char *key_env, llm_result *res)
{
    const char *msg = api_message && *api_message ? api_message : "no message";
    res->http_status = (int)status;
    if (status == 401 || status == 403) {
        if (key_env && *key_env)
            llm_result_fail(res, LLM_FAIL_AUTH,
                            "the server refused the API key (HTTP %ld: %s): set %s to a "
                            "valid key", status, msg, key_env);
        else
            llm_result_fail(res, LLM_FAIL_AUTH,
                            "the server wants an API key (HTTP %ld: %s): name the variable "
                            "that holds it with --api-key-env", status, msg);
    } else if (status == 404) {
        llm_result_fail(res, LLM_FAIL_BAD_REQUEST,
                        "not found (HTTP 404: %s): check that model '%s' exists there and "
                        "that the base URL is right", msg, model);
    } else if (status == 413 ||
               ((status == 400 || status == 422) && looks_like_context_error(msg, api_code))) {
        llm_result_fail(res, LLM_FAIL_CONTEXT_TOO_LONG,
                        "the prompt is too long for model '%s' (HTTP %ld: %s): shorten it "
                        "or use a model with a longer context", model, status, msg);
    } else if (status == 400 || status == 422) {
        llm_result_fail(res, LLM_FAIL_BAD_REQUEST,
                        "the server rejected the request (HTTP %ld: %s): check the model "
                        "name '%s' and the parameters", status, msg, model);
    } else if (status == 429) {
        llm_result_fail(res, LLM_FAIL_RATE_LIMITED,
                        "rate limited (HTTP 429: %s): wait, make fewer calls at once, or "
                        "raise the account's limits", msg);
    } else {
        llm_result_fail(res, LLM_FAIL_HTTP_STATUS, "the server answered HTTP %ld: %s",
                        status, msg);
    }
}

/* ---------------------------------------------------------------- one attempt */

struct attempt {
    const llm_http_call *call;
    llm_result *res;
    llm_http_reply reply;
    CURL *h;
    llm_sse sse;
    void *stream_state;
    bool too_big;
    bool bad_stream;
};

static size_t on_header(char *buf, size_t size, size_t n, void *ud)
{
    struct attempt *a = ud;
    size_t len = size * n;
    char *line = xstrndup(buf, len);
    char *colon = strchr(line, ':');
    if (colon) {
        *colon = '\0';
        if (!strcasecmp(line, "retry-after") && a->reply.retry_after_s < 0)
            a->reply.retry_after_s = llm_parse_retry_after(colon + 1);
        else if (!strcasecmp(line, "retry-after-ms")) {
            double ms = llm_parse_retry_after(colon + 1);
            if (ms >= 0)
                a->reply.retry_after_s = ms / 1000.0;
        }
    }
    free(line);
    return len;
}

static int sse_event(void *ctx, const char *event, const char *data)
{
    struct attempt *a = ctx;
    return a->call->wire->stream_event(a->stream_state, event, data);
}

static bool wants_stream(struct attempt *a)
{
    if (!a->call->stream)
        return false;
    long status = 0;
    char *ctype = NULL;
    curl_easy_getinfo(a->h, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_getinfo(a->h, CURLINFO_CONTENT_TYPE, &ctype);
    return status >= 200 && status < 300 && ctype && str_starts_with(ctype, "text/event-stream");
}

static size_t on_write(char *p, size_t size, size_t n, void *ud)
{
    struct attempt *a = ud;
    size_t len = size * n;
    if (wants_stream(a)) {
        if (!a->reply.streamed) {
            a->reply.streamed = true;
            a->stream_state = a->call->wire->stream_begin(a->res);
            llm_sse_init(&a->sse, sse_event, a);
        }
        if (llm_sse_feed(&a->sse, p, len) == -2) {
            a->bad_stream = true;
            return 0;
        }
        return len;
    }
    if (a->reply.body.len + len > MAX_BODY) {
        a->too_big = true;
        return 0;
    }
    strbuf_add(&a->reply.body, p, len);
    return len;
}

static long ms(double s)
{
    return s > 0 ? (long)(s * 1000.0) + 1 : 0;
}

static void perform(struct attempt *a, double remaining_s)
{
    const llm_http_call *call = a->call;
    const llm_config *cfg = call->cfg;
    struct curl_slist *hdrs = NULL;
    for (const char *const *h = call->headers; h && *h; h++)
        hdrs = curl_slist_append(hdrs, *h);
    char errbuf[CURL_ERROR_SIZE] = "";
    a->h = curl_easy_init();
    if (!a->h)
        BUG("curl_easy_init failed");
    curl_easy_setopt(a->h, CURLOPT_URL, call->url);
    curl_easy_setopt(a->h, CURLOPT_POSTFIELDS, call->body);
    curl_easy_setopt(a->h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(call->body));
    curl_easy_setopt(a->h, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(a->h, CURLOPT_USERAGENT, "cutegen/" CUTEGEN_VERSION);
    curl_easy_setopt(a->h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(a->h, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(a->h, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(a->h, CURLOPT_WRITEDATA, a);
    curl_easy_setopt(a->h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(a->h, CURLOPT_HEADERDATA, a);
    curl_easy_setopt(a->h, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(a->h, CURLOPT_TIMEOUT_MS, ms(remaining_s));
    curl_easy_setopt(a->h, CURLOPT_CONNECTTIMEOUT_MS, ms(cfg->connect_timeout_s));
    if (cfg->idle_timeout_s > 0) {
        curl_easy_setopt(a->h, CURLOPT_LOW_SPEED_LIMIT, 1L);
        curl_easy_setopt(a->h, CURLOPT_LOW_SPEED_TIME, (long)ceil(cfg->idle_timeout_s));
    }
    a->reply.curl_code = (int)curl_easy_perform(a->h);
    curl_easy_getinfo(a->h, CURLINFO_RESPONSE_CODE, &a->reply.status);
    strbuf_adds(&a->reply.curl_error,
                *errbuf ? errbuf : curl_easy_strerror((CURLcode)a->reply.curl_code));
    curl_easy_cleanup(a->h);
    a->h = NULL;
    curl_slist_free_all(hdrs);
}

/* Turns a finished attempt into res->fail and res->message. */
static void classify(struct attempt *a, double limit_s)
{
    const llm_http_call *call = a->call;
    llm_result *res = a->res;
    CURLcode code = (CURLcode)a->reply.curl_code;
    res->http_status = (int)a->reply.status;
    if (a->reply.streamed)
        call->wire->stream_end(a->stream_state, code == CURLE_OK);
    if (a->bad_stream) {
        llm_result_fail(res, LLM_FAIL_MALFORMED_REPLY, "the event stream has an over-long line");
    } else if (a->too_big) {
        llm_result_fail(res, LLM_FAIL_MALFORMED_REPLY, "the reply is larger than %u MiB",
                        MAX_BODY >> 20);
    } else if (code == CURLE_OPERATION_TIMEDOUT) {
        llm_result_fail(res, LLM_FAIL_TIMEOUT,
                        "no complete reply from '%s' in time (%s; the call's limit is %g s): "
                        "raise --timeout, or check the server", call->url,
                        a->reply.curl_error.buf, limit_s);
    } else if (code == CURLE_URL_MALFORMAT || code == CURLE_UNSUPPORTED_PROTOCOL) {
        llm_result_fail(res, LLM_FAIL_CONFIG, "cannot use the URL '%s' (%s): check --base-url",
                        call->url, a->reply.curl_error.buf);
    } else if (code != CURLE_OK) {
        llm_result_fail(res, LLM_FAIL_CONNECTION,
                        "the connection to '%s' failed (%s): is the server up, and is the "
                        "base URL right?", call->url, a->reply.curl_error.buf);
    } else if (a->reply.status < 200 || a->reply.status >= 300) {
        call->wire->parse_error(call, a->reply.status, strbuf_str(&a->reply.body), res);
    } else if (!a->reply.streamed) {
        call->wire->parse_body(a->reply.body.buf ? a->reply.body.buf : "", a->reply.body.len,
                               res);
    }
    if (res->fail == LLM_FAIL_NONE)
        llm_result_check_reply(res);
}

static void attempt_release(struct attempt *a)
{
    if (a->reply.streamed)
        llm_sse_release(&a->sse);
    strbuf_release(&a->reply.body);
    strbuf_release(&a->reply.curl_error);
}

/* Whether to try again after this outcome. */
static bool should_retry(const llm_result *res)
{
    switch (res->fail) {
    case LLM_FAIL_RATE_LIMITED:
    case LLM_FAIL_TIMEOUT:
    case LLM_FAIL_CONNECTION:
        return true;
    case LLM_FAIL_HTTP_STATUS:
        return res->http_status == 408 || res->http_status == 529 ||
               (res->http_status >= 500 && res->http_status <= 504) || res->http_status == 0;
    default:
        return false;
    }
}

static void sleep_s(double s)
{
    struct timespec ts = { (time_t)s, (long)((s - floor(s)) * 1e9) };
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

/* Starts a fresh attempt in res, keeping the count of retries. */
static void reset_for_attempt(llm_result *res)
{
    int retries = res->retries;
    llm_result_reset(res);
    res->retries = retries;
}

void llm_http_exchange(const llm_http_call *call, llm_result *res)
{
    pthread_once(&curl_once, curl_init_once);
    const llm_config *cfg = call->cfg;
    double start = now_seconds();
    double limit = cfg->timeout_s > 0 ? cfg->timeout_s : 1e9;
    unsigned seed = (unsigned)(start * 1e6) ^ (unsigned)(uintptr_t)res;
    for (int n = 0;; n++) {
        reset_for_attempt(res);
        struct attempt a;
        memset(&a, 0, sizeof a);
        a.call = call;
        a.res = res;
        a.reply.retry_after_s = -1;
        strbuf_init(&a.reply.body);
        strbuf_init(&a.reply.curl_error);
        perform(&a, limit - (now_seconds() - start));
        classify(&a, limit);
        double retry_after = a.reply.retry_after_s;
        attempt_release(&a);
        if (!should_retry(res))
            break;
        if (n >= cfg->max_retries) {
            if (n > 0)
                strbuf_addf(&res->message, " (gave up after %d retries)", n);
            break;
        }
        double delay = retry_after >= 0 ? retry_after : llm_backoff_delay(cfg, n, &seed);
        double left = limit - (now_seconds() - start);
        if (delay >= left) {
            strbuf_addf(&res->message, " (no time left for a retry in %g s after %d retries%s)",
                        delay, n, retry_after >= 0 ? "; the server's Retry-After" : "");
            break;
        }
        sleep_s(delay);
        res->retries = n + 1;
    }
    res->latency_s = now_seconds() - start;
    llm_redact(&res->message, call->secret);
}
