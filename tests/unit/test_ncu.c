/* Unit tests for ncu: command lines, failure classification, ncu_run() against a fake
 * ncu, unit normalisation and the raw CSV parser on the project's own fixtures
 * (tests/data/profile). The H200 capture is tested in test_ncu_h200.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ncu.h"
#include "util.h"

static const char *src_dir(void)
{
    const char *s = getenv("CUTEGEN_SOURCE_DIR");
    return s ? s : CUTEGEN_SOURCE_DIR;
}

static char *load(const char *rel, bool shared)
{
    char *path = xasprintf("%s/%s%s", src_dir(), shared ? "../shared/fixtures/ncu/" :
                                                           "tests/data/profile/", rel);
    strbuf sb = STRBUF_INIT;
    strbuf_init(&sb);
    if (read_file(path, &sb, 64 << 20) != 0) {
        free(path);
        strbuf_release(&sb);
        return NULL;
    }
    free(path);
    return strbuf_detach(&sb);
}

static bool has_arg(char **argv, const char *a, const char *next)
{
    for (size_t i = 0; argv[i]; i++)
        if (!strcmp(argv[i], a) && (!next || (argv[i + 1] && !strcmp(argv[i + 1], next))))
            return true;
    return false;
}

/* ---------------------------------------------------------------- command lines */

static void test_profile_argv(void **state)
{
    (void)state;
    const char *target[] = { "/bin/worker", "--profile", NULL };
    ncu_opts o = { 0 };
    o.target_argv = target;
    o.report_base = "/tmp/x/prof";
    o.source_counters = true;
    char **argv = ncu_profile_argv(&o, "/opt/ncu");
    assert_string_equal(argv[0], "/opt/ncu");
    assert_true(has_arg(argv, "--profile-from-start", "off"));
    assert_true(has_arg(argv, "--clock-control", "none"));
    assert_true(has_arg(argv, "--target-processes", "all"));
    assert_true(has_arg(argv, "--section", "SpeedOfLight"));
    assert_true(has_arg(argv, "--section", "WarpStateStats"));
    assert_true(has_arg(argv, "--section", "SourceCounters"));
    assert_true(has_arg(argv, "--export", "/tmp/x/prof"));
    assert_true(has_arg(argv, "--force-overwrite", "/bin/worker"));
    size_t n = 0;
    while (argv[n])
        n++;
    assert_string_equal(argv[n - 1], "--profile");
    ncu_argv_free(argv);

    o.source_counters = false;
    o.kernel_regex = "gemm";
    argv = ncu_profile_argv(&o, NULL);
    assert_false(has_arg(argv, "--section", "SourceCounters"));
    assert_true(has_arg(argv, "--kernel-name", "regex:gemm"));
    ncu_argv_free(argv);

    argv = ncu_import_argv("ncu", "/tmp/p.ncu-rep", "raw");
    assert_true(has_arg(argv, "--import", "/tmp/p.ncu-rep"));
    assert_true(has_arg(argv, "--csv", NULL));
    assert_true(has_arg(argv, "--page", "raw"));
    ncu_argv_free(argv);
    argv = ncu_import_argv("ncu", "/tmp/p.ncu-rep", "details");
    assert_false(has_arg(argv, "--csv", NULL));
    assert_true(has_arg(argv, "--page", "details"));
    ncu_argv_free(argv);
}

/* ---------------------------------------------------------------- classification */

static void test_classify(void **state)
{
    (void)state;
    strbuf err = STRBUF_INIT;
    strbuf_init(&err);
    assert_int_equal(ncu_classify("==PROF== Disconnected from process 1\n", 0, false, &err),
                     NCU_OK);
    assert_int_equal(err.len, 0);
    assert_int_equal(ncu_classify("==ERROR== ERR_NVGPUCTRPERM - The user does not have "
                                  "permission\n", 1, false, &err), NCU_NO_PERMISSION);
    assert_non_null(strstr(err.buf, "NVreg_RestrictProfilingToAdminUsers=0"));
    strbuf_reset(&err);
    assert_int_equal(ncu_classify("", 137, true, &err), NCU_TIMEOUT);
    strbuf_reset(&err);
    assert_int_equal(ncu_classify("==ERROR== The application returned an error code (11).\n",
                                  11, false, &err), NCU_TARGET_FAILED);
    assert_non_null(strstr(err.buf, "error code (11)"));
    strbuf_reset(&err);
    assert_int_equal(ncu_classify("==WARNING== No kernels were profiled.\n", 0, false, &err),
                     NCU_NO_KERNELS);
    strbuf_reset(&err);
    assert_int_equal(ncu_classify("==ERROR== Unknown option '--bogus'\n", 1, false, &err),
                     NCU_FAILED);
    assert_non_null(strstr(err.buf, "--bogus"));
    strbuf_release(&err);
}

