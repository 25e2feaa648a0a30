/*
 * cutegen doctor: says what is installed, what is missing, and how to get it.
 * Each check prints one line: "ok", "missing" or "warn", the facts found, and for
 * anything missing the command or setting that fixes it. Exit 0 when everything
 * `cutegen eval` needs is there, 1 otherwise.
 */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "build.h"
#include "cmd/commands.h"
#include "eval.h"
#include "proc.h"
#include "util.h"

static const char usage_text[] =
    "usage: cutegen doctor [--json] [--device N] [--python PATH] [--cutlass DIR]\n"
    "\n"
    "Checks nvcc (version, arch it will build for), CUTLASS (where, version), the GPU\n"
    "(name, SMs, memory, driver), the worker, python3 with torch (version, CUDA), ncu,\n"
    "binutils and the cache directory. Each missing piece says how to get it.\n"
    "Exit code 0 when everything 'cutegen eval' needs is present, else 1.\n";

struct doctor {
    json_t *checks;
    bool json;
    bool all_required_ok;
};

static void report(struct doctor *d, const char *name, const char *state, bool required,
                   const char *facts, const char *fix)
{
    json_array_append_new(d->checks, json_pack("{s:s, s:s, s:b, s:s, s:s?}", "name", name,
                                               "state", state, "required", required, "facts",
                                               facts, "fix", fix));
    if (required && strcmp(state, "ok") != 0)
        d->all_required_ok = false;
    if (d->json)
        return;
    printf("%-8s %-7s %s\n", state, name, facts);
    if (fix && strcmp(state, "ok") != 0)
        printf("         fix: %s\n", fix);
}

static char *gpu_cc;

static void check_gpu(struct doctor *d, int device)
{
    char *worker = eval_find_worker(NULL);
    if (!worker) {
        report(d, "worker", "missing", true, "cutegen-worker not built",
               "install the CUDA toolkit and rerun scripts/setup.sh (CMake builds the worker "
               "when it finds nvcc)");
        report(d, "gpu", "missing", true, "cannot probe without the worker", NULL);
        return;
    }
    report(d, "worker", "ok", true, worker, NULL);
    strbuf err = STRBUF_INIT;
    json_t *g = eval_probe_gpu(worker, device, &err);
    if (!g) {
        report(d, "gpu", "missing", true, err.buf,
               "run on a machine with an NVIDIA GPU and driver (nvidia-smi must list it)");
    } else {
        char facts[512];
        int drv = (int)json_integer_value(json_object_get(g, "driver_version"));
        snprintf(facts, sizeof facts, "%s, compute capability %s, %d SMs, %.1f GiB, L2 %.0f MiB, "
                 "driver CUDA %d.%d",
                 json_string_value(json_object_get(g, "name")),
                 json_string_value(json_object_get(g, "cc")),
                 (int)json_integer_value(json_object_get(g, "sms")),
                 (double)json_integer_value(json_object_get(g, "memory_bytes")) / (1 << 30),
                 (double)json_integer_value(json_object_get(g, "l2_bytes")) / (1 << 20),
                 drv / 1000, (drv % 1000) / 10);
        gpu_cc = xstrdup(json_string_value(json_object_get(g, "cc")));
        report(d, "gpu", "ok", true, facts, NULL);
        json_decref(g);
    }
    strbuf_release(&err);
    free(worker);
}

static void check_nvcc(struct doctor *d)
{
    strbuf path = STRBUF_INIT, version = STRBUF_INIT, how = STRBUF_INIT;
    if (nvcc_locate(&path, &version, &how) < 0) {
        report(d, "nvcc", "missing", true, "nvcc not found", how.buf);
    } else {
        char arch[16];
        char *facts = xasprintf("%s, CUDA %s; builds for %s%s", path.buf, version.buf,
                                gpu_cc ? eval_arch_for_cc(gpu_cc, arch) : "sm_90a",
                                gpu_cc ? " (the GPU's own)" : " (no GPU seen: the default)");
        report(d, "nvcc", "ok", true, facts, NULL);
        free(facts);
    }
    strbuf_release(&path);
    strbuf_release(&version);
    strbuf_release(&how);
}

static void check_cutlass(struct doctor *d, const char *flag)
{
    strbuf where = STRBUF_INIT, version = STRBUF_INIT, how = STRBUF_INIT;
    if (cutlass_locate(flag, &where, &version, &how) < 0) {
        report(d, "cutlass", "missing", true, "CUTLASS/CuTe headers not found", how.buf);
    } else {
        char *facts = xasprintf("%s (CUTLASS %s, %s)", where.buf, version.buf, how.buf);
        report(d, "cutlass", "ok", true, facts, NULL);
        free(facts);
    }
    strbuf_release(&where);
    strbuf_release(&version);
    strbuf_release(&how);
}

