/* Unit tests for the final timing's orchestration (eval_session_final), with the
 * stand-in worker and reference process of tests/cli/fake/ (no GPU, no torch, no nvcc):
 * the reference process is retired after every final timing and a new one is started
 * when the session next needs it, also after a kernel crashed the old one; each way
 * the final timing can go ends in the right verdict, or an error code. The "kernels"
 * are files named .so holding the CG_FAKE_MODE marker the stand-in judges by. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval.h"
#include "util.h"

static char *tmp_dir;
static char *worker, *python, *task;

static int setup(void **state)
{
    (void)state;
    char tmpl[] = "/tmp/cutegen-test-final.XXXXXX";
    assert_non_null(mkdtemp(tmpl));
    tmp_dir = xstrdup(tmpl);
    char *cache = xasprintf("%s/cache", tmp_dir);
    setenv("CUTEGEN_CACHE_DIR", cache, 1);
    free(cache);
    worker = xasprintf("%s/tests/cli/fake/worker.py", cg_source_dir());
    python = xasprintf("%s/tests/cli/fake/python.py", cg_source_dir());
    task = xasprintf("%s/examples/problems/relu_small.py", cg_source_dir());
    unsetenv("FAKE_STATE_DIR");
    unsetenv("FAKE_FINAL_MODE");
    unsetenv("FAKE_REF_MODE");
    cg_quiet = true;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char *cmd = xasprintf("rm -rf '%s'", tmp_dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", tmp_dir);
    free(cmd);
    free(tmp_dir);
    free(worker);
    free(python);
    free(task);
    return 0;
}

/* A stand-in kernel object: a file the stand-in reference reads the marker from. */
static char *fake_so(const char *name, const char *mode)
{
    char *path = xasprintf("%s/%s.so", tmp_dir, name);
    char *text = xasprintf("\x7f" "ELF... CG_FAKE_MODE=%s ...", mode);
    assert_int_equal(write_file_atomic(path, text, strlen(text)), 0);
    free(text);
    return path;
}

/* How many reference processes the session has started (each logs one line). */
static int starts(eval_session *s)
{
    char *log = xasprintf("%s/reference.log", eval_session_dir(s));
    strbuf text = STRBUF_INIT;
    int n = 0;
    if (read_file(log, &text, 1u << 20) == 0)
        for (const char *p = text.buf; (p = strstr(p, "fake reference started")) != NULL; p++)
            n++;
    strbuf_release(&text);
    free(log);
    return n;
}

static eval_session *open_session(eval_opts *o)
{
    eval_opts_init(o);
    o->task_path = task;
    o->worker = worker;
    o->python = python;
    o->ref_timeout_s = 20;
    o->work_dir = tmp_dir;
    eval_session *s = NULL;
    strbuf err = STRBUF_INIT;
    int rc = eval_session_open(o, &s, &err);
    if (rc)
        fprintf(stderr, "session: %s\n", err.buf);
    assert_int_equal(rc, 0);
    strbuf_release(&err);
    return s;
}

static const char *verdict(json_t *r)
{
    return json_string_value(json_object_get(r, "verdict"));
}

