/* Unit tests for compile_digest: real nvcc 13.0 logs of broken kernels
 * (tests/data/compile/<name>.log, from the <name>.cu beside it) must digest into short
 * text that names the candidate line, quotes it, and drops repeats and template noise. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "compile_digest.h"
#include "util.h"

/* Digests fixture <name> with the given cap into out. */
static void digest_fixture(const char *name, size_t cap, strbuf *out)
{
    strbuf log = STRBUF_INIT, src = STRBUF_INIT;
    char *lp = xasprintf("%s/tests/data/compile/%s.log", cg_source_dir(), name);
    char *sp = xasprintf("%s/tests/data/compile/%s.cu", cg_source_dir(), name);
    assert_int_equal(read_file(lp, &log, 1 << 22), 0);
    assert_int_equal(read_file(sp, &src, 1 << 22), 0);
    char *cand = xasprintf("%s.cu", name);
    compile_digest_opts o = { .candidate = cand, .source = src.buf, .max_chars = cap };
    compile_digest(log.buf, &o, out);
    free(cand);
    free(lp);
    free(sp);
    strbuf_release(&log);
    strbuf_release(&src);
}

static void test_edg_errors_in_candidate(void **state)
{
    (void)state;
    strbuf d = STRBUF_INIT;
    digest_fixture("undefined_ident", 0, &d);
    assert_non_null(strstr(d.buf, "2 errors (2 distinct)"));
    assert_non_null(strstr(d.buf, "error: undefined_ident.cu:9: identifier \"zero\" is undefined"));
    assert_non_null(strstr(d.buf, "    9 | y[i] = fmaxf(x[i], zero);"));
    assert_non_null(strstr(d.buf, "undefined_ident.cu:16: too many arguments in function call"));
    assert_null(strstr(d.buf, "detected in the compilation"));
    strbuf_release(&d);
}

static void test_cute_header_error_mapped_to_candidate(void **state)
{
    (void)state;
    strbuf d = STRBUF_INIT;
    digest_fixture("cute_template", 0, &d);
    /* the log is 23 kB of instantiation notes; the digest is short and points at line 12 */
    assert_true(d.len <= 2000);
    assert_non_null(strstr(d.buf, "9 errors (6 distinct)"));
    assert_non_null(strstr(d.buf, "error: cute_template.cu:12: static assertion failed with \"Mismatched Ranks\""));
    assert_non_null(strstr(d.buf, "(inside cute/stride.hpp:108"));
    assert_non_null(strstr(d.buf, "12 | gy(0, 0) = gx(threadIdx.x, 0, 1) + part(0);"));
    assert_null(strstr(d.buf, "instantiation of"));
    assert_null(strstr(d.buf, "site-packages"));
    assert_null(strstr(d.buf, "also at line 17")); /* an outer instantiation is not a new site */
    /* "Mismatched Ranks" is reported twice (stride.hpp lines 108 and 109): shown once */
    char *first = strstr(d.buf, "Mismatched Ranks");
    assert_null(strstr(first + 1, "Mismatched Ranks"));
    assert_non_null(strstr(d.buf, "1 more distinct error not shown"));
    strbuf_release(&d);
}

static void test_cap_counts_dropped(void **state)
{
    (void)state;
    strbuf d = STRBUF_INIT;
    digest_fixture("cute_template", 600, &d);
    assert_true(d.len <= 600);
    assert_non_null(strstr(d.buf, "Mismatched Ranks"));
    assert_non_null(strstr(d.buf, "more distinct errors not shown"));
    strbuf_release(&d);
}

static void test_wrong_signature(void **state)
{
    (void)state;
    strbuf d = STRBUF_INIT;
    digest_fixture("wrong_signature", 0, &d);
    assert_non_null(strstr(d.buf, "wrong_signature.cu:4: more than one instance of overloaded function \"cg_forward\""));
    assert_non_null(strstr(d.buf, "cutegen/abi.h declares"));
    strbuf_release(&d);
}

static void test_host_gcc_error(void **state)
{
    (void)state;
    strbuf d = STRBUF_INIT;
    digest_fixture("host_preprocess", 0, &d);
    assert_non_null(strstr(d.buf, "error: host_preprocess.cu:4: no_such_header_for_host.h: No such file"));
    assert_non_null(strstr(d.buf, "4 | #include <no_such_header_for_host.h>"));
    assert_null(strstr(d.buf, "compilation terminated"));
    strbuf_release(&d);
}

static void test_ptxas_error(void **state)
{
    (void)state;
    strbuf d = STRBUF_INIT;
    digest_fixture("ptxas_smem", 0, &d);
    assert_non_null(strstr(d.buf, "error (ptxas): ptxas_smem.cu:3: Entry function '_Z1kPf' uses too much shared data"));
    assert_non_null(strstr(d.buf, "3 | __global__ void k(float *y)"));
    strbuf_release(&d);
}

static void test_link_error(void **state)
{
    (void)state;
    strbuf d = STRBUF_INIT;
    digest_fixture("link_undefined", 0, &d);
    assert_non_null(strstr(d.buf, "2 errors (1 distinct)"));
    assert_non_null(strstr(d.buf, "error (link): link_undefined.cu:3: undefined reference to "
                                  "'helper_that_does_not_exist' (called from cg_forward)"));
    assert_null(strstr(d.buf, "collect2"));
    assert_null(strstr(d.buf, "tmpxft"));
    strbuf_release(&d);
}

static void test_unrecognised_log_keeps_tail(void **state)
{
    (void)state;
    strbuf d = STRBUF_INIT;
    compile_digest_opts o = { .candidate = "k.cu" };
    compile_digest("line one\nnvcc died mysteriously: signal 9\n", &o, &d);
    assert_non_null(strstr(d.buf, "the compiler failed; the end of its output:"));
    assert_non_null(strstr(d.buf, "signal 9"));
    strbuf_reset(&d);
    compile_digest("", &o, &d);
    assert_non_null(strstr(d.buf, "without a message"));
    strbuf_release(&d);
}

static void test_gcc_required_from_maps_line(void **state)
{
    (void)state;
    const char *log =
        "/x/include/cute/foo.hpp: In instantiation of 'void f(T) [with T = int]':\n"
        "k.cu:7:6:   required from here\n"
        "/x/include/cute/foo.hpp:20:3: error: 'bar' was not declared in this scope\n";
    const char *src = "1\n2\n3\n4\n5\n6\n  f(3);\n";
    strbuf d = STRBUF_INIT;
    compile_digest_opts o = { .candidate = "k.cu", .source = src };
    compile_digest(log, &o, &d);
    assert_non_null(strstr(d.buf, "error: k.cu:7: 'bar' was not declared in this scope"));
    assert_non_null(strstr(d.buf, "(inside cute/foo.hpp:20"));
    assert_non_null(strstr(d.buf, "7 | f(3);"));
    strbuf_release(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_edg_errors_in_candidate),
        cmocka_unit_test(test_cute_header_error_mapped_to_candidate),
        cmocka_unit_test(test_cap_counts_dropped),
        cmocka_unit_test(test_wrong_signature),
        cmocka_unit_test(test_host_gcc_error),
        cmocka_unit_test(test_ptxas_error),
        cmocka_unit_test(test_link_error),
        cmocka_unit_test(test_unrecognised_log_keeps_tail),
        cmocka_unit_test(test_gcc_required_from_maps_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