static void check_torch(struct doctor *d, const char *python)
{
    const char *code =
        "import json,sys\n"
        "try:\n import torch\n"
        "except Exception as e:\n print(json.dumps({'error': str(e)})); sys.exit(0)\n"
        "print(json.dumps({'python': sys.version.split()[0], 'torch': torch.__version__,"
        " 'cuda': torch.version.cuda, 'gpu': torch.cuda.is_available()}))\n";
    const char *argv[] = { python, "-c", code, NULL };
    proc_opts o = { .argv = argv, .timeout_s = 120 };
    proc_result r;
    proc_result_init(&r);
    const char *fix = "install PyTorch with CUDA for this python (https://pytorch.org), or set "
                      "CUTEGEN_PYTHON to a python that has it";
    if (proc_run(&o, &r) < 0 || r.exit_code != 0) {
        report(d, "torch", "missing", true, r.err.len ? r.err.buf : "python3 failed", fix);
        proc_result_release(&r);
        return;
    }
    json_t *j = json_loads(r.out.buf, 0, NULL);
    const char *e = json_string_value(json_object_get(j, "error"));
    if (!j || e) {
        char *facts = xasprintf("%s cannot import torch: %s", python, e ? e : r.out.buf);
        report(d, "torch", "missing", true, facts, fix);
        free(facts);
    } else {
        bool gpu = json_is_true(json_object_get(j, "gpu"));
        const char *cuda = json_string_value(json_object_get(j, "cuda"));
        char *facts = xasprintf("%s: python %s, torch %s, CUDA %s%s", python,
                                json_string_value(json_object_get(j, "python")),
                                json_string_value(json_object_get(j, "torch")),
                                cuda ? cuda : "none (a CPU-only build)",
                                gpu ? ", sees the GPU" : ", sees no GPU");
        report(d, "torch", gpu && cuda ? "ok" : "warn", true, facts,
               cuda ? "check that the driver works (nvidia-smi)" : fix);
        free(facts);
    }
    json_decref(j);
    proc_result_release(&r);
}

static void check_tool(struct doctor *d, const char *name, const char *const *version_argv,
                       bool required, const char *fix)
{
    char *path = find_in_path(version_argv[0]);
    if (!path && strcmp(version_argv[0], "ncu") == 0) {
        const char *guesses[] = { "/usr/local/cuda/bin/ncu", "/opt/nvidia/nsight-compute/ncu", NULL };
        for (int i = 0; guesses[i] && !path; i++)
            if (is_executable(guesses[i]))
                path = xstrdup(guesses[i]);
    }
    if (!path) {
        report(d, name, required ? "missing" : "warn", required, "not found", fix);
        return;
    }
    const char *argv[] = { path, version_argv[1], NULL };
    proc_opts o = { .argv = argv, .timeout_s = 30 };
    proc_result r;
    proc_result_init(&r);
    proc_run(&o, &r);
    strbuf facts = STRBUF_INIT;
    strbuf_addf(&facts, "%s", path);
    /* the line naming the version ("Version 2025.3..."), else the first line */
    const char *line = strstr(r.out.buf, "\nVersion");
    line = line ? line + 1 : r.out.buf;
    const char *end = strchr(line, '\n');
    if (*line)
        strbuf_addf(&facts, ", %.*s", (int)(end ? end - line : (long)strlen(line)), line);
    report(d, name, "ok", required, facts.buf, NULL);
    strbuf_release(&facts);
    proc_result_release(&r);
    free(path);
}

static void check_cache(struct doctor *d)
{
    const char *dir = cg_cache_dir();
    bool ok = mkdir_p(dir, 0755) == 0 && access(dir, W_OK) == 0;
    report(d, "cache", ok ? "ok" : "missing", true, dir,
           "set CUTEGEN_CACHE_DIR to a writable directory");
}

int cmd_doctor(int argc, char **argv)
{
    struct doctor d = { .checks = json_array(), .all_required_ok = true };
    int device = 0;
    const char *python = getenv("CUTEGEN_PYTHON");
    const char *cutlass = NULL;
    static const struct option opts[] = { { "json", no_argument, NULL, 'j' },
                                          { "device", required_argument, NULL, 'd' },
                                          { "python", required_argument, NULL, 'p' },
                                          { "cutlass", required_argument, NULL, 'c' },
                                          { "help", no_argument, NULL, 'h' },
                                          { NULL, 0, NULL, 0 } };
    int c;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'j': d.json = true; break;
        case 'd': device = atoi(optarg); break;
        case 'p': python = optarg; break;
        case 'c': cutlass = optarg; break;
        case 'h': fputs(usage_text, stdout); json_decref(d.checks); return EXIT_OK;
        default: fputs(usage_text, stderr); json_decref(d.checks); return EXIT_USAGE;
        }
    }
    if (!python || !*python)
        python = "python3";
    if (!d.json)
        printf("cutegen %s (sources: %s)\n", CUTEGEN_VERSION, cg_source_dir());
    check_gpu(&d, device);
    check_nvcc(&d);
    check_cutlass(&d, cutlass);
    check_torch(&d, python);
    static const char *const ncu_v[] = { "ncu", "--version", NULL };
    check_tool(&d, "ncu", ncu_v, false,
               "install Nsight Compute (part of the CUDA toolkit) for 'cutegen profile'");
    static const char *const nm_v[] = { "nm", "--version", NULL };
    check_tool(&d, "nm", nm_v, true, "apt-get install binutils");
    static const char *const od_v[] = { "objdump", "--version", NULL };
    check_tool(&d, "objdump", od_v, true, "apt-get install binutils");
    check_cache(&d);
    if (d.json) {
        json_t *out = json_pack("{s:s, s:b, s:o}", "version", CUTEGEN_VERSION, "ready",
                                d.all_required_ok, "checks", d.checks);
        json_dumpf(out, stdout, JSON_INDENT(2));
        printf("\n");
        json_decref(out);
    } else {
        printf("%s\n", d.all_required_ok ? "ready: cutegen eval can run here"
                                         : "not ready: fix the lines marked missing");
        json_decref(d.checks);
    }
    free(gpu_cc);
    return d.all_required_ok ? EXIT_OK : EXIT_VERDICT;
}
