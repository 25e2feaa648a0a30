/* cutegen eval: judge a kernel against a PyTorch problem and print the verdict. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/commands.h"
#include "eval.h"
#include "util.h"

static const char usage_text[] =
    "usage: cutegen eval --task PROBLEM.py --kernel KERNEL.cu [options]\n"
    "\n"
    "Judges a CuTe/CUDA kernel (written against include/cutegen/abi.h, see docs/abi.md)\n"
    "against a PyTorch problem (KernelBench format: Model, get_inputs, get_init_inputs).\n"
    "Builds it, checks it statically, runs it in an isolated worker on fresh trials and\n"
    "compares with PyTorch, then times it and PyTorch (eager, torch.compile) the same way:\n"
    "L2 flushed before each call, CUDA events around it, the device synchronised.\n"
    "\n"
    "options:\n"
    "  --task FILE        the problem (required)\n"
    "  --kernel FILE      the candidate kernel .cu (required)\n"
    "  --json             print the whole report as one JSON object\n"
    "  --trials N         correctness trials, each with fresh random inputs (default 5)\n"
    "  --warmup N         warm-up calls before timing (default 10)\n"
    "  --iters N          timed calls (default 100)\n"
    "  --atol X --rtol X  tolerances (default by dtype: fp32 1e-4, fp16/bf16 1e-2)\n"
    "  --no-time          only check correctness\n"
    "  --no-baseline      do not time PyTorch\n"
    "  --no-compile       time eager PyTorch only (torch.compile takes a while)\n"
    "  --no-cache         recompute the task spec and baselines\n"
    "  --final            once it is ok, time the kernel again inside the reference\n"
    "                     process, interleaved with PyTorch on fresh inputs (the\n"
    "                     numbers 'cutegen run' reports); in the report as \"final\"\n"
    "  --final-rounds N   rounds of the final timing, the order of the sides\n"
    "                     alternating (default 10)\n"
    "  --final-iters N    timed calls of each side per round (default 10)\n"
    "  --timeout S        time limit of one kernel call (default 60)\n"
    "  --build-timeout S  time limit of the build (default 300)\n"
    "  --build-mode M     split or plain (see cutegen build --help; default\n"
    "                     $CUTEGEN_BUILD_MODE, else split)\n"
    "  --seed N           first trial seed (default: random)\n"
    "  --device N         CUDA device (default 0)\n"
    "  --arch ARCH        nvcc arch (default: the GPU's own, sm_90a on Hopper)\n"
    "  --cutlass DIR      CUTLASS include directory (default: $CUTLASS_DIR, nvidia-cutlass)\n"
    "  --python PATH      python3 with torch (default: $CUTEGEN_PYTHON or python3)\n"
    "  --worker PATH      the worker binary (default: next to cutegen)\n"
    "  --work-dir DIR     where logs and report.json go (default: in the cache)\n"
    "  -q, --quiet        no progress lines\n"
    "\n"
    "verdicts: ok, compile_error, runtime_error, wrong_result, timeout, rejected\n"
    "exit codes: 0 ok; 1 judged and not ok; 2 usage; 3 bad problem file; 4 bad kernel\n"
    "file; 5 no GPU; 6 no CUTLASS; 7 no torch; 8 a tool missing; 9 internal error.\n";

enum {
    OPT_JSON = 256, OPT_TRIALS, OPT_WARMUP, OPT_ITERS, OPT_ATOL, OPT_RTOL, OPT_NO_TIME,
    OPT_NO_BASELINE, OPT_NO_COMPILE, OPT_NO_CACHE, OPT_TIMEOUT, OPT_BUILD_TIMEOUT, OPT_SEED,
    OPT_DEVICE, OPT_ARCH, OPT_CUTLASS, OPT_PYTHON, OPT_WORKER, OPT_WORK_DIR, OPT_TASK,
    OPT_KERNEL, OPT_BUILD_MODE, OPT_FINAL, OPT_FINAL_ROUNDS, OPT_FINAL_ITERS
};

static const struct option options[] = {
    { "task", required_argument, NULL, OPT_TASK },
    { "kernel", required_argument, NULL, OPT_KERNEL },
    { "json", no_argument, NULL, OPT_JSON },
    { "trials", required_argument, NULL, OPT_TRIALS },
    { "warmup", required_argument, NULL, OPT_WARMUP },
    { "iters", required_argument, NULL, OPT_ITERS },
    { "atol", required_argument, NULL, OPT_ATOL },
    { "rtol", required_argument, NULL, OPT_RTOL },
    { "no-time", no_argument, NULL, OPT_NO_TIME },
    { "no-baseline", no_argument, NULL, OPT_NO_BASELINE },
    { "no-compile", no_argument, NULL, OPT_NO_COMPILE },
    { "no-cache", no_argument, NULL, OPT_NO_CACHE },
    { "final", no_argument, NULL, OPT_FINAL },
    { "final-rounds", required_argument, NULL, OPT_FINAL_ROUNDS },
    { "final-iters", required_argument, NULL, OPT_FINAL_ITERS },
    { "timeout", required_argument, NULL, OPT_TIMEOUT },
    { "build-timeout", required_argument, NULL, OPT_BUILD_TIMEOUT },
    { "build-mode", required_argument, NULL, OPT_BUILD_MODE },
    { "seed", required_argument, NULL, OPT_SEED },
    { "device", required_argument, NULL, OPT_DEVICE },
    { "arch", required_argument, NULL, OPT_ARCH },
    { "cutlass", required_argument, NULL, OPT_CUTLASS },
    { "python", required_argument, NULL, OPT_PYTHON },
    { "worker", required_argument, NULL, OPT_WORKER },
    { "work-dir", required_argument, NULL, OPT_WORK_DIR },
    { "quiet", no_argument, NULL, 'q' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
};

static int parse_int(const char *flag, const char *s, int min, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*end || v < min || v > 1000000) {
        error("%s wants a whole number >= %d, not '%s'", flag, min, s);
        return -1;
    }
    *out = (int)v;
    return 0;
}

static int parse_double(const char *flag, const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (*end || !(v >= 0)) {
        error("%s wants a number >= 0, not '%s'", flag, s);
        return -1;
    }
    *out = v;
    return 0;
}

static int parse_args(int argc, char **argv, eval_opts *o, bool *json)
{
    int c, seed = 0;
    while ((c = getopt_long(argc, argv, "qh", options, NULL)) != -1) {
        int bad = 0;
        switch (c) {
        case OPT_TASK: o->task_path = optarg; break;
        case OPT_KERNEL: o->kernel_path = optarg; break;
        case OPT_JSON: *json = true; break;
        case OPT_TRIALS: bad = parse_int("--trials", optarg, 1, &o->trials); break;
        case OPT_WARMUP: bad = parse_int("--warmup", optarg, 0, &o->warmup); break;
        case OPT_ITERS: bad = parse_int("--iters", optarg, 1, &o->iters); break;
        case OPT_ATOL: bad = parse_double("--atol", optarg, &o->atol); break;
        case OPT_RTOL: bad = parse_double("--rtol", optarg, &o->rtol); break;
        case OPT_NO_TIME: o->time_kernel = false; break;
        case OPT_NO_BASELINE: o->baseline = false; break;
        case OPT_NO_COMPILE: o->baseline_compile = false; break;
        case OPT_NO_CACHE: o->use_cache = false; break;
        case OPT_FINAL: o->final = true; break;
        case OPT_FINAL_ROUNDS:
            bad = parse_int("--final-rounds", optarg, 1, &o->final_opts.rounds);
            break;
        case OPT_FINAL_ITERS: bad = parse_int("--final-iters", optarg, 1, &o->final_opts.iters); break;
        case OPT_TIMEOUT: bad = parse_double("--timeout", optarg, &o->call_timeout_s); break;
        case OPT_BUILD_TIMEOUT:
            bad = parse_double("--build-timeout", optarg, &o->build_timeout_s);
            break;
        case OPT_BUILD_MODE:
            if (strcmp(optarg, "split") && strcmp(optarg, "plain")) {
                error("unknown --build-mode '%s': use split or plain", optarg);
                return -1;
            }
            o->build_mode = optarg;
            break;
        case OPT_SEED:
            bad = parse_int("--seed", optarg, 1, &seed);
            o->seed = (uint64_t)seed;
            break;
        case OPT_DEVICE: bad = parse_int("--device", optarg, 0, &o->device); break;
        case OPT_ARCH: o->arch = optarg; break;
        case OPT_CUTLASS: o->cutlass_dir = optarg; break;
        case OPT_PYTHON: o->python = optarg; break;
        case OPT_WORKER: o->worker = optarg; break;
        case OPT_WORK_DIR: o->work_dir = optarg; break;
        case 'q': cg_quiet = true; break;
        case 'h': fputs(usage_text, stdout); return 1;
        default: fputs(usage_text, stderr); return -1;
        }
        if (bad)
            return -1;
    }
    if (optind < argc) {
        error("unexpected argument '%s' (see cutegen eval --help)", argv[optind]);
        return -1;
    }
    if (!o->task_path || !o->kernel_path) {
        error("eval needs --task PROBLEM.py and --kernel KERNEL.cu (see cutegen eval --help)");
        return -1;
    }
    return 0;
}

/* A number of the report; "inf" and "nan" arrive as strings (JSON has neither). */
static double num(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    if (json_is_string(v))
        return strtod(json_string_value(v), NULL);
    return v ? json_number_value(v) : NAN;
}

