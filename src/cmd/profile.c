/* cutegen profile: the profiler digest of a kernel, without the agent. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/commands.h"
#include "eval.h"
#include "util.h"

static const char usage_text[] =
    "usage: cutegen profile --task PROBLEM.py --kernel KERNEL.cu [options]\n"
    "\n"
    "Runs one call of the kernel under Nsight Compute (ncu, clocks left as found) on a\n"
    "fresh trial, after a few warm-up calls, checks its output, and prints the digest:\n"
    "per kernel its share of the time, achieved FLOP/s and bytes/s against the GPU's\n"
    "ceilings and the task's speed of light, what bounds it, occupancy and its limiter,\n"
    "the top warp stalls, memory-access problems and ncu's advice; then the structure\n"
    "fingerprint of the built kernel (cuobjdump).\n"
    "\n"
    "options:\n"
    "  --task FILE, --kernel FILE   as for cutegen eval (required)\n"
    "  --full              also print ncu's whole human-readable report\n"
    "  --json              print everything as one JSON object\n"
    "  --warmup N          calls before the profiled one (default 3)\n"
    "  --timeout S         time limit of the profiling run (default 600)\n"
    "  --source-counters   also collect SourceCounters (bank conflicts, excess sectors)\n"
    "  --ncu PATH          the ncu to run (default: PATH, then /usr/local/cuda/bin/ncu)\n"
    "  --device N, --seed N, --arch ARCH, --cutlass DIR, --python PATH, --worker PATH,\n"
    "  --work-dir DIR, -q  as for cutegen eval\n"
    "\n"
    "The ncu report file stays in the work directory (report.profile in --json).\n"
    "exit codes: 0 profiled; 1 the kernel failed, or ncu failed on it (the verdict or\n"
    "the profiler's error is printed); 8 no ncu, or no permission to read the GPU's\n"
    "counters (the message says what to do); others as cutegen eval.\n";

enum { OPT_TASK = 256, OPT_KERNEL, OPT_JSON, OPT_FULL, OPT_WARMUP, OPT_TIMEOUT, OPT_SRC,
       OPT_NCU, OPT_DEVICE, OPT_SEED, OPT_ARCH, OPT_CUTLASS, OPT_PYTHON, OPT_WORKER,
       OPT_WORK_DIR };

static const struct option options[] = {
    { "task", required_argument, NULL, OPT_TASK },
    { "kernel", required_argument, NULL, OPT_KERNEL },
    { "json", no_argument, NULL, OPT_JSON },
    { "full", no_argument, NULL, OPT_FULL },
    { "warmup", required_argument, NULL, OPT_WARMUP },
    { "timeout", required_argument, NULL, OPT_TIMEOUT },
    { "source-counters", no_argument, NULL, OPT_SRC },
    { "ncu", required_argument, NULL, OPT_NCU },
    { "device", required_argument, NULL, OPT_DEVICE },
    { "seed", required_argument, NULL, OPT_SEED },
    { "arch", required_argument, NULL, OPT_ARCH },
    { "cutlass", required_argument, NULL, OPT_CUTLASS },
    { "python", required_argument, NULL, OPT_PYTHON },
    { "worker", required_argument, NULL, OPT_WORKER },
    { "work-dir", required_argument, NULL, OPT_WORK_DIR },
    { "quiet", no_argument, NULL, 'q' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
};

static int number(const char *flag, const char *s, double min, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (*end || !(v >= min)) {
        error("%s wants a number >= %g, not '%s'", flag, min, s);
        return -1;
    }
    *out = v;
    return 0;
}

int cmd_profile(int argc, char **argv)
{
    eval_opts o;
    profile_opts p;
    eval_opts_init(&o);
    profile_opts_init(&p);
    bool json = false, full = false;
    int c;
    double v;
    while ((c = getopt_long(argc, argv, "qh", options, NULL)) != -1) {
        int bad = 0;
        switch (c) {
        case OPT_TASK: o.task_path = optarg; break;
        case OPT_KERNEL: o.kernel_path = optarg; break;
        case OPT_JSON: json = true; break;
        case OPT_FULL: full = true; break;
        case OPT_WARMUP: bad = number("--warmup", optarg, 0, &v); p.warmup = (int)v; break;
        case OPT_TIMEOUT: bad = number("--timeout", optarg, 1, &p.timeout_s); break;
        case OPT_SRC: p.source_counters = true; break;
        case OPT_NCU: p.ncu = optarg; break;
        case OPT_DEVICE: bad = number("--device", optarg, 0, &v); o.device = (int)v; break;
        case OPT_SEED: bad = number("--seed", optarg, 1, &v); o.seed = (uint64_t)v; break;
        case OPT_ARCH: o.arch = optarg; break;
        case OPT_CUTLASS: o.cutlass_dir = optarg; break;
        case OPT_PYTHON: o.python = optarg; break;
        case OPT_WORKER: o.worker = optarg; break;
        case OPT_WORK_DIR: o.work_dir = optarg; break;
        case 'q': cg_quiet = true; break;
        case 'h': fputs(usage_text, stdout); return EXIT_OK;
        default: fputs(usage_text, stderr); return EXIT_USAGE;
        }
        if (bad)
            return EXIT_USAGE;
    }
    if (optind < argc || !o.task_path || !o.kernel_path) {
        error("profile needs --task PROBLEM.py and --kernel KERNEL.cu (see cutegen profile --help)");
        return EXIT_USAGE;
    }
    json_t *report = NULL;
    strbuf details = STRBUF_INIT, err = STRBUF_INIT;
    int rc = eval_profile(&o, &p, &report, &details, &err);
    if (rc)
        error("%s", err.buf);
    const char *verdict = json_string_value(json_object_get(report, "verdict"));
    if (json) {
        if (full)
            json_object_set_new(report, "details", json_string(details.buf));
        if (rc)
            json_object_set_new(report, "exit_code", json_integer(rc));
        json_dumpf(report, stdout, JSON_INDENT(2));
        printf("\n");
    } else if (verdict) {
        printf("verdict:  %s (%s)\n", verdict, json_string_value(json_object_get(report, "message")));
        json_t *prof = json_object_get(report, "profile");
        const char *digest = json_string_value(json_object_get(prof, "digest"));
        const char *perr = json_string_value(json_object_get(report, "profile_error"));
        if (perr)
            printf("profile:  failed: %s\n", perr);
        if (digest)
            printf("\n%s\n", digest);
        json_t *fp = json_object_get(report, "fingerprint");
        if (fp)
            printf("\nstructure fingerprint %.16s:\n%s\n", json_string_value(json_object_get(fp, "hash")),
                   json_string_value(json_object_get(fp, "text")));
        if (prof)
            printf("\nprofiled in %.1f s (ncu run %.1f s); ncu report: %s\n",
                   json_number_value(json_object_get(prof, "total_seconds")),
                   json_number_value(json_object_get(prof, "profile_seconds")),
                   json_string_value(json_object_get(prof, "report")) ?: "-");
        if (full && details.len)
            printf("\n%s\n", details.buf);
    }
    if (!rc && ((verdict && strcmp(verdict, "ok") != 0) ||
                json_object_get(report, "profile_error")))
        rc = EXIT_VERDICT;
    json_decref(report);
    strbuf_release(&details);
    strbuf_release(&err);
    return rc;
}
