/* cutegen bench: a sweep of many problems on one host (src/bench.h). */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "cmd/commands.h"
#include "proc.h"
#include "util.h"

static const char usage_text[] =
    "usage: cutegen bench --kernelbench DIR [--level 1,2] [--problems 1-20,23] [options]\n"
    "                     [run options...]\n"
    "       cutegen bench --task A.py --task B.py ... [options]\n"
    "       cutegen bench --resume RUN_DIR\n"
    "\n"
    "Runs `cutegen run` on many problems at once on this host and keeps the GPUs busy:\n"
    "model calls of different problems overlap, all compilers share the CPU cores, and\n"
    "each GPU has one timing lane (a GPU never times two things at once, and only the\n"
    "problem holding the lane has tensors on it). Every problem gets its own run directory\n"
    "under RUN_DIR/problems/; the sweep's state is RUN_DIR/bench.db. Interrupt it (or lose\n"
    "the machine) and run the same command again, or --resume RUN_DIR: finished problems\n"
    "are kept, interrupted ones resume. A problem that fails is recorded and the sweep\n"
    "goes on. On a terminal a live view shows the sweep; otherwise log lines.\n"
    "\n"
    "problems:\n"
    "  --kernelbench DIR    a KernelBench tree (level1/, level2/, ...)\n"
    "  --level L[,L...]     levels to take (default 1)\n"
    "  --problems RANGES    KernelBench numbers, e.g. 1-20,23 (default all)\n"
    "  --task FILE          a problem file of your own (repeatable)\n"
    "  --shard I/N          only every N-th problem from the I-th (0-based) of the sorted\n"
    "                       list, for splitting a sweep over hosts\n"
    "host:\n"
    "  --run-dir DIR        where the sweep goes (default runs/<date>-bench)\n"
    "  --resume DIR         continue a sweep with the options it was started with\n"
    "  --gpus 0,1           GPUs to use, one timing lane each (default 0)\n"
    "  --jobs N             problems at once (default 4 per GPU)\n"
    "  --cpus N             compilers at once over all problems (default: the cores)\n"
    "  --problem-timeout S  kill and record a problem's run after S seconds (default 14400)\n"
    "  --max-attempts N     starts of a failing problem, over resumes (default 2)\n"
    "  -q, --quiet          no progress lines\n"
    "\n"
    "Every other option goes to each `cutegen run` (see cutegen run --help): the model\n"
    "(--provider, --model, --command, budgets...), the search (--rounds, --children...),\n"
    "judging (--trials, --iters...). With no model configured the built-in recipes are\n"
    "used. Options are checked once before the sweep starts.\n"
    "\n"
    "Afterwards: cutegen report RUN_DIR (bench directories are understood), cutegen\n"
    "export RUN_DIR. See docs/bench.md.\n";

/* Bench's own options; `value` says whether one follows. */
static const struct { const char *name; bool value; } bench_flags[] = {
    { "--kernelbench", true }, { "--level", true }, { "--problems", true },
    { "--task", true }, { "--shard", true }, { "--run-dir", true }, { "--resume", true },
    { "--gpus", true }, { "--jobs", true }, { "--cpus", true }, { "--problem-timeout", true },
    { "--max-attempts", true }, { "-q", false }, { "--quiet", false },
};

static int flag_index(const char *arg, const char **inline_value)
{
    *inline_value = NULL;
    for (size_t i = 0; i < sizeof bench_flags / sizeof *bench_flags; i++) {
        size_t n = strlen(bench_flags[i].name);
        if (!strncmp(arg, bench_flags[i].name, n) && (arg[n] == 0 || (arg[n] == '=' && bench_flags[i].value))) {
            if (arg[n] == '=')
                *inline_value = arg + n + 1;
            return (int)i;
        }
    }
    return -1;
}

static int positive(const char *flag, const char *v, double *out)
{
    char *end;
    double d = strtod(v, &end);
    if (end == v || *end || !(d > 0))
        return error("%s wants a positive number, not '%s'", flag, v);
    *out = d;
    return 0;
}

