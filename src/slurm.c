/*
 * slurm: the batch script of a sharded sweep (an array job, one task per shard) and its
 * submission through sbatch. slurm.h says why the script looks as it does.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "proc.h"
#include "slurm.h"
#include "util.h"

/* ---------------------------------------------------------------- quoting */

static bool is_safe_char(char c, const char *extra)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           strchr("_./:=,+@-", c) != NULL || (extra && strchr(extra, c) != NULL);
}

static bool all_safe(const char *s, const char *extra)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (!is_safe_char(*s, extra))
            return false;
    return true;
}

void slurm_quote(strbuf *out, const char *arg)
{
    if (all_safe(arg, "%")) {
        strbuf_adds(out, arg);
        return;
    }
    strbuf_addc(out, '\'');
    for (const char *p = arg; *p; p++) {
        if (*p == '\'')
            strbuf_adds(out, "'\\''");
        else
            strbuf_addc(out, *p);
    }
    strbuf_addc(out, '\'');
}

/* An #SBATCH line: "#SBATCH --NAME=VALUE". sbatch reads the value itself (not a shell):
 * inside double quotes a backslash escapes the next character and '#' is not a comment.
 * In a file name pattern (pattern), '%' is doubled, which Slurm reads as a literal percent
 * sign, and suffix is added as it is (it holds the pattern's own replacement symbols). */
static void add_directive(strbuf *out, const char *name, const char *value, bool pattern,
                          const char *suffix)
{
    strbuf v = STRBUF_INIT;
    for (const char *p = value; *p; p++) {
        if (pattern && *p == '%')
            strbuf_addc(&v, '%');
        strbuf_addc(&v, *p);
    }
    if (suffix)
        strbuf_adds(&v, suffix);
    strbuf_addf(out, "#SBATCH --%s=", name);
    if (all_safe(strbuf_str(&v), "%")) {
        strbuf_adds(out, strbuf_str(&v));
    } else {
        strbuf_addc(out, '"');
        for (const char *p = strbuf_str(&v); *p; p++) {
            if (*p == '"' || *p == '\\')
                strbuf_addc(out, '\\');
            strbuf_addc(out, *p);
        }
        strbuf_addc(out, '"');
    }
    strbuf_addc(out, '\n');
    strbuf_release(&v);
}

/* ---------------------------------------------------------------- checks */

static bool has_line_break(const char *s)
{
    return strpbrk(s, "\n\r") != NULL;
}

static int check_path(const char *what, const char *path, strbuf *err)
{
    if (!path || !*path) {
        strbuf_addf(err, "no %s given for the batch script", what);
        return -1;
    }
    if (path[0] != '/') {
        strbuf_addf(err, "the %s '%s' must be an absolute path in a batch script "
                         "(the job starts in another directory, maybe on another host)", what, path);
        return -1;
    }
    if (has_line_break(path)) {
        strbuf_addf(err, "the %s '%s' holds a line break, which a batch script cannot carry", what, path);
        return -1;
    }
    return 0;
}

static int check_value(const char *what, const char *value, strbuf *err)
{
    if (!value)
        return 0;
    if (!*value) {
        strbuf_addf(err, "the %s is empty", what);
        return -1;
    }
    if (has_line_break(value)) {
        strbuf_addf(err, "the %s '%s' holds a line break, which a batch script cannot carry", what, value);
        return -1;
    }
    return 0;
}

/* sbatch --time takes minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS. */
static bool time_limit_ok(const char *t)
{
    int colons = 0, dashes = 0;
    bool digit_before = false;
    for (const char *p = t; *p; p++) {
        if (*p >= '0' && *p <= '9') {
            digit_before = true;
            continue;
        }
        if (!digit_before || (*p != ':' && *p != '-'))
            return false;
        if (*p == ':')
            colons++;
        else if (colons || dashes++)
            return false;
        digit_before = false;
    }
    return digit_before && colons <= 2;
}

/* The script adds these itself; one left among bench's arguments would clash, and a
 * --slurm flag would make every task submit another sweep. */