/* ---------------------------------------------------------------- ncu_run, fake ncu */

static ncu_status run_fake(const char *mode, double timeout, ncu_capture *cap, strbuf *err)
{
    char dir[] = "/tmp/cg-ncu-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char *fake = xasprintf("%s/tests/data/profile/fake_ncu.sh", src_dir());
    char *data = xasprintf("FAKE_NCU_DATA=%s/tests/data/profile", src_dir());
    char *modev = xasprintf("FAKE_NCU_MODE=%s", mode);
    char *base = xasprintf("%s/prof", dir);
    const char *env[] = { data, modev, NULL };
    const char *target[] = { "/bin/true", NULL };
    ncu_opts o = { 0 };
    o.ncu = fake;
    o.target_argv = target;
    o.env_add = env;
    o.report_base = base;
    o.timeout_s = timeout;
    /* the fake reads its mode from the environment it inherits */
    setenv("FAKE_NCU_MODE", mode, 1);
    setenv("FAKE_NCU_DATA", data + strlen("FAKE_NCU_DATA="), 1);
    ncu_run(&o, cap, err);
    char *rep = xasprintf("%s.ncu-rep", base);
    unlink(rep);
    rmdir(dir);
    free(rep);
    free(fake);
    free(data);
    free(modev);
    free(base);
    return cap->status;
}

static void test_run_fake(void **state)
{
    (void)state;
    static const struct { const char *mode; ncu_status want; } cases[] = {
        { "ok", NCU_OK }, { "perm", NCU_NO_PERMISSION }, { "crash", NCU_TARGET_FAILED },
        { "nokernels", NCU_NO_KERNELS }, { "noreport", NCU_FAILED },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        ncu_capture cap;
        ncu_capture_init(&cap);
        strbuf err = STRBUF_INIT;
        strbuf_init(&err);
        ncu_status s = run_fake(cases[i].mode, 20, &cap, &err);
        if (s != cases[i].want)
            fail_msg("mode %s: got %s (%s)", cases[i].mode, ncu_status_name(s), err.buf);
        if (s == NCU_OK) {
            assert_non_null(strstr(cap.raw_csv.buf, "\"ID\","));
            assert_non_null(strstr(cap.details.buf, "Est. Speedup"));
            assert_non_null(strstr(cap.log.buf, "==PROF== Connected"));
        } else {
            assert_true(err.len > 0);
        }
        strbuf_release(&err);
        ncu_capture_release(&cap);
    }
}

static void test_run_timeout_and_missing(void **state)
{
    (void)state;
    ncu_capture cap;
    ncu_capture_init(&cap);
    strbuf err = STRBUF_INIT;
    strbuf_init(&err);
    double t0 = now_seconds();
    assert_int_equal(run_fake("hang", 1, &cap, &err), NCU_TIMEOUT);
    assert_true(now_seconds() - t0 < 15);
    ncu_capture_release(&cap);

    strbuf_reset(&err);
    ncu_capture_init(&cap);
    const char *target[] = { "/bin/true", NULL };
    ncu_opts o = { 0 };
    o.ncu = "/nonexistent/ncu";
    o.target_argv = target;
    o.report_base = "/tmp/none";
    assert_int_equal(ncu_run(&o, &cap, &err), -1);
    assert_int_equal(cap.status, NCU_NOT_FOUND);
    assert_non_null(strstr(err.buf, "/nonexistent/ncu"));
    ncu_capture_release(&cap);
    strbuf_release(&err);
}

/* ---------------------------------------------------------------- units, numbers */