static int parse_gpus(const char *v, bench_opts *o)
{
    o->n_gpus = 0;
    for (const char *p = v; *p;) {
        char *end;
        long g = strtol(p, &end, 10);
        if (end == p || g < 0 || g > 63 || (*end && *end != ',') || o->n_gpus == BENCH_MAX_GPUS)
            return error("--gpus wants device numbers such as 0,1, not '%s'", v);
        for (int i = 0; i < o->n_gpus; i++)
            if (o->gpus[i] == g)
                return error("--gpus names GPU %ld twice: one lane per GPU", g);
        o->gpus[o->n_gpus++] = (int)g;
        p = *end ? end + 1 : end;
    }
    return o->n_gpus ? 0 : error("--gpus is empty");
}

static int apply(bench_opts *o, int flag, const char *v)
{
    double d = 0;
    const char *name = bench_flags[flag].name;
    if (!strcmp(name, "--kernelbench")) o->kernelbench = v;
    else if (!strcmp(name, "--level")) o->levels = v;
    else if (!strcmp(name, "--problems")) o->problems = v;
    else if (!strcmp(name, "--task")) o->tasks[o->n_tasks++] = v;
    else if (!strcmp(name, "--run-dir") || !strcmp(name, "--resume")) o->run_dir = v;
    else if (!strcmp(name, "--gpus")) return parse_gpus(v, o);
    else if (!strcmp(name, "--shard")) {
        if (bench_parse_shard(v, &o->shard, &o->shards) < 0)
            return error("--shard wants I/N with 0 <= I < N, such as 0/4, not '%s'", v);
    } else if (!strcmp(name, "--jobs")) {
        if (positive(name, v, &d) < 0) return -1;
        o->jobs = (int)d;
    } else if (!strcmp(name, "--cpus")) {
        if (positive(name, v, &d) < 0) return -1;
        o->cpus = (int)d;
    } else if (!strcmp(name, "--problem-timeout")) {
        return positive(name, v, &o->problem_timeout_s);
    } else if (!strcmp(name, "--max-attempts")) {
        if (positive(name, v, &d) < 0) return -1;
        o->max_attempts = (int)d;
    } else if (!strcmp(name, "-q") || !strcmp(name, "--quiet")) cg_quiet = true;
    return 0;
}

static const char *const run_owned[] = { "--task", "--run-dir", "--resume", "--device" };

/* Splits argv into bench's options and the rest (for cutegen run). */
static int parse(int argc, char **argv, bench_opts *o, bool *resume)
{
    o->tasks = xcalloc((size_t)argc, sizeof *o->tasks);
    o->run_args = xcalloc((size_t)argc, sizeof *o->run_args);
    for (int i = 1; i < argc; i++) {
        const char *inline_value;
        int f = flag_index(argv[i], &inline_value);
        if (f < 0) {
            o->run_args[o->n_run_args++] = argv[i];
            continue;
        }
        const char *v = inline_value;
        if (bench_flags[f].value && !v) {
            if (i + 1 >= argc)
                return error("%s needs a value (see cutegen bench --help)", argv[i]);
            v = argv[++i];
        }
        if (!strcmp(bench_flags[f].name, "--resume"))
            *resume = true;
        if (apply(o, f, v) < 0)
            return -1;
    }
    return 0;
}

/* The options a sweep was started with, kept in RUN_DIR/bench-args.json for --resume. */
static char **load_saved_args(const char *dir, int *argc)
{
    char *path = xasprintf("%s/bench-args.json", dir);
    json_t *a = json_load_file(path, 0, NULL);
    free(path);
    if (!json_is_array(a)) {
        json_decref(a);
        return NULL;
    }
    size_t n = json_array_size(a);
    char **argv = xcalloc(n + 1, sizeof *argv);
    for (size_t i = 0; i < n; i++)
        argv[i] = xstrdup(json_string_value(json_array_get(a, i)) ?: "");
    json_decref(a);
    *argc = (int)n;
    return argv;
}

static void save_args(const char *dir, int argc, char **argv)
{
    json_t *a = json_array();
    for (int i = 0; i < argc; i++)
        json_array_append_new(a, json_string(argv[i]));
    char *path = xasprintf("%s/bench-args.json", dir);
    char *text = json_dumps(a, JSON_INDENT(1));
    if (mkdir_p(dir, 0755) == 0)
        write_file_atomic(path, text, strlen(text));
    free(text);
    free(path);
    json_decref(a);
}

