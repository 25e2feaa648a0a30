/*
 * llm_command: the `command` provider. Runs the program the user named (an argv vector,
 * never a shell string) through proc_run, writes the request to its stdin as JSON
 * ({"model", "system", "messages", "max_tokens", ...}: the canonical request) and takes
 * its stdout as the reply text. A non-zero exit, a signal or the time limit is a failed
 * call; its stderr's tail goes into the message.
 */
#include "llm.h"

#include <jansson.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>

#include "proc.h"
#include "util.h"

#define COMMAND_MAX_OUTPUT (16u << 20)

/* The last line of a program's stderr, for messages. */
static void tail_line(const strbuf *err, strbuf *out)
{
    strbuf tmp = STRBUF_INIT;
    strbuf_adds(&tmp, strbuf_str(err));
    strbuf_trim_end(&tmp);
    const char *nl = strrchr(tmp.buf ? tmp.buf : "", '\n');
    strbuf_adds(out, nl ? nl + 1 : strbuf_str(&tmp));
    strbuf_release(&tmp);
}

/* Runs the program with SIGPIPE blocked in this thread: a program that exits without
 * reading its stdin must fail the call, not kill cutegen. A SIGPIPE left pending is
 * taken before the mask is restored. */
static int run_without_sigpipe(const proc_opts *opts, proc_result *pr)
{
    sigset_t pipe_set, old;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
    int rc = proc_run(opts, pr);
    struct timespec zero = { 0, 0 };
    while (sigtimedwait(&pipe_set, NULL, &zero) == SIGPIPE)
        ;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

void llm_command_call(const llm_config *cfg, const llm_request *req, llm_result *res)
{
    if (!cfg->command || !cfg->command[0]) {
        llm_result_fail(res, LLM_FAIL_CONFIG,
                        "the command provider needs a program: give --command or "
                        "\"command\" in the config");
        return;
    }
    char *input = llm_request_canonical(req);
    proc_opts opts = {
        .argv = (const char *const *)cfg->command,
        .stdin_data = input,
        .stdin_len = strlen(input),
        .timeout_s = cfg->timeout_s,
        .max_output = COMMAND_MAX_OUTPUT,
    };
    proc_result pr;
    proc_result_init(&pr);
    double start = now_seconds();
    int rc = run_without_sigpipe(&opts, &pr);
    res->latency_s = now_seconds() - start;
    strbuf tail = STRBUF_INIT;
    tail_line(&pr.err, &tail);
    if (rc < 0) {
        llm_result_fail(res, LLM_FAIL_COMMAND_FAILED, "cannot run '%s' (%s): check --command",
                        cfg->command[0], tail.buf ? tail.buf : "");
    } else if (pr.timed_out) {
        llm_result_fail(res, LLM_FAIL_TIMEOUT,
                        "'%s' did not finish within %g s: raise --timeout", cfg->command[0],
                        cfg->timeout_s);
    } else if (pr.exit_code != 0) {
        llm_result_fail(res, LLM_FAIL_COMMAND_FAILED, "'%s' failed with exit code %d%s%s",
                        cfg->command[0], pr.exit_code, tail.len ? ": " : "",
                        strbuf_str(&tail));
    } else if (pr.truncated) {
        llm_result_fail(res, LLM_FAIL_MALFORMED_REPLY, "'%s' printed more than %u MiB",
                        cfg->command[0], COMMAND_MAX_OUTPUT >> 20);
    } else {
        strbuf_adds(&res->text, strbuf_str(&pr.out));
        res->finish_reason = xstrdup("stop");
        res->model = xstrdup(llm_effective_model(cfg, req));
        llm_result_check_reply(res);
    }
    strbuf_release(&tail);
    proc_result_release(&pr);
    free(input);
}
