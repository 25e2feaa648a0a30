/* cutegen run: take one problem to its best kernel with the agent's tree search. */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "cmd/commands.h"
#include "util.h"

static const char usage_text[] =
    "usage: cutegen run --task PROBLEM.py [options]\n"
    "       cutegen run --resume RUN_DIR [options]\n"
    "\n"
    "Searches for the fastest correct kernel for a PyTorch problem: a first version (or\n"
    "--seed-kernel), then rounds in which the model is asked for children of the best\n"
    "correct kernels, each judged like 'cutegen eval' and fixed when it fails. Profiler\n"
    "digests join the prompts once the kernel's structure has settled. Everything goes\n"
    "to a run directory as it happens; --resume continues a killed run, paying for no\n"
    "model reply twice. Prints the stop reason, the best kernel and its speedup.\n"
    "\n"
    "search:\n"
    "  --run-dir DIR        where the run goes (default runs/<date>-<problem>)\n"
    "  --seed-kernel FILE   start from this kernel instead of asking for a first version;\n"
    "                       'builtin': from the best variant of the built-in recipes\n"
    "  --variants N         built-in recipes: judge only the first N variants (the best\n"
    "                       guesses come first; default all); each judged not correct\n"
    "                       gives its place to the next, at most N times\n"
    "  --children N         children asked per round (default 3)\n"
    "  --fix-attempts N     fixes per failed child (default 2)\n"
    "  --rounds N           at most N rounds (default 6)\n"
    "  --depth N            no node deeper than N (default 8)\n"
    "  --plateau PCT        a round gaining less than PCT%% is stale (default 2)\n"
    "  --plateau-rounds N   stop after N stale rounds in a row (default 2)\n"
    "  --sol-stop F         stop when the best is within F of the speed of light (0.9)\n"
    "  --profile MODE       delayed (default), never or always\n"
    "  --stable-steps N     delayed: structure unchanged over N accepted steps (2)\n"
    "  --profile-depth N    delayed: or from depth N on (default off)\n"
    "model (also from --config FILE, CUTEGEN_PROVIDER, CUTEGEN_MODEL, CUTEGEN_BASE_URL):\n"
    "  --provider P         openai, anthropic, command or replay\n"
    "  --model M, --base-url URL, --max-tokens N\n"
    "  --command 'PROG ARGS'  the command provider's program (request on stdin)\n"
    "  --replay FILE [--replay-order]   serve recorded replies\n"
    "  --record FILE        append every call to a transcript\n"
    "  --budget-usd X, --budget-calls N, --budget-tokens N, --budget-seconds S\n"
    "judging (as cutegen eval): --trials N, --iters N, --warmup N, --timeout S, --device N,\n"
    "  --no-compile, --python PATH, --worker PATH, --cutlass DIR, --arch ARCH, -q\n"
    "final numbers: the best kernel is timed once more inside the reference process,\n"
    "  interleaved with PyTorch on fresh inputs; that speedup is the run's (docs/agent.md)\n"
    "  --no-final           skip it: report the search's numbers (two processes)\n"
    "  --final-rounds N     rounds, the order of the sides alternating (default 10)\n"
    "  --final-iters N      timed calls of each side per round (default 10)\n"
    "\n"
    "With no model configured, run uses the built-in recipes (docs/recipes.md): the task\n"
    "is recognised from its operator graph, every variant worth trying is built and\n"
    "judged, and the best is kept.\n"
    "\n"
    "exit codes: 0 the run ended with a recorded stop reason; others as cutegen eval;\n"
    "10 the model could not be set up. See docs/agent.md.\n";

enum { O_TASK = 256, O_RUN_DIR, O_RESUME, O_SEED, O_CHILDREN, O_FIXES, O_ROUNDS, O_DEPTH,
       O_PLATEAU, O_PLATEAU_ROUNDS, O_SOL_STOP, O_PROFILE, O_STABLE, O_PROFILE_DEPTH,
       O_PROVIDER, O_MODEL, O_BASE_URL, O_MAX_TOKENS, O_COMMAND, O_REPLAY, O_REPLAY_ORDER,
       O_RECORD, O_CONFIG, O_BUDGET_USD, O_BUDGET_CALLS, O_BUDGET_TOKENS, O_BUDGET_SECONDS,
       O_TRIALS, O_ITERS, O_WARMUP, O_TIMEOUT, O_DEVICE, O_NO_COMPILE, O_PYTHON, O_WORKER,
       O_CUTLASS, O_ARCH, O_CHECK_ARGS, O_VARIANTS, O_NO_FINAL, O_FINAL_ROUNDS,
       O_FINAL_ITERS };