static void print_time(const char *label, json_t *t)
{
    if (!t)
        return;
    printf("%-9s median %.4f ms  mean %.4f  min %.4f  max %.4f  std %.4f  (n=%d)\n", label,
           num(t, "median_ms"), num(t, "mean_ms"), num(t, "min_ms"), num(t, "max_ms"),
           num(t, "std_ms"), (int)json_integer_value(json_object_get(t, "n")));
}

static void print_trials(json_t *trials)
{
    size_t i, passed = 0;
    json_t *t;
    double max_abs = 0, max_rel = 0;
    json_array_foreach(trials, i, t) {
        if (json_is_true(json_object_get(t, "pass")))
            passed++;
        size_t j;
        json_t *o;
        json_array_foreach(json_object_get(t, "outputs"), j, o) {
            if (!(num(o, "max_abs_err") <= max_abs))
                max_abs = num(o, "max_abs_err");
            if (!(num(o, "max_rel_err") <= max_rel))
                max_rel = num(o, "max_rel_err");
        }
    }
    printf("trials:   %zu/%zu passed (max abs err %.3g, max rel err %.3g)\n", passed,
           json_array_size(trials), max_abs, max_rel);
    json_array_foreach(trials, i, t) {
        const char *m = json_string_value(json_object_get(t, "message"));
        if (m)
            printf("  trial %zu (seed %lld): %s\n", i + 1,
                   (long long)json_integer_value(json_object_get(t, "seed")), m);
    }
}