static void check_unit(const char *u, const char *want, double scale)
{
    strbuf out = STRBUF_INIT;
    strbuf_init(&out);
    double s = 0;
    ncu_unit_normalise(u, &out, &s);
    if (strcmp(out.buf, want) || fabs(s - scale) > 1e-12 * fabs(scale))
        fail_msg("unit '%s': got '%s' x%g, want '%s' x%g", u, out.buf, s, want, scale);
    strbuf_release(&out);
}

static void test_units(void **state)
{
    (void)state;
    check_unit("ns", "s", 1e-9);
    check_unit("us", "s", 1e-6);
    check_unit("ms", "s", 1e-3);
    check_unit("s", "s", 1);
    check_unit("usecond", "s", 1e-6);
    check_unit("byte", "byte", 1);
    check_unit("Kbyte", "byte", 1e3);
    check_unit("Mbyte", "byte", 1e6);
    check_unit("Gbyte", "byte", 1e9);
    check_unit("KB", "byte", 1e3);
    check_unit("MB", "byte", 1e6);
    check_unit("GB", "byte", 1e9);
    check_unit("byte/s", "byte/s", 1);
    check_unit("Gbyte/s", "byte/s", 1e9);
    check_unit("Tbyte/s", "byte/s", 1e12);
    check_unit("Gbyte/second", "byte/s", 1e9);
    check_unit("KB/s", "byte/s", 1e3);
    check_unit("Kbyte/block", "byte/block", 1e3);
    check_unit("Ghz", "hz", 1e9);
    check_unit("hz", "hz", 1);
    check_unit("%", "%", 1);
    check_unit("cycle", "cycle", 1);
    check_unit("inst/cycle", "inst/cycle", 1);
    check_unit("register/thread", "register/thread", 1);
    check_unit("", "", 1);
}

static void test_numbers(void **state)
{
    (void)state;
    assert_true(ncu_parse_number("1,209") == 1209);
    assert_true(ncu_parse_number("590,680,286") == 590680286);
    assert_true(fabs(ncu_parse_number("43,323,442,136.50") - 43323442136.5) < 1e-3);
    assert_true(ncu_parse_number(" 0.24 ") == 0.24);
    assert_true(ncu_parse_number("-3") == -3);
    assert_true(isnan(ncu_parse_number("n/a")));
    assert_true(isnan(ncu_parse_number("no data")));
    assert_true(isnan(ncu_parse_number("")));
    assert_true(isnan(ncu_parse_number("(256, 1, 1)")));
    assert_true(isnan(ncu_parse_number("PolicySpread")));
    assert_true(isnan(ncu_parse_number("9.0.1x")));
}

/* ---------------------------------------------------------------- own fixtures */

