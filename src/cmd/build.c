/*
 * cutegen build: compiles one or more kernels into shared objects through the build
 * cache (src/build.c) and prints, for each, the status, the .so path, the time and
 * whether it came from the cache, and on failure the digest of the compiler's output.
 * Exit 0 when every build is ok, 1 when one failed to compile or timed out, else the
 * codes of util.h (a missing kernel, nvcc or CUTLASS).
 */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build.h"
#include "cmd/commands.h"
#include "eval.h"
#include "proc.h"
#include "util.h"

static const char usage_text[] =
    "usage: cutegen build --kernel K.cu [K2.cu ...] [options]\n"
    "\n"
    "Compiles each kernel (a candidate .cu file, see docs/abi.md) into a shared object\n"
    "linked only with the CUDA runtime, through the build cache.\n"
    "\n"
    "  --kernel FILE     a kernel to build (also: further FILEs as arguments)\n"
    "  --arch ARCH       GPU arch, e.g. sm_90a (default: the GPU's, from nvidia-smi; sm_90a\n"
    "                    when there is no GPU)\n"
    "  --cutlass DIR     CUTLASS checkout or include dir (default: $CUTLASS_DIR, the\n"
    "                    nvidia-cutlass python package, /opt/cutlass, ...)\n"
    "  --jobs N          builds at once (default: the CPU count)\n"
    "  --timeout S       time limit of each build in seconds (default 300)\n"
    "  --build-mode M    split (device and host sides compiled at once; default) or plain\n"
    "                    (one nvcc call)\n"
    "  --force           rebuild even when the cache holds a result\n"
    "  --json            print one JSON object per kernel, one a line\n"
    "  -q, --quiet       no progress messages\n"
    "  -h, --help        this text\n"
    "\n"
    "The cache is $CUTEGEN_CACHE_DIR/builds (default ~/.cache/cutegen/builds); each build\n"
    "keeps kernel.so, build.log (the full compiler output), digest.txt and meta.json.\n"
    "Exit codes: 0 all ok; 1 a compile error or time-out; 4 a kernel file is missing;\n"
    "6 CUTLASS not found; 8 nvcc missing or the cache unwritable; 2 bad usage.\n";

struct build_opts {
    strbuf arch;
    const char *cutlass;
    const char *mode;
    int jobs;
    double timeout_s;
    bool force, json;
    const char **kernels;
    int n_kernels;
};

enum { OPT_ARCH = 256, OPT_CUTLASS, OPT_JOBS, OPT_TIMEOUT, OPT_FORCE, OPT_JSON, OPT_MODE };

