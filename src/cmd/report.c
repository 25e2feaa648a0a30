/*
 * cutegen report: tables and plots of one or more finished runs (shards of one sweep
 * are merged: a problem that appears in several keeps its best result). Writes Markdown
 * (default), CSV, JSON or one self-contained HTML page to stdout or --out.
 * docs/report.md defines the numbers.
 */
#include <getopt.h>
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/commands.h"
#include "bench.h"
#include "report.h"
#include "util.h"

static const char usage_text[] =
    "usage: cutegen report RUN_DIR [RUN_DIR...] [--merge GLOB...] [options]\n"
    "\n"
    "Per problem: the verified speedup of the best kernel over PyTorch eager and\n"
    "torch.compile, correctness, fraction of speed of light, model calls, tokens, dollars,\n"
    "wall time and why the search stopped; per level, per category and overall: correct\n"
    "rate, fast_p (p = 0, 1, 1.5, 2) and geometric means (failures as 1.0x, and over\n"
    "correct ones only), mean and median.\n"
    "\n"
    "  --merge GLOB      also read every run directory the pattern matches (quote it:\n"
    "                    --merge 'runs/shard-*'); may be repeated\n"
    "  --format F        md (default), csv (one row a problem), json (with KernelBench's\n"
    "                    eval_results and baseline shapes), html (one page, inline SVG plots)\n"
    "  --out FILE        write there instead of standard output\n"
    "  --tree PROBLEM    the problem whose search tree the HTML page draws (its file\n"
    "                    name; default: the one with the most nodes)\n"
    "  -q, --quiet       no warnings about merged duplicates\n"
    "  -h, --help        this text\n"
    "\n"
    "Read runs after they finish: a run in use by another cutegen process is refused.\n"
    "Exit codes: 0 written; 2 bad usage or an unreadable run; 9 the output cannot be written.\n";

enum { OPT_MERGE = 256, OPT_FORMAT, OPT_OUT, OPT_TREE };

static const struct option long_opts[] = {
    { "merge", required_argument, NULL, OPT_MERGE }, { "format", required_argument, NULL, OPT_FORMAT },
    { "out", required_argument, NULL, OPT_OUT },     { "tree", required_argument, NULL, OPT_TREE },
    { "quiet", no_argument, NULL, 'q' },             { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
};

static int load_one(report *r, const char *dir)
{
    int n;
    char **runs = bench_run_dirs(dir, &n); /* a sweep (cutegen bench): its problems' runs */
    if (runs) {
        int rc = 0;
        for (int i = 0; i < n; i++) {
            if (!rc)
                rc = load_one(r, runs[i]);
            free(runs[i]);
        }
        free(runs);
        if (!n)
            warning("the sweep '%s' holds no run yet", dir);
        return rc;
    }
    strbuf err = STRBUF_INIT;
    int rc = report_load(r, dir, &err);
    if (rc < 0)
        error("%s", strbuf_str(&err));
    strbuf_release(&err);
    return rc;
}

int cmd_report(int argc, char **argv)
{
    const char *format = "md", *out = NULL, *tree = NULL;
    const char **globs = xcalloc((size_t)argc + 1, sizeof *globs);
    int n_globs = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "qh", long_opts, NULL)) != -1) {
        switch (c) {
        case OPT_MERGE: globs[n_globs++] = optarg; break;
        case OPT_FORMAT: format = optarg; break;
        case OPT_OUT: out = optarg; break;
        case OPT_TREE: tree = optarg; break;
        case 'q': cg_quiet = true; break;
        case 'h':
            fputs(usage_text, stdout);
            free(globs);
            return EXIT_OK;
        default:
            fputs(usage_text, stderr);
            free(globs);
            return EXIT_USAGE;
        }
    }
    if (strcmp(format, "md") && strcmp(format, "csv") && strcmp(format, "json") && strcmp(format, "html")) {
        error("unknown --format '%s': use md, csv, html or json", format);
        free(globs);
        return EXIT_USAGE;
    }
    if (optind >= argc && !n_globs) {
        error("no run directory given");
        fputs(usage_text, stderr);
        free(globs);
        return EXIT_USAGE;
    }
    report r;
    report_init(&r);
    int rc = EXIT_OK;
    for (int i = optind; i < argc && !rc; i++)
        if (load_one(&r, argv[i]) < 0)
            rc = EXIT_USAGE;
    for (int k = 0; k < n_globs && !rc; k++) {
        glob_t gl;
        int g = glob(globs[k], GLOB_ONLYDIR, NULL, &gl);
        if (g == GLOB_NOMATCH) {
            error("--merge '%s' matches no directory", globs[k]);
            rc = EXIT_USAGE;
        }
        for (size_t i = 0; g == 0 && i < gl.gl_pathc && !rc; i++) {
            char *db = xasprintf("%s/run.db", gl.gl_pathv[i]);
            char *bdb = xasprintf("%s/bench.db", gl.gl_pathv[i]);
            bool is_run = file_exists(db) || file_exists(bdb);
            free(db);
            free(bdb);
            if (is_run && load_one(&r, gl.gl_pathv[i]) < 0)
                rc = EXIT_USAGE;
        }
        if (g == 0)
            globfree(&gl);
    }
    free(globs);
    if (!rc && !r.n_runs) {
        error("no run directory found (a run holds run.db)");
        rc = EXIT_USAGE;
    }
    strbuf text = STRBUF_INIT, err = STRBUF_INIT;
    if (!rc) {
        if (r.warnings.len && !cg_quiet)
            fputs(r.warnings.buf, stderr);
        report_sort(&r);
        if (report_write(&r, format, tree, &text, &err) < 0) {
            error("%s", strbuf_str(&err));
            rc = EXIT_USAGE;
        }
    }
    if (!rc) {
        if (out) {
            if (write_file_atomic(out, text.buf, text.len) < 0) {
                error("unable to write '%s': %s", out, strerror(errno));
                rc = EXIT_INTERNAL;
            } else {
                progress("wrote %s (%zu problems)", out, r.n);
            }
        } else {
            fwrite(text.buf, 1, text.len, stdout);
        }
    }
    strbuf_release(&text);
    strbuf_release(&err);
    report_release(&r);
    return rc;
}