static const struct option options[] = {
    { "task", 1, NULL, O_TASK }, { "run-dir", 1, NULL, O_RUN_DIR },
    { "resume", 1, NULL, O_RESUME }, { "seed-kernel", 1, NULL, O_SEED },
    { "children", 1, NULL, O_CHILDREN }, { "fix-attempts", 1, NULL, O_FIXES },
    { "rounds", 1, NULL, O_ROUNDS }, { "depth", 1, NULL, O_DEPTH },
    { "plateau", 1, NULL, O_PLATEAU }, { "plateau-rounds", 1, NULL, O_PLATEAU_ROUNDS },
    { "sol-stop", 1, NULL, O_SOL_STOP }, { "profile", 1, NULL, O_PROFILE },
    { "stable-steps", 1, NULL, O_STABLE }, { "profile-depth", 1, NULL, O_PROFILE_DEPTH },
    { "provider", 1, NULL, O_PROVIDER }, { "model", 1, NULL, O_MODEL },
    { "base-url", 1, NULL, O_BASE_URL }, { "max-tokens", 1, NULL, O_MAX_TOKENS },
    { "command", 1, NULL, O_COMMAND }, { "replay", 1, NULL, O_REPLAY },
    { "replay-order", 0, NULL, O_REPLAY_ORDER }, { "record", 1, NULL, O_RECORD },
    { "config", 1, NULL, O_CONFIG }, { "budget-usd", 1, NULL, O_BUDGET_USD },
    { "budget-calls", 1, NULL, O_BUDGET_CALLS }, { "budget-tokens", 1, NULL, O_BUDGET_TOKENS },
    { "budget-seconds", 1, NULL, O_BUDGET_SECONDS }, { "trials", 1, NULL, O_TRIALS },
    { "iters", 1, NULL, O_ITERS }, { "warmup", 1, NULL, O_WARMUP },
    { "timeout", 1, NULL, O_TIMEOUT }, { "device", 1, NULL, O_DEVICE },
    { "no-compile", 0, NULL, O_NO_COMPILE }, { "python", 1, NULL, O_PYTHON },
    { "worker", 1, NULL, O_WORKER }, { "cutlass", 1, NULL, O_CUTLASS },
    { "arch", 1, NULL, O_ARCH }, { "check-args", 0, NULL, O_CHECK_ARGS },
    { "variants", 1, NULL, O_VARIANTS }, { "no-final", 0, NULL, O_NO_FINAL },
    { "final-rounds", 1, NULL, O_FINAL_ROUNDS }, { "final-iters", 1, NULL, O_FINAL_ITERS },
    { "quiet", 0, NULL, 'q' }, { "help", 0, NULL, 'h' },
    { NULL, 0, NULL, 0 },
};

static int number(const char *flag, const char *s, double min, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !(v >= min))
        return error("%s wants a number of at least %g, not '%s'", flag, min, s);
    *out = v;
    return 0;
}

static void set_str(char **dst, const char *v)
{
    free(*dst);
    *dst = xstrdup(v);
}

/* The config file and the environment, before the flags. */
static int load_llm_config(int argc, char **argv, llm_config *cfg)
{
    strbuf err = STRBUF_INIT;
    int rc = llm_config_load_cli(argc, argv, cfg, &err);
    if (rc < 0)
        error("%s", err.buf);
    strbuf_release(&err);
    return rc;
}

static bool provider_given;
static bool check_only; /* --check-args (cutegen bench): parse the options and stop */

/* Whether a model was configured at all: a flag, CUTEGEN_PROVIDER, or the config file. */
static bool model_configured(int argc, char **argv)
{
    if (provider_given || (getenv("CUTEGEN_PROVIDER") && *getenv("CUTEGEN_PROVIDER")))
        return true;
    const char *path = NULL;
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--config"))
            path = argv[i + 1];
    bool must_exist;
    char *file = llm_config_path(path, &must_exist);
    json_t *cfg = json_load_file(file, 0, NULL);
    bool has = cfg && json_object_get(cfg, "provider");
    json_decref(cfg);
    free(file);
    return has;
}