static const struct option long_opts[] = {
    { "kernel", required_argument, NULL, 'k' },
    { "arch", required_argument, NULL, OPT_ARCH },
    { "cutlass", required_argument, NULL, OPT_CUTLASS },
    { "jobs", required_argument, NULL, OPT_JOBS },
    { "timeout", required_argument, NULL, OPT_TIMEOUT },
    { "build-mode", required_argument, NULL, OPT_MODE },
    { "force", no_argument, NULL, OPT_FORCE },
    { "json", no_argument, NULL, OPT_JSON },
    { "quiet", no_argument, NULL, 'q' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
};

static void add_kernel(struct build_opts *o, const char *k)
{
    o->kernels = xrealloc(o->kernels, (size_t)(o->n_kernels + 1) * sizeof *o->kernels);
    o->kernels[o->n_kernels++] = k;
}

static int usage_error(const char *fmt, const char *arg)
{
    strbuf sb = STRBUF_INIT;
    strbuf_addf(&sb, fmt, arg);
    error("%s", sb.buf);
    strbuf_release(&sb);
    return EXIT_USAGE;
}

/* Returns -1 to go on, else the exit code. */
static int parse_args(int argc, char **argv, struct build_opts *o)
{
    int c;
    char *end;
    optind = 1;
    while ((c = getopt_long(argc, argv, "k:qh", long_opts, NULL)) != -1) {
        switch (c) {
        case 'k':
            add_kernel(o, optarg);
            break;
        case OPT_ARCH:
            strbuf_reset(&o->arch);
            strbuf_adds(&o->arch, optarg);
            break;
        case OPT_CUTLASS:
            o->cutlass = optarg;
            break;
        case OPT_JOBS:
            o->jobs = (int)strtol(optarg, &end, 10);
            if (*end || o->jobs < 1)
                return usage_error("--jobs wants a positive number, not '%s'", optarg);
            break;
        case OPT_TIMEOUT:
            o->timeout_s = strtod(optarg, &end);
            if (*end || o->timeout_s <= 0)
                return usage_error("--timeout wants seconds above 0, not '%s'", optarg);
            break;
        case OPT_MODE:
            if (strcmp(optarg, "split") && strcmp(optarg, "plain"))
                return usage_error("unknown --build-mode '%s': use split or plain", optarg);
            o->mode = optarg;
            break;
        case OPT_FORCE:
            o->force = true;
            break;
        case OPT_JSON:
            o->json = true;
            break;
        case 'q':
            cg_quiet = true;
            break;
        case 'h':
            fputs(usage_text, stdout);
            return EXIT_OK;
        default:
            fputs(usage_text, stderr);
            return EXIT_USAGE;
        }
    }
    for (int i = optind; i < argc; i++)
        add_kernel(o, argv[i]);
    if (o->n_kernels == 0) {
        error("no kernel given: cutegen build --kernel K.cu");
        fputs(usage_text, stderr);
        return EXIT_USAGE;
    }
    return -1;
}

/* The GPU's arch from nvidia-smi ("9.0" -> sm_90a), else sm_90a with a note. */
static void default_arch(strbuf *arch)
{
    const char *argv[] = { "nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader", NULL };
    proc_opts po = { .argv = argv, .timeout_s = 20, .max_output = 4096 };
    proc_result r;
    proc_result_init(&r);
    char buf[16];
    if (proc_run(&po, &r) == 0 && r.exit_code == 0 && r.out.len > 0) {
        char *cc = xstrndup(r.out.buf, strcspn(r.out.buf, "\r\n"));
        strbuf_adds(arch, eval_arch_for_cc(cc, buf));
        free(cc);
    } else {
        strbuf_adds(arch, "sm_90a");
        progress("no GPU found (nvidia-smi): building for sm_90a; use --arch to choose");
    }
    proc_result_release(&r);
}

static void print_result(const struct build_opts *o, const char *kernel, const build_result *r)
{
    if (o->json) {
        json_t *j = json_pack("{s:s, s:s, s:s, s:s?, s:s?, s:b, s:f, s:s?, s:s}", "kernel", kernel,
                              "status", build_status_name(r->status), "hash", r->hash, "so",
                              r->so_path, "log", r->log_path, "cached", r->cached, "seconds",
                              r->seconds, "mode", r->mode, "digest", strbuf_str(&r->digest));
        char *text = json_dumps(j, JSON_COMPACT);
        printf("%s\n", text ? text : "{}");
        free(text);
        json_decref(j);
        return;
    }
    printf("%s: %s", kernel, build_status_name(r->status));
    if (r->cached)
        printf(" (cached)");
    else if (r->mode)
        printf(" in %.1f s (%s)", r->seconds, r->mode);
    printf("\n");
    if (r->so_path)
        printf("  so:  %s\n", r->so_path);
    if (r->log_path)
        printf("  log: %s\n", r->log_path);
    if (r->status != BUILD_OK && r->digest.len) {
        printf("%s", r->digest.buf);
        if (r->digest.buf[r->digest.len - 1] != '\n')
            printf("\n");
    }
}

static int exit_code_of(const build_result *r, int n)
{
    int code = EXIT_OK;
    for (int i = 0; i < n; i++) {
        if (r[i].status == BUILD_TOOL_ERROR)
            return EXIT_NO_TOOL;
        if (r[i].status != BUILD_OK)
            code = EXIT_VERDICT;
    }
    return code;
}

static int run_builds(struct build_opts *o, const char *nvcc, const char *cutlass_dir)
{
    char *abi = xasprintf("%s/include", cg_source_dir());
    char *cache = xasprintf("%s/builds", cg_cache_dir());
    build_config cfg = { .nvcc = nvcc, .cutlass_include = cutlass_dir, .arch = o->arch.buf, .cache_dir = cache,
                         .abi_include = abi, .timeout_s = o->timeout_s, .jobs = o->jobs,
                         .mode = o->mode, .force = o->force };
    build_result *res = xcalloc((size_t)o->n_kernels, sizeof *res);
    for (int i = 0; i < o->n_kernels; i++)
        build_result_init(&res[i]);
    progress("building %d kernel%s for %s", o->n_kernels, o->n_kernels == 1 ? "" : "s", o->arch.buf);
    build_many(&cfg, o->kernels, o->n_kernels, res);
    for (int i = 0; i < o->n_kernels; i++)
        print_result(o, o->kernels[i], &res[i]);
    int code = exit_code_of(res, o->n_kernels);
    for (int i = 0; i < o->n_kernels; i++)
        build_result_release(&res[i]);
    free(res);
    free(abi);
    free(cache);
    return code;
}

int cmd_build(int argc, char **argv)
{
    struct build_opts o = { .arch = STRBUF_INIT };
    int code = parse_args(argc, argv, &o);
    if (code >= 0)
        goto out;
    for (int i = 0; i < o.n_kernels; i++) {
        if (!file_exists(o.kernels[i])) {
            error("kernel '%s' not found: give the path of a .cu file", o.kernels[i]);
            code = EXIT_BAD_KERNEL;
            goto out;
        }
    }
    strbuf where = STRBUF_INIT, version = STRBUF_INIT, how = STRBUF_INIT;
    strbuf nvcc = STRBUF_INIT, nver = STRBUF_INIT;
    if (cutlass_locate(o.cutlass, &where, &version, &how) < 0) {
        error("%s", how.buf);
        code = EXIT_NO_CUTLASS;
    } else if (nvcc_locate(&nvcc, &nver, &how) < 0) {
        error("%s", how.buf);
        code = EXIT_NO_TOOL;
    } else {
        if (!o.arch.len)
            default_arch(&o.arch);
        code = run_builds(&o, nvcc.buf, where.buf);
    }
    strbuf_release(&where);
    strbuf_release(&version);
    strbuf_release(&how);
    strbuf_release(&nvcc);
    strbuf_release(&nver);
out:
    strbuf_release(&o.arch);
    free(o.kernels);
    return code;
}
