/* Unit tests for proc: exit codes, capture, caps, time limits, process groups, lines. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc.h"
#include "util.h"

static void test_exit_code_and_capture(void **state)
{
    (void)state;
    const char *argv[] = { "sh", "-c", "echo out; echo err >&2; exit 3", NULL };
    proc_opts o = { .argv = argv, .timeout_s = 10 };
    proc_result r;
    proc_result_init(&r);
    assert_int_equal(proc_run(&o, &r), 0);
    assert_int_equal(r.exit_code, 3);
    assert_string_equal(r.out.buf, "out\n");
    assert_string_equal(r.err.buf, "err\n");
    assert_false(r.timed_out);
    proc_result_release(&r);
}

static void test_stdin_roundtrip(void **state)
{
    (void)state;
    /* more than a pipe buffer each way, to catch a deadlock */
    size_t n = 1 << 20;
    char *data = xmalloc(n);
    memset(data, 'x', n);
    const char *argv[] = { "cat", NULL };
    proc_opts o = { .argv = argv, .stdin_data = data, .stdin_len = n, .timeout_s = 20 };
    proc_result r;
    proc_result_init(&r);
    assert_int_equal(proc_run(&o, &r), 0);
    assert_int_equal(r.exit_code, 0);
    assert_int_equal(r.out.len, n);
    proc_result_release(&r);
    free(data);
}

static void test_output_cap(void **state)
{
    (void)state;
    const char *argv[] = { "sh", "-c", "head -c 100000 /dev/zero", NULL };
    proc_opts o = { .argv = argv, .timeout_s = 10, .max_output = 1000 };
    proc_result r;
    proc_result_init(&r);
    assert_int_equal(proc_run(&o, &r), 0);
    assert_int_equal(r.out.len, 1000);
    assert_true(r.truncated);
    proc_result_release(&r);
}

/* Gone, or a zombie waiting for init to reap it. */
static bool process_gone(pid_t pid)
{
    if (kill(pid, 0) < 0)
        return true;
    char *path = xasprintf("/proc/%d/stat", (int)pid);
    strbuf st = STRBUF_INIT;
    bool zombie = read_file(path, &st, 4096) == 0 && strstr(st.buf, ") Z ") != NULL;
    strbuf_release(&st);
    free(path);
    return zombie;
}

static void test_timeout_kills_group(void **state)
{
    (void)state;
    /* the grandchild writes its pid, then both sleep; both must die */
    char tmpl[] = "/tmp/cg-proc-XXXXXX";
    int fd = mkstemp(tmpl);
    close(fd);
    char *script = xasprintf("sleep 100 & echo $! > %s; sleep 100", tmpl);
    const char *argv[] = { "sh", "-c", script, NULL };
    proc_opts o = { .argv = argv, .timeout_s = 0.5 };
    proc_result r;
    proc_result_init(&r);
    double t0 = now_seconds();
    assert_int_equal(proc_run(&o, &r), 0);
    assert_true(r.timed_out);
    assert_true(now_seconds() - t0 < 5);
    strbuf pid = STRBUF_INIT;
    assert_int_equal(read_file(tmpl, &pid, 100), 0);
    usleep(100000);
    pid_t gc = (pid_t)atoi(pid.buf);
    assert_true(gc > 0);
    assert_true(process_gone(gc));
    strbuf_release(&pid);
    unlink(tmpl);
    free(script);
    proc_result_release(&r);
}

static void test_missing_program(void **state)
{
    (void)state;
    const char *argv[] = { "/nonexistent/cutegen-no-such-tool", NULL };
    proc_opts o = { .argv = argv, .timeout_s = 5 };
    proc_result r;
    proc_result_init(&r);
    assert_int_equal(proc_run(&o, &r), -1);
    assert_non_null(strstr(r.err.buf, "cannot run"));
    proc_result_release(&r);
}

static void test_child_lines_and_timeout(void **state)
{
    (void)state;
    const char *argv[] = { "sh", "-c", "while read l; do echo \"got $l\"; done", NULL };
    proc_child c;
    strbuf err = STRBUF_INIT, line = STRBUF_INIT;
    assert_int_equal(proc_spawn(&c, argv, NULL, NULL, &err), 0);
    assert_int_equal(proc_send(&c, "a\nb\n", 4), 0);
    assert_int_equal(proc_read_line(&c, &line, 5, 1000), 0);
    assert_string_equal(line.buf, "got a");
    assert_int_equal(proc_read_line(&c, &line, 5, 1000), 0);
    assert_string_equal(line.buf, "got b");
    assert_int_equal(proc_read_line(&c, &line, 0.2, 1000), -2); /* nothing more: time-out */
    int status = proc_finish(&c, 2);
    strbuf desc = STRBUF_INIT;
    proc_describe_status(status, &desc);
    assert_string_equal(desc.buf, "exit code 0");
    strbuf_release(&desc);
    strbuf_release(&err);
    strbuf_release(&line);
}

static void test_child_crash_is_eof(void **state)
{
    (void)state;
    const char *argv[] = { "sh", "-c", "kill -SEGV $$", NULL };
    proc_child c;
    strbuf err = STRBUF_INIT, line = STRBUF_INIT;
    assert_int_equal(proc_spawn(&c, argv, NULL, NULL, &err), 0);
    assert_int_equal(proc_read_line(&c, &line, 5, 1000), -1);
    int status = proc_finish(&c, 2);
    strbuf desc = STRBUF_INIT;
    proc_describe_status(status, &desc);
    assert_non_null(strstr(desc.buf, "signal 11"));
    strbuf_release(&desc);
    strbuf_release(&err);
    strbuf_release(&line);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exit_code_and_capture),
        cmocka_unit_test(test_stdin_roundtrip),
        cmocka_unit_test(test_output_cap),
        cmocka_unit_test(test_timeout_kills_group),
        cmocka_unit_test(test_missing_program),
        cmocka_unit_test(test_child_lines_and_timeout),
        cmocka_unit_test(test_child_crash_is_eof),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