static int apply(int c, const char *arg, agent_opts *o)
{
    double d = 0;
    int rc = 0;
    switch (c) {
    case O_TASK: o->task_path = arg; o->eval.task_path = arg; break;
    case O_RUN_DIR: o->run_dir = arg; break;
    case O_RESUME: o->run_dir = arg; o->resume = true; break;
    case O_SEED: o->seed_kernel = arg; break;
    case O_CHILDREN: rc = number("--children", arg, 1, &d); o->children = (int)d; break;
    case O_FIXES: rc = number("--fix-attempts", arg, 0, &d); o->fix_attempts = (int)d; break;
    case O_ROUNDS: rc = number("--rounds", arg, 1, &d); o->max_rounds = (int)d; break;
    case O_DEPTH: rc = number("--depth", arg, 1, &d); o->max_depth = (int)d; break;
    case O_PLATEAU: rc = number("--plateau", arg, 0, &d); o->plateau_gain = d / 100; break;
    case O_PLATEAU_ROUNDS:
        rc = number("--plateau-rounds", arg, 1, &d);
        o->plateau_rounds = (int)d;
        break;
    case O_SOL_STOP: rc = number("--sol-stop", arg, 0, &o->sol_stop); break;
    case O_PROFILE:
        if (!strcmp(arg, "never")) o->profile = PROFILE_NEVER;
        else if (!strcmp(arg, "always")) o->profile = PROFILE_ALWAYS;
        else if (!strcmp(arg, "delayed")) o->profile = PROFILE_DELAYED;
        else rc = error("--profile wants never, always or delayed, not '%s'", arg);
        break;
    case O_STABLE: rc = number("--stable-steps", arg, 1, &d); o->stable_steps = (int)d; break;
    case O_PROFILE_DEPTH: rc = number("--profile-depth", arg, 1, &d); o->profile_depth = (int)d; break;
    case O_PROVIDER: {
        provider_given = true;
        int k = llm_provider_from_name(arg);
        if (k < 0)
            return error("unknown provider '%s': use openai, anthropic, command or replay", arg);
        o->llm.provider = (llm_provider_kind)k;
        break;
    }
    case O_MODEL: set_str(&o->llm.model, arg); break;
    case O_BASE_URL: set_str(&o->llm.base_url, arg); break;
    case O_MAX_TOKENS: rc = number("--max-tokens", arg, 1, &d); o->llm.max_tokens = (int)d; break;
    case O_COMMAND: provider_given = true; llm_config_set_command(&o->llm, arg); o->llm.provider = LLM_PROVIDER_COMMAND; break;
    case O_REPLAY: provider_given = true; set_str(&o->llm.replay_path, arg); o->llm.provider = LLM_PROVIDER_REPLAY; break;
    case O_REPLAY_ORDER: o->llm.replay_order = true; break;
    case O_RECORD: set_str(&o->llm.record_path, arg); break;
    case O_CONFIG: break;
    case O_BUDGET_USD: rc = number("--budget-usd", arg, 0, &o->task_limits.dollars); break;
    case O_BUDGET_CALLS: rc = number("--budget-calls", arg, 1, &d); o->task_limits.calls = (long)d; break;
    case O_BUDGET_TOKENS: rc = number("--budget-tokens", arg, 1, &d); o->task_limits.tokens = (long)d; break;
    case O_BUDGET_SECONDS: rc = number("--budget-seconds", arg, 1, &o->task_limits.seconds); break;
    case O_TRIALS: rc = number("--trials", arg, 1, &d); o->eval.trials = (int)d; break;
    case O_ITERS: rc = number("--iters", arg, 1, &d); o->eval.iters = (int)d; break;
    case O_WARMUP: rc = number("--warmup", arg, 0, &d); o->eval.warmup = (int)d; break;
    case O_TIMEOUT: rc = number("--timeout", arg, 1, &o->eval.call_timeout_s); break;
    case O_DEVICE: rc = number("--device", arg, 0, &d); o->eval.device = (int)d; break;
    case O_NO_COMPILE: o->eval.baseline_compile = false; break;
    case O_PYTHON: o->eval.python = arg; break;
    case O_WORKER: o->eval.worker = arg; break;
    case O_CUTLASS: o->eval.cutlass_dir = arg; break;
    case O_ARCH: o->eval.arch = arg; break;
    case O_CHECK_ARGS: check_only = true; break;
    case O_VARIANTS: rc = number("--variants", arg, 1, &d); o->recipe_variants = (int)d; break;
    case O_NO_FINAL: o->eval.final = false; break;
    case O_FINAL_ROUNDS:
        rc = number("--final-rounds", arg, 1, &d);
        o->eval.final_opts.rounds = (int)d;
        break;
    case O_FINAL_ITERS:
        rc = number("--final-iters", arg, 1, &d);
        o->eval.final_opts.iters = (int)d;
        break;
    case 'q': cg_quiet = true; break;
    default: return -1;
    }
    return rc;
}

int cmd_run(int argc, char **argv)
{
    agent_opts o;
    agent_opts_init(&o);
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(usage_text, stdout);
            llm_config_release(&o.llm);
            return EXIT_OK;
        }
    int rc = EXIT_USAGE;
    if (load_llm_config(argc, argv, &o.llm) < 0)
        goto out;
    int c;
    while ((c = getopt_long(argc, argv, "qh", options, NULL)) != -1)
        if (apply(c, optarg, &o) < 0) {
            fputs("see cutegen run --help\n", stderr);
            goto out;
        }
    if (optind < argc) {
        error("unexpected argument '%s' (see cutegen run --help)", argv[optind]);
        goto out;
    }
    if (!o.task_path) {
        error("run needs --task PROBLEM.py (also when resuming: the problem is checked "
              "against the run's)");
        goto out;
    }
    if (check_only) {
        rc = EXIT_OK;
        goto out;
    }
    if (!model_configured(argc, argv)) {
        o.recipes_only = true;
        progress("no model configured (--provider, CUTEGEN_PROVIDER or the config file): "
                 "using the built-in recipes, autotuned");
    }
    strbuf err = STRBUF_INIT;
    rc = agent_run(&o, &err);
    if (rc)
        error("%s", err.buf);
    strbuf_release(&err);
out:
    llm_config_release(&o.llm);
    return rc;
}
