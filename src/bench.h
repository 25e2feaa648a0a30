/*
 * bench: a sweep of many problems on one host (cutegen bench).
 *
 * Each problem is one `cutegen run` child with its own run directory under the sweep's
 * (RUN_DIR/problems/<level>-<name>/), started up to `jobs` at a time. The children share
 * the host through lanes (lane.h): one GPU lane per GPU (a GPU never times two things at
 * once; a problem's tensors are on the GPU only while it holds the lane), and CPU slots
 * for the compilers of all of them. Model calls of different problems overlap freely.
 * The sweep's own state is RUN_DIR/bench.db (SQLite): which problems are queued,
 * running, done or failed, with exit codes and results; running the same command again
 * (or --resume RUN_DIR) continues where it stopped, resuming the problems that were
 * running. A problem that fails in a way nobody foresaw is recorded and the sweep goes on.
 */
#ifndef CUTEGEN_BENCH_H
#define CUTEGEN_BENCH_H

#include <stdbool.h>

#include "strbuf.h"

#define BENCH_MAX_GPUS 16

typedef struct bench_problem {
    char *path;  /* the problem file */
    char *slug;  /* "l1-19_ReLU": the run directory's name */
    int level;   /* 0 when not from a KernelBench tree */
    int number;  /* KernelBench's number, 0 when none */
} bench_problem;

typedef struct bench_opts {
    const char *kernelbench;   /* a KernelBench tree with level1/ level2/ ... */
    const char *levels;        /* "1,2" */
    const char *problems;      /* "1-20,23"; NULL: all */
    const char **tasks;        /* more problem files, given one by one */
    int n_tasks;
    const char *run_dir;
    int jobs;                  /* problems at once (default 4 per GPU) */
    int gpus[BENCH_MAX_GPUS];
    int n_gpus;                /* default: GPU 0 */
    int cpus;                  /* CPU slots for compilers (default: the host's cores) */
    int shard, shards;         /* --shard I/N: 0 <= I < N; N = 1: everything */
    bool in_order;             /* --in-order: the tasks in the order given (after the levels'
                                  problems, sorted), not sorted by level and number */
    double problem_timeout_s;  /* a run taking longer is killed and recorded (default 4 h) */
    int max_attempts;          /* starts of a failing problem, over resumes (default 2) */
    const char **run_args;     /* passed to every `cutegen run` */
    int n_run_args;
    const char *cutegen;       /* the binary to run (default: this one) */
} bench_opts;

void bench_opts_init(bench_opts *o);

/* "1-20,23" → whether n is in it (NULL: everything). -1 when the text is malformed. */
int bench_in_ranges(const char *ranges, int n);

/* The problems of o (levels × problems filter, then o->tasks), sorted by level and
 * number (with o->in_order the levels' only, the tasks after them as given), then
 * sharded. Returns how many (*out malloc'd), or -1 with err set. */
int bench_select(const bench_opts *o, bench_problem **out, strbuf *err);
void bench_problems_free(bench_problem *p, int n);

/* Parses "I/N"; -1 when malformed. */
int bench_parse_shard(const char *text, int *shard, int *shards);

/* The run directories (holding run.db) of a sweep's problems, sorted; NULL when dir is
 * not a sweep (no bench.db). *n is how many; free with bench_problems_free-like loops
 * (each string, then the array). */
char **bench_run_dirs(const char *dir, int *n);

/* Runs (or continues) the sweep. Returns 0 when every problem ended (done or failed:
 * the summary says which), else an EXIT_* code with err set. */
int bench_run(const bench_opts *o, strbuf *err);

#endif