static void test_parse_own_fixture(void **state)
{
    (void)state;
    char *text = load("units_raw.csv", false);
    assert_non_null(text);
    ncu_table t;
    strbuf err = STRBUF_INIT;
    strbuf_init(&err);
    assert_int_equal(ncu_table_parse(text, strlen(text), &t, &err), 0);
    assert_int_equal(t.nlaunches, 3);
    const ncu_launch *a = &t.launches[0], *b = &t.launches[1], *c = &t.launches[2];
    assert_string_equal(a->kernel, "void scale<float, 4>(const float *, float *, int)");
    assert_string_equal(b->kernel, "reduce(const float *, float *)");
    assert_int_equal(c->id, 2);
    /* us with a thousands separator */
    assert_true(fabs(ncu_value(&t, a, "gpu__time_duration.sum") - 1500.5e-6) < 1e-12);
    assert_true(fabs(ncu_value(&t, c, "gpu__time_duration.sum") - 500e-6) < 1e-12);
    /* Mbyte, Kbyte, Tbyte/s, Kbyte/block, Ghz */
    assert_true(fabs(ncu_value(&t, a, "dram__bytes_read.sum") - 268435456.0) < 1e-3);
    assert_true(fabs(ncu_value(&t, a, "dram__bytes_write.sum") - 512000.0) < 1e-6);
    assert_true(fabs(ncu_value(&t, a, "dram__bytes.sum.per_second") - 0.3e12) < 1);
    assert_true(fabs(ncu_value(&t, c, "dram__bytes.sum.per_second") - 1234.5e12) < 1e3);
    assert_true(fabs(ncu_value(&t, a, "launch__shared_mem_per_block") - 1020.0) < 1e-9);
    assert_true(fabs(ncu_value(&t, a, "gpc__cycles_elapsed.avg.per_second") - 1.98e9) < 1);
    assert_string_equal(t.units[ncu_table_col(&t, "dram__bytes.sum.per_second")], "byte/s");
    /* percentages and ratios unchanged; n/a, no data and empty are NAN */
    assert_true(ncu_value(&t, a, "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed") == 85.25);
    assert_true(isnan(ncu_value(&t, a, "derived__local_spilling_requests_pct")));
    assert_true(isnan(ncu_value(&t, b, "dram__bytes_write.sum")));
    assert_true(isnan(ncu_value(&t, b, "dram__bytes.sum.per_second")));
    assert_true(isnan(ncu_value(&t, a, "launch__func_cache_config")));
    assert_string_equal(ncu_text(&t, a, "launch__func_cache_config"), "CachePreferNone");
    assert_true(isnan(ncu_value(&t, a, "no_such_metric")));
    assert_null(ncu_text(&t, a, "no_such_metric"));
    ncu_table_release(&t);
    free(text);

    text = load("units_ms_raw.csv", false);
    assert_non_null(text);
    assert_int_equal(ncu_table_parse(text, strlen(text), &t, &err), 0);
    a = &t.launches[0];
    assert_true(fabs(ncu_value(&t, a, "gpu__time_duration.sum") - 1.25e-3) < 1e-12);
    assert_true(ncu_value(&t, a, "dram__bytes.sum") == 2e9);
    assert_true(ncu_value(&t, a, "l1tex__t_bytes.sum.per_second") == 3.5e9);
    assert_true(ncu_value(&t, a, "x__gb") == 1e9);
    assert_true(ncu_value(&t, a, "x__kb_s") == 2e3);
    assert_true(ncu_value(&t, a, "x__plain") == 7);
    ncu_table_release(&t);
    free(text);
    strbuf_release(&err);
}

static void test_parse_errors(void **state)
{
    (void)state;
    strbuf err = STRBUF_INIT;
    strbuf_init(&err);
    ncu_table t;
    char *text = load("bad_fields_raw.csv", false);
    assert_non_null(text);
    assert_int_equal(ncu_table_parse(text, strlen(text), &t, &err), -1);
    assert_non_null(strstr(err.buf, "fields"));
    free(text);
    strbuf_reset(&err);
    text = load("no_header.txt", false);
    assert_int_equal(ncu_table_parse(text, strlen(text), &t, &err), -1);
    assert_non_null(strstr(err.buf, "header"));
    free(text);
    strbuf_reset(&err);
    const char *header_only = "\"ID\",\"Kernel Name\"\n\"\",\"\"\n";
    assert_int_equal(ncu_table_parse(header_only, strlen(header_only), &t, &err), 0);
    assert_int_equal(t.nlaunches, 0);
    ncu_table_release(&t);
    const char *no_units = "\"ID\",\"Kernel Name\"\n";
    assert_int_equal(ncu_table_parse(no_units, strlen(no_units), &t, &err), -1);
    assert_non_null(strstr(err.buf, "units"));
    strbuf_release(&err);
}

static void test_short_name(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        { "void gemm_device<tuple<int, int>, float>(T1, T2, const T3 *)", "gemm_device" },
        { "copy_kernel(const float *, float *, unsigned long)", "copy_kernel" },
        { "void cute::kernel<(int)1>(Params)", "cute::kernel" },
        { "plain", "plain" },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        strbuf sb = STRBUF_INIT;
        strbuf_init(&sb);
        ncu_short_name(cases[i][0], &sb);
        assert_string_equal(sb.buf, cases[i][1]);
        strbuf_release(&sb);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_profile_argv),
        cmocka_unit_test(test_classify),
        cmocka_unit_test(test_run_fake),
        cmocka_unit_test(test_run_timeout_and_missing),
        cmocka_unit_test(test_units),
        cmocka_unit_test(test_numbers),
        cmocka_unit_test(test_parse_own_fixture),
        cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_short_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
