/* cutegen bench: a sweep of many problems on one host (src/bench.h). */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "cmd/commands.h"
#include "proc.h"
#include "slurm.h"
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
    "  --in-order           run the --task files in the order given (after --level's\n"
    "                       problems), not sorted by level and number: what matters first\n"
    "                       when the sweep may be cut short\n"
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
    "a Slurm cluster (docs/bench.md, \"A Slurm cluster\"):\n"
    "  --slurm              run the sweep as a Slurm array job, one task per shard: write\n"
    "                       RUN_DIR/slurm/bench.sbatch and submit it with sbatch; task I\n"
    "                       runs --shard I/N into RUN_DIR/shard-I (a requeued task resumes\n"
    "                       it), its output in RUN_DIR/slurm/<job>_I.out. Prints the job\n"
    "                       id, the script, the outputs and the report command to run after\n"
    "  --shards N           array tasks (default: the number of problems / 10, at least 1)\n"
    "  --slurm-gpus-per-task G  GPUs per task, as --gres=gpu:G (default 1; 0: none); bench\n"
    "                       uses them all (--gpus 0,..,G-1) unless --gpus is given\n"
    "  --slurm-cpus-per-task C  CPUs per task, also bench's --cpus (default: --cpus when\n"
    "                       given, else the cluster's default, often one core)\n"
    "  --slurm-partition P  the partition (default: the cluster's default)\n"
    "  --slurm-time T       each task's time limit, HH:MM:SS or D-HH:MM:SS (default: the\n"
    "                       partition's)\n"
    "  --slurm-script-only  write the script but do not submit it (sbatch it yourself)\n"
    "\n"
    "Every other option goes to each `cutegen run` (see cutegen run --help): the model\n"
    "(--provider, --model, --command, budgets...), the search (--rounds, --children...),\n"
    "judging (--trials, --iters...). With no model configured the built-in recipes are\n"
    "used. Options are checked once before the sweep starts.\n"
    "\n"
    "Afterwards: cutegen report RUN_DIR (bench directories are understood), cutegen\n"
    "export RUN_DIR. See docs/bench.md.\n"
    "\n"
    "exit codes: 0 the sweep ended (or, with --slurm, the job was submitted); 2 bad\n"
    "options, or sbatch refused the job; 8 --slurm, and sbatch is not installed here.\n";

/* Bench's own options; `value` says whether one follows. */
static const struct { const char *name; bool value; } bench_flags[] = {
    { "--kernelbench", true }, { "--level", true }, { "--problems", true },
    { "--task", true }, { "--shard", true }, { "--run-dir", true }, { "--resume", true },
    { "--gpus", true }, { "--jobs", true }, { "--cpus", true }, { "--problem-timeout", true },
    { "--max-attempts", true }, { "-q", false }, { "--quiet", false }, { "--in-order", false },
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
    else if (!strcmp(name, "--in-order")) o->in_order = true;
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

/* ------------------------------------------------------------------ --slurm */

/* The Slurm options: bench itself never sees them. */
struct slurm_flags {
    bool on, script_only;
    const char *given;    /* the first Slurm option given (for "needs --slurm") */
    int shards;           /* 0: the number of problems / 10, at least 1 */
    int gpus_per_task;
    int cpus_per_task;    /* 0: bench's --cpus when given, else the cluster's default */
    const char *partition, *time_limit;
};

static const struct { const char *name; bool value; } slurm_flag_names[] = {
    { "--slurm", false }, { "--slurm-script-only", false }, { "--shards", true },
    { "--slurm-gpus-per-task", true }, { "--slurm-cpus-per-task", true },
    { "--slurm-partition", true }, { "--slurm-time", true },
};

static int count_arg(const char *flag, const char *v, int min, int *out)
{
    char *end;
    long n = strtol(v, &end, 10);
    if (end == v || *end || n < min || n > 100000)
        return error("%s wants a whole number of at least %d, not '%s'", flag, min, v);
    *out = (int)n;
    return 0;
}

/* Takes the Slurm options out of argv: the others are copied to rest (argv[0] first),
 * *n_rest counting them. */
static int take_slurm_flags(int argc, char **argv, struct slurm_flags *sf, char **rest, int *n_rest)
{
    *n_rest = 0;
    rest[(*n_rest)++] = argv[0];
    for (int i = 1; i < argc; i++) {
        int f = -1;
        const char *v = NULL;
        for (size_t k = 0; k < sizeof slurm_flag_names / sizeof *slurm_flag_names && f < 0; k++) {
            size_t n = strlen(slurm_flag_names[k].name);
            if (!strncmp(argv[i], slurm_flag_names[k].name, n) &&
                (argv[i][n] == 0 || (argv[i][n] == '=' && slurm_flag_names[k].value))) {
                f = (int)k;
                v = argv[i][n] == '=' ? argv[i] + n + 1 : NULL;
            }
        }
        if (f < 0) {
            rest[(*n_rest)++] = argv[i];
            continue;
        }
        const char *name = slurm_flag_names[f].name;
        if (slurm_flag_names[f].value && !v) {
            if (i + 1 >= argc)
                return error("%s needs a value (see cutegen bench --help)", name);
            v = argv[++i];
        }
        if (!strcmp(name, "--slurm")) {
            sf->on = true;
            continue;
        }
        if (!sf->given)
            sf->given = name;
        if (!strcmp(name, "--slurm-script-only"))
            sf->script_only = true;
        else if (!strcmp(name, "--shards") && count_arg(name, v, 1, &sf->shards) < 0)
            return -1;
        else if (!strcmp(name, "--slurm-gpus-per-task") && count_arg(name, v, 0, &sf->gpus_per_task) < 0)
            return -1;
        else if (!strcmp(name, "--slurm-cpus-per-task") && count_arg(name, v, 1, &sf->cpus_per_task) < 0)
            return -1;
        else if (!strcmp(name, "--slurm-partition"))
            sf->partition = v;
        else if (!strcmp(name, "--slurm-time"))
            sf->time_limit = v;
    }
    rest[*n_rest] = NULL;
    return 0;
}

static char *absolute_path(const char *path)
{
    if (path[0] == '/')
        return xstrdup(path);
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd))
        return NULL;
    while (path[0] == '.' && path[1] == '/')
        path += 2;
    return xasprintf("%s/%s", cwd, path);
}