static int check_bench_arg(const char *arg, strbuf *err)
{
    static const char *const reserved[] = { "--shard", "--shards", "--run-dir" };
    for (size_t i = 0; i < sizeof reserved / sizeof reserved[0]; i++) {
        size_t n = strlen(reserved[i]);
        if (!strncmp(arg, reserved[i], n) && (arg[n] == '\0' || arg[n] == '=')) {
            strbuf_addf(err, "bench's arguments for the batch script hold '%s', which the "
                             "script sets for each task", reserved[i]);
            return -1;
        }
    }
    if (str_starts_with(arg, "--slurm")) {
        strbuf_addf(err, "bench's arguments for the batch script hold '%s': each task would "
                         "submit another sweep", arg);
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- the script */

char *slurm_script_path(const char *run_dir)
{
    return xasprintf("%s/slurm/bench.sbatch", run_dir);
}

int slurm_script(const slurm_job *job, strbuf *out, strbuf *err)
{
    if (check_path("run directory", job->run_dir, err) < 0 ||
        check_path("cutegen binary", job->cutegen, err) < 0 ||
        (job->workdir && check_path("working directory", job->workdir, err) < 0) ||
        check_value("partition", job->partition, err) < 0 ||
        check_value("job name", job->job_name, err) < 0 ||
        check_value("time limit", job->time_limit, err) < 0)
        return -1;
    if (strchr(job->run_dir, '\\')) {
        strbuf_addf(err, "the run directory '%s' holds a backslash, which turns off Slurm's "
                         "%%A/%%a in output file names: choose another directory", job->run_dir);
        return -1;
    }
    if (job->shards < 1) {
        strbuf_addf(err, "a sweep needs at least one shard (got %d)", job->shards);
        return -1;
    }
    if (job->gpus_per_task < 0 || job->cpus_per_task < 0) {
        strbuf_addf(err, "GPUs and CPUs per task cannot be negative (got %d and %d)",
                    job->gpus_per_task, job->cpus_per_task);
        return -1;
    }
    if (job->time_limit && !time_limit_ok(job->time_limit)) {
        strbuf_addf(err, "bad time limit '%s': use HH:MM:SS (or minutes, MM:SS, D-HH, "
                         "D-HH:MM, D-HH:MM:SS, as sbatch --time takes it)", job->time_limit);
        return -1;
    }
    for (const char *const *a = job->bench_argv; a && *a; a++)
        if (check_bench_arg(*a, err) < 0)
            return -1;

    /* Every #SBATCH line must come before the first command: sbatch stops reading them there. */
    char *array = xasprintf("0-%d", job->shards - 1);
    strbuf_adds(out, "#!/bin/sh\n");
    add_directive(out, "job-name", job->job_name ? job->job_name : "cutegen-bench", false, NULL);
    add_directive(out, "array", array, false, NULL);
    strbuf_adds(out, "#SBATCH --requeue\n#SBATCH --open-mode=append\n");
    add_directive(out, "output", job->run_dir, true, "/slurm/%A_%a.out");
    if (job->gpus_per_task > 0)
        strbuf_addf(out, "#SBATCH --gres=gpu:%d\n", job->gpus_per_task);
    if (job->cpus_per_task > 0)
        strbuf_addf(out, "#SBATCH --cpus-per-task=%d\n", job->cpus_per_task);
    if (job->partition)
        add_directive(out, "partition", job->partition, false, NULL);
    if (job->time_limit)
        add_directive(out, "time", job->time_limit, false, NULL);
    if (job->workdir)
        add_directive(out, "chdir", job->workdir, false, NULL);

    char *script = slurm_script_path(job->run_dir);
    strbuf_adds(out, "#\n# A sweep of `cutegen bench` as a Slurm array job, written by cutegen "
                     CUTEGEN_VERSION ".\n");
    strbuf_addf(out, "# Array task I runs shard I of %d into RUN_DIR/shard-I; its output goes to\n"
                     "# RUN_DIR/slurm/<array job id>_I.out. A requeued task runs the same command on\n"
                     "# the same directory, which resumes the shard where it stopped.\n",
                job->shards);
    strbuf_adds(out, "#   submit (again):  sbatch ");
    slurm_quote(out, script);
    strbuf_adds(out, "\n#   when it is done: cutegen report --merge ");
    {
        char *pattern = xasprintf("%s/shard-*", job->run_dir);
        strbuf q = STRBUF_INIT;
        slurm_quote(&q, pattern);
        if (q.buf[0] != '\'') /* a glob must reach cutegen unexpanded */
            strbuf_addf(out, "'%s'", q.buf);
        else
            strbuf_adds(out, q.buf);
        strbuf_release(&q);
        free(pattern);
    }
    strbuf_adds(out, "\nset -u\n"
                     "task=${SLURM_ARRAY_TASK_ID:?'is not set: this script is a Slurm array job; "
                     "submit it with sbatch'}\n");
    strbuf_adds(out, "run_dir=");
    slurm_quote(out, job->run_dir);
    strbuf_addf(out, "\necho \"cutegen bench: shard $task of %d into $run_dir/shard-$task "
                     "(job ${SLURM_ARRAY_JOB_ID:-?}_$task, restart ${SLURM_RESTART_COUNT:-0}, "
                     "host $(hostname))\"\n",
                job->shards);
    strbuf_adds(out, "exec ");
    slurm_quote(out, job->cutegen);
    strbuf_adds(out, " bench");
    for (const char *const *a = job->bench_argv; a && *a; a++) {
        strbuf_addc(out, ' ');
        slurm_quote(out, *a);
    }
    strbuf_addf(out, " --shard \"$task/%d\" --run-dir \"$run_dir/shard-$task\"\n", job->shards);
    free(script);
    free(array);
    return 0;
}

int slurm_write_script(const slurm_job *job, char **path, strbuf *err)
{
    strbuf text = STRBUF_INIT;
    *path = NULL;
    if (slurm_script(job, &text, err) < 0) {
        strbuf_release(&text);
        return -1;
    }
    char *dir = xasprintf("%s/slurm", job->run_dir);
    char *file = slurm_script_path(job->run_dir);
    int rc = 0;
    if (mkdir_p(dir, 0755) < 0) {
        strbuf_addf(err, "unable to create '%s': %s", dir, strerror(errno));
        rc = -1;
    } else if (write_file_atomic(file, text.buf, text.len) < 0) {
        strbuf_addf(err, "unable to write '%s': %s", file, strerror(errno));
        rc = -1;
    }
    free(dir);
    strbuf_release(&text);
    if (rc < 0)
        free(file);
    else
        *path = file;
    return rc;
}

/* ---------------------------------------------------------------- submission */

/* What to do about a refusal, from the words sbatch used. */
static const char *refusal_hint(const char *msg)
{
    if (strcasestr(msg, "partition"))
        return "choose a partition that exists and you may use with --slurm-partition "
               "('sinfo -s' lists them)";
    if (strcasestr(msg, "gres") || strcasestr(msg, "generic resource"))
        return "the partition offers no such GPUs: choose a GPU partition with "
               "--slurm-partition ('sinfo -o \"%P %G\"' shows each one's GPUs) or change "
               "--slurm-gpus-per-task";
    if (strcasestr(msg, "time limit"))
        return "ask for less time with --slurm-time ('sinfo -o \"%P %l\"' shows each "
               "partition's limit)";
    if (strcasestr(msg, "array"))
        return "ask for fewer shards with --shards (the cluster caps the size of an array "
               "job: 'scontrol show config | grep MaxArraySize')";
    if (strcasestr(msg, "unable to contact") || strcasestr(msg, "connection refused") ||
        strcasestr(msg, "munge") || strcasestr(msg, "authentication"))
        return "the Slurm controller cannot be reached from here: run this on a login node "
               "of the cluster ('scontrol ping' says whether the controller answers)";
    if (strcasestr(msg, "account") || strcasestr(msg, "qos"))
        return "the cluster wants an account or QOS: set SBATCH_ACCOUNT or SBATCH_QOS in the "
               "environment (sbatch reads them)";
    return "read sbatch's message above; fix the flag it names";
}

enum slurm_submit_result slurm_submit(const char *script, const char *sbatch, strbuf *job_id,
                                      strbuf *err)
{
    const char *prog = sbatch ? sbatch : "sbatch";
    char *found = strchr(prog, '/') ? (is_executable(prog) ? xstrdup(prog) : NULL) : find_in_path(prog);
    if (!found) {
        strbuf_addf(err, "'%s' is not installed here, so the job was not submitted: run "
                         "this on a login node of the cluster, or submit the script written "
                         "to '%s' there with 'sbatch %s' (--slurm-script-only writes it "
                         "without submitting)", prog, script, script);
        return SLURM_NO_SBATCH;
    }
    const char *argv[] = { found, "--parsable", script, NULL };
    proc_opts o = { .argv = argv, .timeout_s = 120, .max_output = 64u << 10 };
    proc_result r;
    proc_result_init(&r);
    enum slurm_submit_result res = SLURM_SUBMITTED;
    if (proc_run(&o, &r) < 0) {
        strbuf_addf(err, "unable to run '%s': %s; submit '%s' by hand with sbatch", found,
                    strbuf_str(&r.err), script);
        res = SLURM_NO_SBATCH;
        goto out;
    }
    strbuf_trim_end(&r.err);
    strbuf_trim_end(&r.out);
    if (r.timed_out || r.exit_code != 0) {
        const char *msg = r.err.len ? r.err.buf : strbuf_str(&r.out);
        if (r.timed_out)
            strbuf_addf(err, "sbatch gave no answer in 120 s\nhint: the Slurm controller may be "
                             "down or overloaded ('scontrol ping' says whether it answers)");
        else
            strbuf_addf(err, "sbatch refused the job (exit code %d): %s\nhint: %s", r.exit_code,
                        *msg ? msg : "(it said nothing)", refusal_hint(msg));
        strbuf_addf(err, "; the script is '%s' (submit it again with 'sbatch %s')", script, script);
        res = SLURM_REFUSED;
        goto out;
    }
    /* --parsable prints "JOBID" or "JOBID;CLUSTER" (sbatch may print warnings on stderr). */
    const char *line = strrchr(r.out.buf ? r.out.buf : "", '\n');
    line = line ? line + 1 : strbuf_str(&r.out);
    size_t n = strspn(line, "0123456789");
    if (n == 0 || (line[n] != '\0' && line[n] != ';')) {
        strbuf_addf(err, "sbatch printed '%s' where a job id was expected; 'squeue --me' says "
                         "whether the job was queued", strbuf_str(&r.out));
        res = SLURM_REFUSED;
        goto out;
    }
    strbuf_add(job_id, line, n);
out:
    proc_result_release(&r);
    free(found);
    return res;
}
