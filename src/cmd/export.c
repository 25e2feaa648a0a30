/*
 * cutegen export: each task's best kernel of a finished run as a KernelBench ModelNew
 * file (src/export.h), plus index.json, in the output directory.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd/commands.h"
#include "bench.h"
#include "export.h"
#include "util.h"

static const char usage_text[] =
    "usage: cutegen export RUN_DIR --format kernelbench --out DIR [options]\n"
    "\n"
    "Writes each task's best kernel as a KernelBench ModelNew file: a Python module that\n"
    "builds the CuTe kernel with torch.utils.cpp_extension.load_inline and calls it through\n"
    "cutegen's ABI. Files are named as KernelBench's generation scripts name them\n"
    "(level_L_problem_N_sample_0_kernel.py) when the level and number are known, else\n"
    "<problem>_kernel.py; index.json lists them.\n"
    "\n"
    "  --format F        kernelbench (the default and only format)\n"
    "  --out DIR         the output directory (made when missing)\n"
    "  --problems DIR    where to find problem files whose recorded path is gone (DIR/name\n"
    "                    or DIR/levelN/name)\n"
    "  --cutlass DIR     CUTLASS include dir recorded as the fallback (the file prefers\n"
    "                    $CUTLASS_DIR, then the nvidia-cutlass package, where it runs)\n"
    "  --arch ARCH       GPU arch the file builds for (default sm_90a)\n"
    "  -q, --quiet       no progress lines\n"
    "  -h, --help        this text\n"
    "\n"
    "Exit codes: 0 at least one kernel exported (or none to export); 2 bad usage or an\n"
    "unreadable run; 9 the output cannot be written.\n";

enum { OPT_FORMAT = 256, OPT_OUT, OPT_PROBLEMS, OPT_CUTLASS, OPT_ARCH };

static const struct option long_opts[] = {
    { "format", required_argument, NULL, OPT_FORMAT }, { "out", required_argument, NULL, OPT_OUT },
    { "problems", required_argument, NULL, OPT_PROBLEMS }, { "cutlass", required_argument, NULL, OPT_CUTLASS },
    { "arch", required_argument, NULL, OPT_ARCH },     { "quiet", no_argument, NULL, 'q' },
    { "help", no_argument, NULL, 'h' },               { NULL, 0, NULL, 0 },
};

int cmd_export(int argc, char **argv)
{
    export_opts o;
    memset(&o, 0, sizeof o);
    o.format = "kernelbench";
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "qh", long_opts, NULL)) != -1) {
        switch (c) {
        case OPT_FORMAT: o.format = optarg; break;
        case OPT_OUT: o.out_dir = optarg; break;
        case OPT_PROBLEMS: o.problems_dir = optarg; break;
        case OPT_CUTLASS: o.cutlass_include = optarg; break;
        case OPT_ARCH: o.arch = optarg; break;
        case 'q': cg_quiet = true; break;
        case 'h': fputs(usage_text, stdout); return EXIT_OK;
        default: fputs(usage_text, stderr); return EXIT_USAGE;
        }
    }
    if (strcmp(o.format, "kernelbench")) {
        error("unknown --format '%s': use kernelbench", o.format);
        return EXIT_USAGE;
    }
    if (optind != argc - 1 || !o.out_dir) {
        error(optind != argc - 1 ? "export takes one run directory" : "--out DIR is required");
        fputs(usage_text, stderr);
        return EXIT_USAGE;
    }
    strbuf log = STRBUF_INIT, err = STRBUF_INIT;
    int n_runs, n = 0;
    char **runs = bench_run_dirs(argv[optind], &n_runs); /* a sweep: each problem's run */
    if (!runs) {
        o.run_dir = argv[optind];
        n = export_run(&o, &log, &err);
    }
    for (int i = 0; runs && i < n_runs; i++) {
        o.run_dir = runs[i];
        int k = n >= 0 ? export_run(&o, &log, &err) : 0;
        n = k < 0 ? k : n + k;
        free(runs[i]);
    }
    free(runs);
    if (log.len && !cg_quiet)
        fputs(log.buf, stderr);
    int rc = EXIT_OK;
    if (n < 0) {
        error("%s", strbuf_str(&err));
        rc = strstr(strbuf_str(&err), "unable to write") || strstr(strbuf_str(&err), "unable to make") ? EXIT_INTERNAL : EXIT_USAGE;
    } else {
        printf("exported %d kernel%s to %s\n", n, n == 1 ? "" : "s", o.out_dir);
    }
    strbuf_release(&log);
    strbuf_release(&err);
    return rc;
}
