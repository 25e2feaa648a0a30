/*
 * slurm: a benchmark sweep beyond one host. Writes the Slurm batch script that runs
 * `cutegen bench` as an array job, one task per shard, and submits it with sbatch.
 *
 * DESIGN: array task I of N runs
 *     cutegen bench ARGS --shard I/N --run-dir RUN_DIR/shard-I
 * so every task has its own run directory and the tasks share nothing but the problem
 * files. The job is requeueable and a requeued task (a node lost, a preemption,
 * `scontrol requeue`) runs the same command on the same directory, which resumes the
 * shard where it stopped. Each task's output goes to RUN_DIR/slurm/<array job>_<I>.out,
 * appended, so a requeued attempt follows the first in one file. `cutegen report --merge
 * 'RUN_DIR/shard-*'` combines the shards afterwards. The script is complete in itself:
 * it can be submitted by slurm_submit() or by hand (`sbatch SCRIPT`), again and again.
 *
 * Quoting: the body is POSIX sh and every argument is single-quoted (left bare when it
 * holds only characters no shell treats specially). `#SBATCH` lines are read by sbatch,
 * not by a shell: their values are double-quoted with backslash escapes, and a file name
 * pattern doubles '%' (Slurm's replacement symbols). A value holding a newline cannot be
 * written on an `#SBATCH` line, and a run directory holding a backslash turns Slurm's
 * replacement symbols off: both are refused.
 *
 * A leaf: it knows nothing of bench, stores or problems; it uses strbuf, util and proc.
 */
#ifndef CUTEGEN_SLURM_H
#define CUTEGEN_SLURM_H

#include "strbuf.h"

typedef struct slurm_job {
    const char *run_dir;      /* absolute: the sweep's directory (shard-I/, slurm/ go under it) */
    int shards;               /* N >= 1: array tasks 0..N-1 */
    int gpus_per_task;        /* G > 0: --gres=gpu:G; 0: no GPU requested */
    int cpus_per_task;        /* > 0: --cpus-per-task; 0: the cluster's default */
    const char *partition;    /* NULL: the cluster's default partition */
    const char *time_limit;   /* NULL: the partition's default; else as sbatch --time takes it */
    const char *job_name;     /* NULL: "cutegen-bench" */
    const char *cutegen;      /* absolute path of the cutegen binary the tasks run */
    const char *workdir;      /* absolute: where the tasks start (--chdir), so that relative
                                 paths in bench_argv mean what they meant here; NULL: none */
    const char *const *bench_argv; /* NULL-terminated: bench's arguments after "bench",
                                      without the Slurm flags, --shard and --run-dir */
} slurm_job;

/* Appends arg to out as one POSIX sh word: bare when it holds only [A-Za-z0-9_./:=,+@%-]
 * (and is not empty), else in single quotes with each ' written as '\''. */
void slurm_quote(strbuf *out, const char *arg);

/* Where slurm_write_script() puts the script: RUN_DIR/slurm/bench.sbatch (malloc'd). */
char *slurm_script_path(const char *run_dir);

/* Appends the batch script for job to out. Returns 0, or -1 with the reason in err (a
 * relative path, no shards, a value that cannot be written safely, a --shard or
 * --run-dir among bench_argv). */
int slurm_script(const slurm_job *job, strbuf *out, strbuf *err);

/* Writes the script to slurm_script_path(job->run_dir), creating RUN_DIR/slurm (Slurm
 * does not create the directory of an output file; a task whose output cannot be
 * opened fails at once). Returns 0 and the path in *path (malloc'd), or -1 with err. */
int slurm_write_script(const slurm_job *job, char **path, strbuf *err);

enum slurm_submit_result {
    SLURM_SUBMITTED = 0,
    SLURM_NO_SBATCH = -1, /* sbatch is not installed or could not be started */
    SLURM_REFUSED = -2    /* sbatch ran and refused the job, or said something unexpected */
};

/* Submits the script with `sbatch --parsable SCRIPT`; sbatch is the program to run
 * (NULL: "sbatch", looked up in PATH). On success, appends the job id to job_id. On
 * failure, err says what happened and what to do (where to run, which flag to change). */
enum slurm_submit_result slurm_submit(const char *script, const char *sbatch, strbuf *job_id,
                                      strbuf *err);

#endif