/* Asks `cutegen run` whether it accepts the pass-through options, before any work. */
static int check_run_args(const bench_opts *o, const char *task)
{
    for (int i = 0; i < o->n_run_args; i++)
        for (size_t k = 0; k < sizeof run_owned / sizeof *run_owned; k++)
            if (!strcmp(o->run_args[i], run_owned[k]))
                return error("%s is set by bench for each problem; leave it out", run_owned[k]);
    const char **argv = xcalloc((size_t)o->n_run_args + 6, sizeof *argv);
    int n = 0;
    argv[n++] = o->cutegen;
    argv[n++] = "run";
    argv[n++] = "--check-args";
    argv[n++] = "--task";
    argv[n++] = task;
    for (int i = 0; i < o->n_run_args; i++)
        argv[n++] = o->run_args[i];
    proc_opts po = { .argv = argv, .timeout_s = 60 };
    proc_result r;
    proc_result_init(&r);
    int rc = proc_run(&po, &r);
    if (rc != 0 || r.exit_code != 0) {
        fprintf(stderr, "%s", r.err.buf ? r.err.buf : "");
        rc = error("cutegen run refuses the options bench passes on (above)");
    }
    proc_result_release(&r);
    free(argv);
    return rc;
}

static char *default_run_dir(void)
{
    char stamp[32];
    time_t now = time(NULL);
    strftime(stamp, sizeof stamp, "%Y-%m-%d-%H%M", localtime(&now));
    return xasprintf("runs/%s-bench", stamp);
}

int cmd_bench(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(usage_text, stdout);
            return EXIT_OK;
        }
    bench_opts o;
    bench_opts_init(&o);
    bool resume = false;
    char **saved = NULL;
    int n_saved = 0, rc = EXIT_USAGE;
    char *dir = NULL, *self = NULL;
    if (parse(argc, argv, &o, &resume) < 0)
        goto out;
    if (resume) {
        if (argc != 2 && argc != 3)
            return error("--resume RUN_DIR takes the sweep's own options; give nothing else "
                         "(or run the original command again)"), EXIT_USAGE;
        saved = load_saved_args(o.run_dir, &n_saved);
        if (!saved) {
            error("'%s' holds no sweep (no bench-args.json): give the path of a cutegen bench "
                  "run directory", o.run_dir);
            goto out;
        }
        const char *keep = o.run_dir;
        free(o.tasks);
        free(o.run_args);
        bench_opts_init(&o);
        char **full = xcalloc((size_t)n_saved + 2, sizeof *full);
        full[0] = argv[0];
        memcpy(full + 1, saved, sizeof *full * (size_t)n_saved);
        bool again = false;
        int prc = parse(n_saved + 1, full, &o, &again);
        free(full);
        if (prc < 0)
            goto out;
        o.run_dir = keep;
    }
    if (!o.kernelbench && !o.n_tasks) {
        error("bench needs problems: --kernelbench DIR (with --level/--problems) or --task FILE");
        goto out;
    }
    if (!o.n_gpus) {
        o.gpus[0] = 0;
        o.n_gpus = 1;
    }
    if (!o.jobs)
        o.jobs = 4 * o.n_gpus;
    if (!o.run_dir)
        o.run_dir = dir = default_run_dir();
    char *bin = self_dir();
    o.cutegen = self = xasprintf("%s/cutegen", bin);
    free(bin);
    bench_problem *v = NULL;
    strbuf err = STRBUF_INIT;
    int n = bench_select(&o, &v, &err);
    if (n <= 0) {
        error("%s", n < 0 ? err.buf : "no problem selected (check --kernelbench, --level, --problems, --shard)");
        strbuf_release(&err);
        goto out;
    }
    int chk = check_run_args(&o, v[0].path);
    bench_problems_free(v, n);
    if (chk < 0) {
        strbuf_release(&err);
        goto out;
    }
    if (!resume)
        save_args(o.run_dir, argc - 1, argv + 1);
    rc = bench_run(&o, &err);
    if (rc && err.len)
        error("%s", err.buf);
    strbuf_release(&err);
out:
    for (int i = 0; i < n_saved; i++)
        free(saved[i]);
    free(saved);
    free(o.tasks);
    free(o.run_args);
    free(dir);
    free(self);
    return rc;
}