/* The final timing: the interleaved numbers, and how they spread over the rounds. */
static void print_final(json_t *f)
{
    if (!f)
        return;
    const char *error = json_string_value(json_object_get(f, "error"));
    strbuf line = STRBUF_INIT;
    if (error)
        strbuf_addf(&line, "not done: %s", error);
    else
        eval_final_describe(f, &line);
    printf("verified: %s\n", line.buf);
    strbuf_release(&line);
    json_t *sp = json_object_get(json_object_get(f, "interleaved"), "speedup");
    const char *side;
    json_t *st;
    json_object_foreach(sp, side, st)
        printf("  over %-8s median %.3fx, rounds %.3fx .. %.3fx (quartiles %.3fx .. %.3fx)\n", side,
               num(st, "median"), num(st, "min"), num(st, "max"), num(st, "q1"), num(st, "q3"));
}

static void print_human(json_t *r)
{
    printf("verdict:  %s\n", json_string_value(json_object_get(r, "verdict")));
    const char *msg = json_string_value(json_object_get(r, "message"));
    if (msg && *msg)
        printf("message:  %s\n", msg);
    json_t *b = json_object_get(r, "build");
    if (b)
        printf("build:    %s for %s, %.2f s%s\n", json_string_value(json_object_get(b, "status")),
               json_string_value(json_object_get(b, "arch")), num(b, "seconds"),
               json_is_true(json_object_get(b, "cached")) ? " (cached)" : "");
    json_t *trials = json_object_get(r, "trials");
    if (trials)
        print_trials(trials);
    print_time("kernel:", json_object_get(r, "kernel_time"));
    json_t *base = json_object_get(r, "baseline");
    print_time("eager:", json_object_get(base, "eager"));
    print_time("compile:", json_object_get(base, "compile"));
    const char *ce = json_string_value(json_object_get(base, "compile_error"));
    if (ce)
        printf("compile:  torch.compile failed: %s\n", ce);
    json_t *s = json_object_get(r, "speedup");
    if (s && json_object_size(s)) {
        printf("speedup:  ");
        if (json_object_get(s, "eager"))
            printf("%.3fx over eager", num(s, "eager"));
        if (json_object_get(s, "compile"))
            printf(", %.3fx over torch.compile", num(s, "compile"));
        printf("\n");
    }
    print_final(json_object_get(r, "final"));
    json_t *sec = json_object_get(r, "seconds");
    const char *k;
    json_t *v;
    printf("seconds: ");
    json_object_foreach(sec, k, v) printf(" %s %.2f", k, json_number_value(v));
    printf("\n");
    const char *dir = json_string_value(json_object_get(r, "work_dir"));
    if (dir)
        printf("report:   %s/report.json\n", dir);
}

int cmd_eval(int argc, char **argv)
{
    eval_opts o;
    eval_opts_init(&o);
    bool json = false;
    int p = parse_args(argc, argv, &o, &json);
    if (p)
        return p > 0 ? EXIT_OK : EXIT_USAGE;
    json_t *report = NULL;
    strbuf err = STRBUF_INIT;
    int rc = eval_run(&o, &report, &err);
    if (rc) {
        error("%s", err.buf);
        if (json) {
            json_object_set_new(report, "error", json_string(err.buf));
            json_object_set_new(report, "exit_code", json_integer(rc));
            json_dumpf(report, stdout, JSON_INDENT(2));
            printf("\n");
        }
    } else if (json) {
        json_dumpf(report, stdout, JSON_INDENT(2));
        printf("\n");
    } else {
        print_human(report);
    }
    if (!rc) {
        const char *v = json_string_value(json_object_get(report, "verdict"));
        rc = v && strcmp(v, "ok") == 0 ? EXIT_OK : EXIT_VERDICT;
    }
    json_decref(report);
    strbuf_release(&err);
    return rc;
}
