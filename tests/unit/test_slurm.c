/* Unit tests for slurm: shell quoting (checked by a real sh), the #SBATCH lines (array,
 * requeue, output pattern, gres, optional ones, values sbatch must read back exactly),
 * the command each array task runs (the script run by sh with a stand-in cutegen), what
 * is refused, and submission through stand-in sbatch programs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proc.h"
#include "slurm.h"
#include "util.h"

static char tmpdir[] = "/tmp/cg-test-slurm.XXXXXX";

static const char *const std_args[] = { "--kernelbench", "/data/KernelBench", "--level", "1,2", "--jobs", "4", NULL };

static slurm_job std_job(void)
{
    slurm_job j = { .run_dir = "/runs/sweep", .shards = 3, .gpus_per_task = 1, .cpus_per_task = 8,
                    .cutegen = "/opt/cutegen/bin/cutegen", .bench_argv = std_args };
    return j;
}

static char *script_of(const slurm_job *j)
{
    strbuf out = STRBUF_INIT, err = STRBUF_INIT;
    int rc = slurm_script(j, &out, &err);
    if (rc < 0)
        fail_msg("slurm_script refused: %s", err.buf);
    strbuf_release(&err);
    return strbuf_detach(&out);
}

static char *refusal_of(const slurm_job *j)
{
    strbuf out = STRBUF_INIT, err = STRBUF_INIT;
    assert_int_equal(slurm_script(j, &out, &err), -1);
    strbuf_release(&out);
    return strbuf_detach(&err);
}

/* The first line of s that starts with prefix, or NULL. */
static char *line_of(const char *s, const char *prefix)
{
    for (const char *p = s; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (!strncmp(p, prefix, strlen(prefix))) {
            const char *e = strchr(p, '\n');
            return xstrndup(p, e ? (size_t)(e - p) : strlen(p));
        }
    return NULL;
}

static void write_exec(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(chmod(path, 0755), 0);
}

/* ---------------------------------------------------------------- quoting */

static void test_quote_words(void **state)
{
    (void)state;
    struct { const char *in, *out; } cases[] = {
        { "abc", "abc" },
        { "--level=1,2", "--level=1,2" },
        { "/a/b-c_d.e:f@g+h%", "/a/b-c_d.e:f@g+h%" },
        { "", "''" },
        { "a b", "'a b'" },
        { "it's", "'it'\\''s'" },
        { "$HOME", "'$HOME'" },
        { "a*b", "'a*b'" },
        { "~x", "'~x'" },
        { "x;rm -rf /", "'x;rm -rf /'" },
        { "`id`", "'`id`'" },
        { "'", "''\\'''" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        strbuf sb = STRBUF_INIT;
        slurm_quote(&sb, cases[i].in);
        assert_string_equal(sb.buf, cases[i].out);
        strbuf_release(&sb);
    }
}

/* Every word, however nasty, comes back from a real sh as it went in. */
static void test_quote_through_sh(void **state)
{
    (void)state;
    const char *words[] = { "plain", "", " lead and trail ", "it's", "''", "\"dq\"", "$(id)",
                            "`id`", "a\\b", "new\nline", "tab\there", "*?[a]", "~root", "#hash",
                            "semi;colon|pipe&amp", "!bang", "{a,b}", "%A_%a", "\xc3\xa9t\xc3\xa9" };
    size_t n = sizeof words / sizeof words[0];
    strbuf cmd = STRBUF_INIT, want = STRBUF_INIT;
    strbuf_adds(&cmd, "printf '%s\\0'");
    for (size_t i = 0; i < n; i++) {
        strbuf_addc(&cmd, ' ');
        slurm_quote(&cmd, words[i]);
        strbuf_add(&want, words[i], strlen(words[i]) + 1);
    }
    const char *argv[] = { "sh", "-c", cmd.buf, NULL };
    proc_opts o = { .argv = argv, .timeout_s = 10 };
    proc_result r;
    proc_result_init(&r);
    assert_int_equal(proc_run(&o, &r), 0);
    assert_int_equal(r.exit_code, 0);
    assert_int_equal(r.out.len, want.len);
    assert_memory_equal(r.out.buf, want.buf, want.len);
    proc_result_release(&r);
    strbuf_release(&cmd);
    strbuf_release(&want);
}

/* ---------------------------------------------------------------- #SBATCH lines */

/* sbatch's own reading of an #SBATCH value (Slurm 22.05 src/sbatch/opt.c, _get_argument):
 * quotes group, a backslash escapes the next character anywhere, and an unquoted '#'
 * ends the line. */
static char *sbatch_reads(const char *line, const char *name)
{
    char *prefix = xasprintf("#SBATCH --%s=", name);
    assert_true(str_starts_with(line, prefix));
    const char *p = line + strlen(prefix);
    free(prefix);
    strbuf v = STRBUF_INIT;
    bool quoted = false, escaped = false;
    char q = 0;
    for (; *p && *p != '\n' && (quoted || (*p != ' ' && *p != '\t')); p++) {
        if (escaped) {
            escaped = false;
        } else if (*p == '\\') {
            escaped = true;
            continue;
        } else if (quoted) {
            if (*p == q) {
                quoted = false;
                continue;
            }
        } else if (*p == '"' || *p == '\'') {
            quoted = true;
            q = *p;
            continue;
        } else if (*p == '#') {
            break;
        }
        strbuf_addc(&v, *p);
    }
    assert_false(quoted);
    assert_true(*p == '\0' || *p == '\n');
    return strbuf_detach(&v);
}

static void test_array_and_requeue(void **state)
{
    (void)state;
    slurm_job j = std_job();
    char *s = script_of(&j);
    assert_true(str_starts_with(s, "#!/bin/sh\n#SBATCH --job-name=cutegen-bench\n#SBATCH --array=0-2\n"
                                   "#SBATCH --requeue\n#SBATCH --open-mode=append\n"));
    /* no command before the last #SBATCH line: sbatch stops reading them at the first */
    const char *last = strstr(s, "#SBATCH --cpus-per-task=8\n");
    assert_non_null(last);
    for (const char *p = s; p < last; p = strchr(p, '\n') + 1)
        assert_int_equal(*p, '#');
    free(s);

    j.shards = 1;
    s = script_of(&j);
    assert_non_null(strstr(s, "#SBATCH --array=0-0\n"));
    free(s);
    j.shards = 1000;
    s = script_of(&j);
    assert_non_null(strstr(s, "#SBATCH --array=0-999\n"));
    assert_non_null(strstr(s, "--shard \"$task/1000\""));
    free(s);
}

static void test_gres_and_optional_lines(void **state)
{
    (void)state;
    slurm_job j = std_job();
    char *s = script_of(&j);
    assert_non_null(strstr(s, "\n#SBATCH --gres=gpu:1\n"));
    assert_null(strstr(s, "--partition"));
    assert_null(strstr(s, "--time"));
    assert_null(strstr(s, "--chdir"));
    free(s);

    j.gpus_per_task = 0;
    j.cpus_per_task = 0;
    s = script_of(&j);
    assert_null(strstr(s, "gres"));
    assert_null(strstr(s, "gpu:"));
    assert_null(strstr(s, "cpus-per-task"));
    free(s);

    j.gpus_per_task = 8;
    j.partition = "gpu-h200";
    j.time_limit = "04:00:00";
    j.job_name = "sweep l1";
    j.workdir = "/home/u/work";
    s = script_of(&j);
    assert_non_null(strstr(s, "\n#SBATCH --gres=gpu:8\n"));
    assert_non_null(strstr(s, "\n#SBATCH --partition=gpu-h200\n"));
    assert_non_null(strstr(s, "\n#SBATCH --time=04:00:00\n"));
    assert_non_null(strstr(s, "\n#SBATCH --chdir=/home/u/work\n"));
    char *name = line_of(s, "#SBATCH --job-name=");
    char *v = sbatch_reads(name, "job-name");
    assert_string_equal(v, "sweep l1");
    free(v);
    free(name);
    free(s);

    const char *times[] = { "30", "10:00", "1-00", "1-12:00", "2-00:00:00", "100:00:00" };
    for (size_t i = 0; i < sizeof times / sizeof times[0]; i++) {
        j.time_limit = times[i];
        s = script_of(&j);
        free(s);
    }
}

static void test_output_paths(void **state)
{
    (void)state;
    slurm_job j = std_job();
    char *s = script_of(&j);
    assert_non_null(strstr(s, "\n#SBATCH --output=/runs/sweep/slurm/%A_%a.out\n"));
    assert_non_null(strstr(s, "\nrun_dir=/runs/sweep\n"));
    assert_non_null(strstr(s, "--run-dir \"$run_dir/shard-$task\"\n"));
    assert_non_null(strstr(s, "sbatch /runs/sweep/slurm/bench.sbatch\n"));
    assert_non_null(strstr(s, "cutegen report --merge '/runs/sweep/shard-*'\n"));
    free(s);
    char *p = slurm_script_path("/runs/sweep");
    assert_string_equal(p, "/runs/sweep/slurm/bench.sbatch");
    free(p);

    /* A directory with a space, quotes, a hash and a percent sign: sbatch must read back
     * the directory with its own % doubled, and %A/%a left for Slurm. */
    j.run_dir = "/runs/my \"best\" #1 it's 100%";
    j.workdir = "/home/u/a \"b\"";
    s = script_of(&j);
    char *out = line_of(s, "#SBATCH --output=");
    assert_non_null(out);
    char *v = sbatch_reads(out, "output");
    assert_string_equal(v, "/runs/my \"best\" #1 it's 100%%/slurm/%A_%a.out");
    free(v);
    free(out);
    char *chdir_line = line_of(s, "#SBATCH --chdir=");
    v = sbatch_reads(chdir_line, "chdir");
    assert_string_equal(v, "/home/u/a \"b\"");
    free(v);
    free(chdir_line);
    assert_non_null(strstr(s, "\nrun_dir='/runs/my \"best\" #1 it'\\''s 100%'\n"));
    free(s);
}

/* The script itself, run by sh as Slurm would run array task 1, with a stand-in cutegen
 * that prints its arguments: every argument arrives intact, --shard and --run-dir last. */
static void test_task_command(void **state)
{
    (void)state;
    char *fake = xasprintf("%s/fake cutegen", tmpdir);
    char *args_file = xasprintf("%s/args", tmpdir);
    char *fake_text = xasprintf("#!/bin/sh\nprintf '%%s\\n' \"$@\" > '%s'\n", args_file);
    write_exec(fake, fake_text);
    const char *bench_args[] = { "--kernelbench", "/data/Kernel Bench", "--level", "1,2", "--command",
                                 "python3 -c 'print(\"$HOME\")'", "--problems", "1-20,23", NULL };
    char *run_dir = xasprintf("%s/run it's", tmpdir);
    slurm_job j = { .run_dir = run_dir, .shards = 3, .cutegen = fake, .bench_argv = bench_args };
    strbuf script = STRBUF_INIT, err = STRBUF_INIT;
    assert_int_equal(slurm_script(&j, &script, &err), 0);

    const char *argv[] = { "sh", "-c", script.buf, NULL };
    const char *env[] = { "SLURM_ARRAY_TASK_ID=1", "SLURM_ARRAY_JOB_ID=77", NULL };
    proc_opts o = { .argv = argv, .env_add = env, .timeout_s = 10 };
    proc_result r;
    proc_result_init(&r);
    assert_int_equal(proc_run(&o, &r), 0);
    assert_int_equal(r.exit_code, 0);
    assert_non_null(strstr(r.out.buf, "shard 1 of 3"));
    assert_non_null(strstr(r.out.buf, "job 77_1"));
    strbuf got = STRBUF_INIT;
    assert_int_equal(read_file(args_file, &got, 1 << 16), 0);
    char *want = xasprintf("bench\n--kernelbench\n/data/Kernel Bench\n--level\n1,2\n--command\n"
                           "python3 -c 'print(\"$HOME\")'\n--problems\n1-20,23\n--shard\n1/3\n"
                           "--run-dir\n%s/shard-1\n", run_dir);
    assert_string_equal(got.buf, want);
    free(want);
    proc_result_release(&r);

    /* Outside Slurm the script says what it is and runs nothing. */
    unlink(args_file);
    const char *env_none[] = { "SLURM_ARRAY_TASK_ID=", NULL };
    o.env_add = env_none;
    proc_result_init(&r);
    assert_int_equal(proc_run(&o, &r), 0);
    assert_int_not_equal(r.exit_code, 0);
    assert_non_null(strstr(r.err.buf, "submit it with sbatch"));
    assert_false(file_exists(args_file));
    proc_result_release(&r);

    strbuf_release(&got);
    strbuf_release(&script);
    strbuf_release(&err);
    free(run_dir);
    free(fake_text);
    free(args_file);
    free(fake);
}

static void test_refusals(void **state)
{
    (void)state;
    struct { slurm_job j; const char *says; } cases[] = {
        { { .run_dir = "runs/x", .shards = 2, .cutegen = "/bin/cutegen" }, "absolute path" },
        { { .run_dir = "/runs/x", .shards = 2, .cutegen = "build/cutegen" }, "absolute path" },
        { { .run_dir = "/runs/x", .shards = 2, .cutegen = "/c", .workdir = "." }, "absolute path" },
        { { .run_dir = "/runs/x", .shards = 0, .cutegen = "/c" }, "at least one shard" },
        { { .run_dir = "/runs/x", .shards = 2, .gpus_per_task = -1, .cutegen = "/c" }, "negative" },
        { { .run_dir = "/runs/a\nb", .shards = 2, .cutegen = "/c" }, "line break" },
        { { .run_dir = "/runs/x", .shards = 2, .cutegen = "/c", .partition = "gpu\n#SBATCH --x" }, "line break" },
        { { .run_dir = "/runs/x", .shards = 2, .cutegen = "/c", .partition = "" }, "empty" },
        { { .run_dir = "/runs/a\\b", .shards = 2, .cutegen = "/c" }, "backslash" },
        { { .run_dir = "/runs/x", .shards = 2, .cutegen = "/c", .time_limit = "4h" }, "HH:MM:SS" },
        { { .run_dir = "/runs/x", .shards = 2, .cutegen = "/c", .time_limit = "1:2:3:4" }, "HH:MM:SS" },
        { { .run_dir = "/runs/x", .shards = 2, .cutegen = "/c", .time_limit = "1-2-3" }, "HH:MM:SS" },
        { { .run_dir = "/runs/x", .shards = 2, .cutegen = "/c", .time_limit = ":30" }, "HH:MM:SS" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *e = refusal_of(&cases[i].j);
        if (!strstr(e, cases[i].says))
            fail_msg("case %zu: '%s' does not say '%s'", i, e, cases[i].says);
        free(e);
    }
    const char *bad[][3] = { { "--level", "1", "--shard" }, { "--shard=0/2", NULL, NULL },
                             { "--run-dir=/x", NULL, NULL }, { "--shards", "4", NULL },
                             { "--slurm", NULL, NULL }, { "--slurm-partition=gpu", NULL, NULL } };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *args[4] = { bad[i][0], bad[i][1], bad[i][2], NULL };
        slurm_job j = std_job();
        j.bench_argv = args;
        char *e = refusal_of(&j);
        assert_true(strstr(e, "bench's arguments") != NULL);
        free(e);
    }
    /* an option's value that merely starts alike is fine */
    const char *ok_args[] = { "--shard-note", "--run-directory", NULL };
    slurm_job j = std_job();
    j.bench_argv = ok_args;
    free(script_of(&j));
}

static void test_write_script(void **state)
{
    (void)state;
    char *run_dir = xasprintf("%s/sweep dir", tmpdir);
    slurm_job j = std_job();
    j.run_dir = run_dir;
    char *path = NULL;
    strbuf err = STRBUF_INIT, text = STRBUF_INIT;
    assert_int_equal(slurm_write_script(&j, &path, &err), 0);
    char *want = xasprintf("%s/slurm/bench.sbatch", run_dir);
    assert_string_equal(path, want);
    assert_int_equal(read_file(path, &text, 1 << 20), 0);
    assert_true(str_starts_with(text.buf, "#!/bin/sh\n#SBATCH"));
    char *slurm_dir = xasprintf("%s/slurm", run_dir);
    assert_true(dir_exists(slurm_dir));
    free(slurm_dir);
    free(want);
    free(path);

    /* a directory that cannot be made */
    char *blocker = xasprintf("%s/file", tmpdir);
    write_exec(blocker, "x");
    j.run_dir = blocker;
    strbuf_reset(&err);
    assert_int_equal(slurm_write_script(&j, &path, &err), -1);
    assert_null(path);
    assert_non_null(strstr(err.buf, "unable to create"));
    free(blocker);
    strbuf_release(&err);
    strbuf_release(&text);
    free(run_dir);
}

/* ---------------------------------------------------------------- submission */

static enum slurm_submit_result submit_with(const char *fake_text, strbuf *id, strbuf *err)
{
    char *fake = xasprintf("%s/sbatch", tmpdir);
    write_exec(fake, fake_text);
    enum slurm_submit_result res = slurm_submit("/runs/x/slurm/bench.sbatch", fake, id, err);
    free(fake);
    return res;
}

static void test_submit(void **state)
{
    (void)state;
    strbuf id = STRBUF_INIT, err = STRBUF_INIT;
    char *argv_file = xasprintf("%s/sbatch-args", tmpdir);
    char *text = xasprintf("#!/bin/sh\nprintf '%%s\\n' \"$@\" > '%s'\n"
                           "echo 'sbatch: warning: something' >&2\necho '4242;cluster-a'\n", argv_file);
    assert_int_equal(submit_with(text, &id, &err), SLURM_SUBMITTED);
    assert_string_equal(id.buf, "4242");
    strbuf args = STRBUF_INIT;
    assert_int_equal(read_file(argv_file, &args, 4096), 0);
    assert_string_equal(args.buf, "--parsable\n/runs/x/slurm/bench.sbatch\n");
    strbuf_release(&args);
    free(text);
    free(argv_file);

    strbuf_reset(&id);
    assert_int_equal(submit_with("#!/bin/sh\necho 17\n", &id, &err), SLURM_SUBMITTED);
    assert_string_equal(id.buf, "17");

    struct { const char *fake, *says; } refused[] = {
        { "#!/bin/sh\necho 'sbatch: error: invalid partition specified: nope' >&2\nexit 1\n", "--slurm-partition" },
        { "#!/bin/sh\necho 'sbatch: error: Invalid generic resource (gres) specification' >&2\nexit 1\n", "--slurm-gpus-per-task" },
        { "#!/bin/sh\necho 'sbatch: error: Requested time limit is invalid (missing or exceeds some limit)' >&2\nexit 1\n", "--slurm-time" },
        { "#!/bin/sh\necho 'sbatch: error: Batch job submission failed: Invalid job array specification' >&2\nexit 1\n", "--shards" },
        { "#!/bin/sh\necho 'sbatch: error: Batch job submission failed: Unable to contact slurm controller (connect failure)' >&2\nexit 1\n", "login node" },
        { "#!/bin/sh\nexit 3\n", "exit code 3" },
        { "#!/bin/sh\necho 'Submitted batch job 12'\n", "where a job id was expected" },
        { "#!/bin/sh\necho ''\n", "where a job id was expected" },
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        strbuf_reset(&id);
        strbuf_reset(&err);
        assert_int_equal(submit_with(refused[i].fake, &id, &err), SLURM_REFUSED);
        if (!strstr(err.buf, refused[i].says))
            fail_msg("case %zu: '%s' does not say '%s'", i, err.buf, refused[i].says);
        assert_int_equal(id.len, 0);
    }
    /* sbatch's own words are kept, and where the script is */
    assert_int_equal(submit_with(refused[0].fake, &id, &err), SLURM_REFUSED);
    assert_non_null(strstr(err.buf, "invalid partition specified: nope"));
    assert_non_null(strstr(err.buf, "sbatch /runs/x/slurm/bench.sbatch"));

    strbuf_reset(&err);
    assert_int_equal(slurm_submit("/runs/x/slurm/bench.sbatch", "/nonexistent/sbatch", &id, &err), SLURM_NO_SBATCH);
    assert_non_null(strstr(err.buf, "login node"));
    assert_non_null(strstr(err.buf, "--slurm-script-only"));
    strbuf_reset(&err);
    assert_int_equal(slurm_submit("/s", "cg-no-such-sbatch-here", &id, &err), SLURM_NO_SBATCH);
    assert_non_null(strstr(err.buf, "'cg-no-such-sbatch-here' is not installed"));
    strbuf_release(&id);
    strbuf_release(&err);
}

static int setup(void **state)
{
    (void)state;
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char *cmd[] = { "rm", "-rf", tmpdir, NULL };
    proc_opts o = { .argv = (const char *const *)cmd, .timeout_s = 30 };
    proc_result r;
    proc_result_init(&r);
    proc_run(&o, &r);
    proc_result_release(&r);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quote_words),
        cmocka_unit_test(test_quote_through_sh),
        cmocka_unit_test(test_array_and_requeue),
        cmocka_unit_test(test_gres_and_optional_lines),
        cmocka_unit_test(test_output_paths),
        cmocka_unit_test(test_task_command),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_write_script),
        cmocka_unit_test(test_submit),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