static void test_ok_then_restart(void **state)
{
    (void)state;
    eval_opts o;
    eval_session *s = open_session(&o);
    strbuf err = STRBUF_INIT;
    assert_non_null(eval_session_spec(s, &err));
    assert_int_equal(starts(s), 1);

    char *so = fake_so("fast", "ok:1.25");
    eval_final_opts f;
    eval_final_opts_init(&f);
    f.rounds = 3;
    f.iters = 4;
    json_t *r = NULL;
    assert_int_equal(eval_session_final(s, so, &f, &r, &err), 0);
    assert_string_equal(verdict(r), "ok");
    assert_string_equal(json_string_value(json_object_get(r, "timing")), "interleaved");
    json_t *kt = json_object_get(r, "kernel_time");
    assert_true(fabs(json_number_value(json_object_get(kt, "median_ms")) - 1.25) < 1e-9);
    assert_int_equal(json_integer_value(json_object_get(kt, "n")), 12);
    json_t *sp = json_object_get(r, "speedup");
    assert_true(fabs(json_number_value(json_object_get(sp, "eager")) - 1.6) < 1e-9);
    assert_true(fabs(json_number_value(json_object_get(sp, "compile")) - 1.2) < 1e-9);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(r, "interleaved"),
                                                        "rounds")), 3);
    strbuf line = STRBUF_INIT;
    eval_final_describe(r, &line);
    assert_string_equal(line.buf, "1.2500 ms vs eager 2.0000 ms = 1.60x, vs compile 1.5000 ms "
                                  "= 1.20x (interleaved in one process, 3 rounds)");
    strbuf_release(&line);
    char *fj = xasprintf("%s/final.json", tmp_dir);
    assert_true(file_exists(fj));
    free(fj);
    json_decref(r);
    /* retired after the final timing; nothing is started until something needs it */
    assert_int_equal(starts(s), 1);
    strbuf_reset(&err);
    assert_non_null(eval_session_spec(s, &err));
    assert_int_equal(starts(s), 2);

    strbuf_release(&err);
    free(so);
    eval_session_close(s);
}

static void test_crash_then_ok(void **state)
{
    (void)state;
    eval_opts o;
    eval_session *s = open_session(&o);
    char *bad = fake_so("crash", "crash");
    char *good = fake_so("good", "ok:0.5");
    json_t *r = NULL;
    strbuf err = STRBUF_INIT;
    /* the kernel kills the process it runs in: a verdict, not a harness failure */
    assert_int_equal(eval_session_final(s, bad, NULL, &r, &err), 0);
    assert_string_equal(verdict(r), "runtime_error");
    assert_non_null(strstr(json_string_value(json_object_get(r, "message")), "signal 11"));
    assert_null(json_object_get(r, "kernel_time"));
    json_decref(r);
    int before = starts(s);
    /* the next final timing gets a new reference process, and works */
    assert_int_equal(eval_session_final(s, good, NULL, &r, &err), 0);
    assert_string_equal(verdict(r), "ok");
    assert_true(fabs(json_number_value(json_object_get(json_object_get(r, "speedup"), "eager")) -
                     4.0) < 1e-9);
    assert_int_equal(starts(s), before + 1);
    json_decref(r);

    setenv("FAKE_FINAL_MODE", "cuda_error", 1);
    assert_int_equal(eval_session_final(s, good, NULL, &r, &err), 0);
    assert_string_equal(verdict(r), "runtime_error");
    assert_non_null(strstr(json_string_value(json_object_get(r, "message")), "illegal memory"));
    json_decref(r);
    setenv("FAKE_FINAL_MODE", "wrong", 1);
    assert_int_equal(eval_session_final(s, good, NULL, &r, &err), 0);
    assert_string_equal(verdict(r), "wrong_result");
    assert_null(json_object_get(r, "speedup"));
    json_decref(r);
    setenv("FAKE_FINAL_MODE", "modified", 1);
    assert_int_equal(eval_session_final(s, good, NULL, &r, &err), 0);
    assert_string_equal(verdict(r), "rejected");
    json_decref(r);
    setenv("FAKE_FINAL_MODE", "load_error", 1);
    assert_int_equal(eval_session_final(s, good, NULL, &r, &err), EXIT_NO_TOOL);
    assert_non_null(strstr(err.buf, "libcudart.so.13"));
    json_decref(r);
    unsetenv("FAKE_FINAL_MODE");
    strbuf_reset(&err);
    char *missing = xasprintf("%s/none.so", tmp_dir);
    assert_int_equal(eval_session_final(s, missing, NULL, &r, &err), EXIT_BAD_KERNEL);
    json_decref(r);
    /* after all that, the session still serves */
    assert_int_equal(eval_session_final(s, good, NULL, &r, &err), 0);
    assert_string_equal(verdict(r), "ok");
    json_decref(r);
    free(missing);
    free(bad);
    free(good);
    strbuf_release(&err);
    eval_session_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ok_then_restart),
        cmocka_unit_test(test_crash_then_ok),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
