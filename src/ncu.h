/*
 * ncu: Nsight Compute, driven and read. Three parts:
 *   1. command lines: the profiling run of a worker process (which brackets exactly one
 *      forward call with cudaProfilerStart/Stop after its warm-ups, so each kernel of
 *      that call is profiled once) and the two imports of the report it writes (raw CSV
 *      for the numbers, the details page for people and for ncu's advice);
 *   2. ncu_run(): all three through proc_run with time limits, failures classified
 *      (no ncu, no permission for the counters, target crashed, time-out, no kernels);
 *   3. parsers for `--csv --page raw` (units normalised: seconds, bytes, bytes/s, hz, %)
 *      and for the advice lines (OPT/WRN/INF) of `--page details`.
 * Library code: nothing is printed; errors go to the caller's strbuf.
 */
#ifndef CUTEGEN_NCU_H
#define CUTEGEN_NCU_H

#include <stdbool.h>
#include <stddef.h>

#include "strbuf.h"

/* ---------------------------------------------------------------- running ncu */

typedef struct ncu_opts {
    const char *ncu;                 /* ncu's path; NULL: PATH, then /usr/local/cuda/bin/ncu */
    const char *const *target_argv;  /* the program to profile (the worker), NULL-terminated */
    const char *const *env_add;      /* added to the target's environment; may be NULL */
    const char *report_base;         /* report path without ".ncu-rep" */
    double timeout_s;                /* limit for the profiling run; <= 0: 600 s */
    double import_timeout_s;         /* limit for each import; <= 0: 120 s */
    bool source_counters;            /* add the SourceCounters section (bank conflicts,
                                        excessive sectors, branch divergence) */
    const char *kernel_regex;        /* profile only kernels matching (ncu -k regex:); NULL: all */
} ncu_opts;

typedef enum ncu_status {
    NCU_OK = 0,
    NCU_NOT_FOUND,      /* no ncu to run */
    NCU_NO_PERMISSION,  /* ERR_NVGPUCTRPERM: counters restricted to admin users */
    NCU_TARGET_FAILED,  /* the profiled program crashed or exited with an error */
    NCU_TIMEOUT,        /* the time limit was reached */
    NCU_NO_KERNELS,     /* ncu ran but profiled nothing */
    NCU_FAILED          /* any other failure of ncu itself */
} ncu_status;

typedef struct ncu_capture {
    ncu_status status;
    char *report_path;   /* "<report_base>.ncu-rep" (malloc'd) */
    strbuf log;          /* stdout+stderr of the profiling run (capped) */
    strbuf raw_csv;      /* `--import --csv --page raw` */
    strbuf details;      /* `--import --page details` */
    int target_exit;     /* ncu's exit status for the profiling run */
    double profile_s;    /* wall time of the profiling run */
    double total_s;      /* wall time of all three runs */
} ncu_capture;

void ncu_capture_init(ncu_capture *c);
void ncu_capture_release(ncu_capture *c);

/* NULL-terminated argv vectors (malloc'd strings); free with ncu_argv_free(). */
char **ncu_profile_argv(const ncu_opts *o, const char *ncu_path);
/* page: "raw" (CSV) or "details" (text). */
char **ncu_import_argv(const char *ncu_path, const char *report_path, const char *page);
void ncu_argv_free(char **argv);

/* The ncu to run: o->ncu, else "ncu" in PATH, else /usr/local/cuda/bin/ncu; NULL when
 * none is executable. malloc'd. */
char *ncu_find(const char *configured);

/* Profiles, then imports both pages. Returns 0 with cap->status == NCU_OK and both
 * pages filled, else -1 with cap->status saying which failure and err a message that
 * says what to do. cap->log keeps ncu's output either way. */
int ncu_run(const ncu_opts *o, ncu_capture *cap, strbuf *err);

/* Classifies a finished profiling run from its output and exit (what ncu_run uses;
 * public for tests). Appends the message for a failure to err. */
ncu_status ncu_classify(const char *output, int exit_code, bool timed_out, strbuf *err);

const char *ncu_status_name(ncu_status s);

/* ---------------------------------------------------------------- the raw CSV page */

/* One profiled launch: the raw cell text and the normalised value of every column
 * (NAN where the cell is not a number: "n/a", "no data", names, tuples). */
typedef struct ncu_launch {
    int id;              /* ncu's "ID" */
    const char *kernel;  /* "Kernel Name" (points into text[]) */
    char **text;
    double *value;
} ncu_launch;

typedef struct ncu_table {
    size_t ncols;
    char **names;        /* metric names, the header row */
    char **units;        /* normalised units: "s", "byte", "byte/s", "hz", "%", ... */
    double *scale;       /* factor applied to each column's numbers */
    size_t nlaunches;
    ncu_launch *launches;
    size_t *order;       /* column indices sorted by name, for lookup */
} ncu_table;

void ncu_table_release(ncu_table *t);
/* Parses `ncu --csv --page raw` output; text before the header row (the program's
 * output, ==PROF==/==WARNING==/==ERROR== lines) and after the rows is skipped.
 * Returns 0, or -1 with err saying what is wrong (no header, no units row, a row with
 * the wrong number of fields). A table with no launches is not an error. */
int ncu_table_parse(const char *text, size_t len, ncu_table *t, strbuf *err);
/* Column of a metric, or -1. */
long ncu_table_col(const ncu_table *t, const char *name);
/* The normalised value of a metric for a launch, NAN when absent or not a number. */
double ncu_value(const ncu_table *t, const ncu_launch *l, const char *name);
/* The cell text, or NULL when the column is absent. */
const char *ncu_text(const ncu_table *t, const ncu_launch *l, const char *name);

/* Normalises a unit: *scale multiplies the number, out gets the unit in base form
 * ("us" -> "s" x1e-6, "Kbyte/block" -> "byte/block" x1e3, "Tbyte/s" -> "byte/s" x1e12,
 * "Ghz" -> "hz" x1e9, "MB" -> "byte" x1e6). Units it does not know are kept, scale 1. */
void ncu_unit_normalise(const char *unit, strbuf *out, double *scale);
/* Parses a cell as a number: thousands separators allowed; NAN for anything else. */
double ncu_parse_number(const char *s);

/* ---------------------------------------------------------------- the details page */

typedef struct ncu_advice {
    char kind[4];          /* "OPT", "WRN", "INF" */
    char *section;         /* the section it was printed under, e.g. "Occupancy" */
    double est_speedup;    /* "Est. Speedup" / "Est. Local Speedup" percent, or NAN */
    bool local;            /* the estimate is a local one */
    char *text;            /* the message, whitespace collapsed */
} ncu_advice;

typedef struct ncu_details_kernel {
    char *name;            /* as in the raw page's "Kernel Name" */
    ncu_advice *advice;
    size_t nadvice;
} ncu_details_kernel;

typedef struct ncu_details {
    ncu_details_kernel *kernels;  /* one per profiled launch, in order */
    size_t nkernels;
} ncu_details;

void ncu_details_release(ncu_details *d);
/* Parses `ncu --page details` output. Returns 0 (no kernels is not an error). */
int ncu_details_parse(const char *text, ncu_details *d, strbuf *err);

/* A kernel's short name: "void gemm_device<...>(T1, ...)" -> "gemm_device",
 * "copy_kernel(const float *, ...)" -> "copy_kernel", "ns::k<...>" -> "ns::k". */
void ncu_short_name(const char *kernel, strbuf *out);

#endif
