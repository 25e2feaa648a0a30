/*
 * report: what a finished run (or several, merged) achieved, as tables and plots.
 *
 * DESIGN. report_load() reads a run directory through the store (read only: tasks,
 * nodes, model calls, each best node's eval report) into a flat list of problems, one
 * row each; everything after that is pure computation on the rows: statistics per
 * group (overall, level, category) and writers for Markdown, CSV, JSON (with the shape
 * KernelBench's analysis scripts read) and one self-contained HTML page whose plots are
 * inline SVG drawn here. docs/report.md defines every number.
 *
 * Errors: functions append to err and return -1; nothing here prints or exits.
 */
#ifndef CUTEGEN_REPORT_H
#define CUTEGEN_REPORT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "strbuf.h"

/* One node of a problem's search tree, for the tree plot. */
typedef struct report_node {
    int64_t id, parent;   /* parent 0 for roots */
    int depth;
    char kind[24];
    char verdict[24];     /* "" while pending */
    double time_ms;       /* NAN when unknown */
    char *params;         /* a recipe's "// Parameters:" line (its variant), or NULL */
    char *message;        /* the judgment's message (why it failed), or NULL */
} report_node;

/* A timing summary in milliseconds (NAN when unknown). */
typedef struct report_timing {
    double mean, median, std, min, max;
    int n;
} report_timing;

typedef struct report_problem {
    char *name;           /* the task's name: the problem file's name */
    char *run_dir;        /* the run it came from */
    char *problem_path;
    int level;            /* 0 when unknown */
    int problem_id;       /* KernelBench's leading number, 0 when none */
    const char *category; /* static string: matmul, conv, ... (report_category) */
    bool correct;         /* a best node exists (verdict ok) */
    bool compiled;        /* some node got past the build */
    int64_t best_node;    /* 0 when none */
    report_timing kernel, eager, compile;
    double speedup_eager, speedup_compile; /* of the best node; NAN when not correct */
    double sol_fraction;  /* speed-of-light time / kernel time; NAN when unknown */
    int64_t calls, tokens_in, tokens_out;
    double cost_usd, wall_s;
    char *stop_reason;    /* NULL when the task never stopped */
    char *gpu;            /* the GPU name from the eval report, or NULL */
    int verdicts[7];      /* ok, compile_error, runtime_error, wrong_result, timeout, rejected, other */
    report_node *nodes;
    size_t n_nodes;
} report_problem;

typedef struct report {
    report_problem *p;
    size_t n, cap;
    char **runs;
    size_t n_runs;
    strbuf warnings;      /* one line each: duplicates, unreadable reports */
} report;

#define REPORT_N_FAST 4
extern const double report_fast_p_values[REPORT_N_FAST]; /* 0, 1, 1.5, 2 */

/* Statistics of one group of problems. speedups NAN are failures. */
typedef struct report_stats {
    size_t n, correct;
    double correct_rate;
    double fast[REPORT_N_FAST]; /* fraction of all problems correct with speedup > p */
    double geo_all;       /* geometric mean, failures counted as 1.0x */
    double geo_correct;   /* geometric mean over correct ones only (NAN when none) */
    double mean, median;  /* over correct ones only (NAN when none) */
} report_stats;

void report_init(report *r);
void report_release(report *r);

/* Adds every task of the run at run_dir. A task already loaded from another run (the
 * same name) keeps the better of the two (correct over not, then the faster) and a line
 * goes to r->warnings. */
int report_load(report *r, const char *run_dir, strbuf *err);
/* Sorts problems by level, then problem id, then name. */
void report_sort(report *r);

/* The statistics of n speedups (NAN = failure). */
void report_stats_of(const double *speedup, size_t n, report_stats *out);
/* The fraction of the n values that are correct (not NAN) and > p. */
double report_fast_p(const double *speedup, size_t n, double p);

/* The category of a problem from its operator graph (the task spec's "graph": a list of
 * torch.fx nodes, may be NULL) and its name: matmul, conv, elementwise, reduction, norm,
 * pooling, loss, fused or other. level 2 and up without a single category: fused. */
const char *report_category(const char *name, json_t *graph, int level);
/* KernelBench's level from a path or name ("level1/19_ReLU.py" → 1), 0 when none. */
int report_level_of(const char *path);

/* Writes the report in a format: "md", "csv", "json" or "html". tree_problem names the
 * problem whose search tree the HTML page draws (NULL: the one with the most nodes). */
int report_write(const report *r, const char *format, const char *tree_problem, strbuf *out,
                 strbuf *err);

#endif