/* The shard count of an earlier submission into run_dir (its script's --array=0-K), or 0. */
static int earlier_shards(const char *run_dir)
{
    char *path = slurm_script_path(run_dir);
    strbuf text = STRBUF_INIT;
    int n = 0;
    if (read_file(path, &text, 1 << 20) == 0) {
        const char *a = strstr(text.buf, "\n#SBATCH --array=0-");
        if (a)
            n = atoi(a + strlen("\n#SBATCH --array=0-")) + 1;
    }
    strbuf_release(&text);
    free(path);
    return n;
}

static bool has_flag(int argc, char **argv, const char *name)
{
    for (int i = 1; i < argc; i++) {
        const char *inline_value;
        int f = flag_index(argv[i], &inline_value);
        if (f >= 0 && !strcmp(bench_flags[f].name, name))
            return true;
        if (f >= 0 && bench_flags[f].value && !inline_value)
            i++;
    }
    return false;
}

/* bench --slurm: the sweep's options checked here (problems found, run's options
 * accepted), then a batch script whose array task I runs this same command with --shard
 * I/N --run-dir RUN_DIR/shard-I, written and submitted. argv holds no Slurm option. */
static int bench_slurm(const struct slurm_flags *sf, int argc, char **argv)
{
    bench_opts o;
    bench_opts_init(&o);
    bool resume = false;
    int rc = EXIT_USAGE, n = 0;
    char *run_dir = NULL, *dflt = NULL, *self = NULL, *script = NULL, *bin = NULL;
    const char **pass = xcalloc((size_t)argc + 8, sizeof *pass);
    char gpus[512] = "", cpus[16] = "";
    bench_problem *v = NULL;
    strbuf err = STRBUF_INIT, id = STRBUF_INIT;
    if (parse(argc, argv, &o, &resume) < 0)
        goto out;
    if (resume) {
        error("--resume does not go with --slurm: to continue a sweep on the cluster, submit "
              "its script again (sbatch RUN_DIR/slurm/bench.sbatch): each task resumes its shard");
        goto out;
    }
    if (has_flag(argc, argv, "--shard")) {
        error("--shard does not go with --slurm: each array task gets its own --shard I/N "
              "(choose N with --shards)");
        goto out;
    }
    if (!o.kernelbench && !o.n_tasks) {
        error("bench needs problems: --kernelbench DIR (with --level/--problems) or --task FILE");
        goto out;
    }
    if (!o.run_dir)
        o.run_dir = dflt = default_run_dir();
    run_dir = absolute_path(o.run_dir);
    if (!run_dir) {
        error("unable to find the current directory: %s", strerror(errno));
        goto out;
    }
    bin = self_dir();
    o.cutegen = self = xasprintf("%s/cutegen", bin);
    n = bench_select(&o, &v, &err);
    if (n <= 0) {
        error("%s", n < 0 ? err.buf : "no problem selected (check --kernelbench, --level, --problems)");
        goto out;
    }
    if (check_run_args(&o, v[0].path) < 0)
        goto out;

    int shards = sf->shards ? sf->shards : (n / 10 > 1 ? n / 10 : 1);
    char why[160];
    if (sf->shards)
        snprintf(why, sizeof why, "--shards");
    else
        snprintf(why, sizeof why, "%d problems / 10, at least 1; choose with --shards N", n);
    if (shards > n) {
        snprintf(why, sizeof why, "--shards %d, but there are only %d problems", shards, n);
        shards = n;
    }
    int before = earlier_shards(run_dir);
    if (before && before != shards) {
        error("'%s' already holds a sweep in %d shards (its slurm/bench.sbatch): give --shards "
              "%d to continue it, or choose another --run-dir", run_dir, before, before);
        goto out;
    }

    /* This command's arguments, less --run-dir (the script gives each task its own). */
    int np = 0;
    for (int i = 1; i < argc; i++) {
        const char *inline_value;
        int f = flag_index(argv[i], &inline_value);
        bool takes_next = f >= 0 && bench_flags[f].value && !inline_value && i + 1 < argc;
        if (f >= 0 && !strcmp(bench_flags[f].name, "--run-dir")) {
            i += takes_next;
            continue;
        }
        pass[np++] = argv[i];
        if (takes_next)
            pass[np++] = argv[++i];
    }
    /* A task's GPUs are 0..G-1 (Slurm sets CUDA_VISIBLE_DEVICES): bench times on all of them. */
    if (sf->gpus_per_task > 1 && !has_flag(argc, argv, "--gpus")) {
        for (int g = 0; g < sf->gpus_per_task && g < BENCH_MAX_GPUS; g++)
            snprintf(gpus + strlen(gpus), sizeof gpus - strlen(gpus), "%s%d", g ? "," : "", g);
        pass[np++] = "--gpus";
        pass[np++] = gpus;
    }
    int cpus_per_task = sf->cpus_per_task ? sf->cpus_per_task : o.cpus;
    if (sf->cpus_per_task && !has_flag(argc, argv, "--cpus")) {
        snprintf(cpus, sizeof cpus, "%d", sf->cpus_per_task);
        pass[np++] = "--cpus";
        pass[np++] = cpus;
    }
    pass[np] = NULL;

    char cwd[4096];
    slurm_job job = { .run_dir = run_dir, .shards = shards, .gpus_per_task = sf->gpus_per_task,
                      .cpus_per_task = cpus_per_task, .partition = sf->partition,
                      .time_limit = sf->time_limit, .cutegen = self,
                      .workdir = getcwd(cwd, sizeof cwd), .bench_argv = pass };
    if (slurm_write_script(&job, &script, &err) < 0) {
        error("%s", err.buf);
        goto out;
    }
    if (!sf->script_only) {
        enum slurm_submit_result res = slurm_submit(script, NULL, &id, &err);
        if (res != SLURM_SUBMITTED) {
            error("%s", err.buf);
            rc = res == SLURM_NO_SBATCH ? EXIT_NO_TOOL : EXIT_USAGE;
            goto out;
        }
        printf("slurm:   submitted job %s: %d array task%s, one a shard, %d GPU%s each\n", id.buf,
               shards, shards == 1 ? "" : "s", sf->gpus_per_task, sf->gpus_per_task == 1 ? "" : "s");
    } else {
        printf("slurm:   the batch script is written, not submitted (--slurm-script-only)\n");
    }
    printf("shards:  %d (%s); %d problems\n", shards, why, n);
    printf("script:  %s\n", script);
    if (sf->script_only) {
        strbuf q = STRBUF_INIT;
        slurm_quote(&q, script);
        printf("submit:  sbatch %s\n", q.buf);
        strbuf_release(&q);
    }
    printf("outputs: %s/slurm/%s_<task>.out; task I runs shard I into %s/shard-I\n", run_dir,
           id.len ? id.buf : "<job>", run_dir);
    if (id.len)
        printf("watch:   squeue -j %s\n", id.buf);
    printf("after:   cutegen report --merge '%s/shard-*'\n", run_dir);
    rc = EXIT_OK;
out:
    bench_problems_free(v, n > 0 ? n : 0);
    strbuf_release(&err);
    strbuf_release(&id);
    free(o.tasks);
    free(o.run_args);
    free(pass);
    free(run_dir);
    free(dflt);
    free(self);
    free(bin);
    free(script);
    return rc;
}

int cmd_bench(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(usage_text, stdout);
            return EXIT_OK;
        }
    {
        struct slurm_flags sf = { .gpus_per_task = 1 };
        char **rest = xcalloc((size_t)argc + 1, sizeof *rest);
        int n_rest, src = take_slurm_flags(argc, argv, &sf, rest, &n_rest);
        if (src == 0 && sf.on)
            src = bench_slurm(&sf, n_rest, rest);
        else if (src == 0 && sf.given)
            src = error("%s goes with --slurm (see cutegen bench --help)", sf.given);
        free(rest);
        if (src != 0 || sf.on)
            return src < 0 ? EXIT_USAGE : src;
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
