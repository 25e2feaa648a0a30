/* report: the statistics (fast_p, geometric means with failures as 1.0x, mean, median)
 * on hand-computed cases, category inference from operator graphs and names, levels; the
 * JSON's judged nodes and the Markdown's failed variants from a real run store (a recipe's
 * variant, a message cut whole). */
#include <jansson.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "store.h"
#include "util.h"

static void close_to(double got, double want)
{
    if (fabs(got - want) > 1e-9 * fmax(1, fabs(want)))
        fail_msg("got %.12g, want %.12g", got, want);
}

static void test_stats_mixed(void **state)
{
    (void)state;
    /* five problems: one failure; correct ones at 2, 0.5, 1.5, 4 */
    const double s[] = { 2.0, NAN, 0.5, 1.5, 4.0 };
    report_stats st;
    report_stats_of(s, 5, &st);
    assert_int_equal(st.n, 5);
    assert_int_equal(st.correct, 4);
    close_to(st.correct_rate, 0.8);
    close_to(st.fast[0], 4 / 5.0);   /* p = 0: every correct one */
    close_to(st.fast[1], 3 / 5.0);   /* > 1: 2, 1.5, 4 */
    close_to(st.fast[2], 2 / 5.0);   /* > 1.5, strictly: 2, 4 */
    close_to(st.fast[3], 1 / 5.0);   /* > 2, strictly: 4 */
    close_to(st.geo_all, pow(2 * 1.0 * 0.5 * 1.5 * 4, 1 / 5.0));  /* the failure as 1.0x */
    close_to(st.geo_correct, pow(2 * 0.5 * 1.5 * 4, 1 / 4.0));
    close_to(st.mean, 2.0);
    close_to(st.median, 1.75);
}

static void test_stats_edges(void **state)
{
    (void)state;
    report_stats st;
    const double fails[] = { NAN, NAN, NAN };
    report_stats_of(fails, 3, &st);
    assert_int_equal(st.correct, 0);
    close_to(st.correct_rate, 0);
    close_to(st.geo_all, 1.0);
    assert_true(isnan(st.geo_correct) && isnan(st.mean) && isnan(st.median));
    for (int k = 0; k < REPORT_N_FAST; k++)
        close_to(st.fast[k], 0);
    const double one[] = { 3.0 };
    report_stats_of(one, 1, &st);
    close_to(st.median, 3.0);
    close_to(st.fast[3], 1.0);
    report_stats_of(NULL, 0, &st);
    assert_int_equal(st.n, 0);
    assert_true(isnan(st.correct_rate) && isnan(st.geo_all));
    /* exactly at a threshold does not count: KernelBench's fast_p is speedup > p */
    const double at[] = { 1.0, 1.5, 2.0, NAN };
    close_to(report_fast_p(at, 4, 1.0), 2 / 4.0);
    close_to(report_fast_p(at, 4, 2.0), 0);
    close_to(report_fast_p(at, 4, 0.0), 3 / 4.0);
}

static json_t *graph(const char *text)
{
    json_error_t e;
    json_t *g = json_loads(text, 0, &e);
    if (!g)
        fail_msg("bad graph: %s", e.text);
    return g;
}

#define FN(t) "{\"op\":\"call_function\",\"target\":\"" t "\"}"
#define METHOD(t) "{\"op\":\"call_method\",\"target\":\"" t "\"}"
#define MOD(m) "{\"op\":\"call_module\",\"target\":\"m\",\"module\":\"" m "\"}"
#define IO "{\"op\":\"placeholder\",\"target\":\"x\"}"

static void expect_cat(const char *name, const char *g, int level, const char *want)
{
    json_t *j = g ? graph(g) : NULL;
    const char *got = report_category(name, j, level);
    json_decref(j);
    if (strcmp(got, want))
        fail_msg("%s: got %s, want %s", name, got, want);
}

static void test_categories(void **state)
{
    (void)state;
    expect_cat("19_ReLU.py", "[" IO "," FN("torch.relu") "]", 1, "elementwise");
    expect_cat("1_Square_matrix_multiplication_.py", "[" IO "," FN("torch.matmul") "]", 1, "matmul");
    expect_cat("18_Matmul_with_transposed_both.py", "[" IO "," METHOD("T") "," FN("torch.matmul") "]", 1, "matmul");
    expect_cat("36_RMSNorm_.py",
               "[" IO "," FN("torch.mean") "," FN("_operator.pow") "," FN("torch.sqrt") "," FN("_operator.truediv") "]",
               1, "norm");
    expect_cat("23_Softmax.py", "[" IO "," FN("torch.softmax") "]", 1, "reduction");
    expect_cat("40_LayerNorm.py", "[" IO "," MOD("LayerNorm") "]", 1, "norm");
    expect_cat("63_conv_standard_2D.py", "[" IO "," MOD("Conv2d") "]", 1, "conv");
    expect_cat("1_Conv2D_ReLU_BiasAdd.py", "[" IO "," MOD("Conv2d") "," FN("torch.relu") "," FN("_operator.add") "]",
               2, "fused");
    expect_cat("12_Gemm_Multiply_LeakyReLU.py", "[" IO "," MOD("Linear") "," FN("_operator.mul") "]", 2, "fused");
    expect_cat("94_MSELoss.py", "[" IO "," FN("torch.nn.functional.mse_loss") "]", 1, "loss");
    expect_cat("41_Max_Pooling_1D.py", "[" IO "," MOD("MaxPool1d") "]", 1, "pooling");
    /* no graph: the name decides */
    expect_cat("41_Max_Pooling_1D.py", NULL, 1, "pooling");
    expect_cat("94_MSELoss.py", NULL, 1, "loss");
    expect_cat("47_Sum_reduction_over_a_dimension.py", NULL, 1, "reduction");
    expect_cat("relu_small.py", NULL, 0, "elementwise");
    expect_cat("mystery.py", NULL, 0, "other");
    expect_cat("mystery.py", NULL, 2, "fused");
    expect_cat("1_Conv2D_ReLU_BiasAdd.py", NULL, 2, "fused");
}

static void test_levels(void **state)
{
    (void)state;
    assert_int_equal(report_level_of("/k/KernelBench/level1/19_ReLU.py"), 1);
    assert_int_equal(report_level_of("runs/level_2/x.py"), 2);
    assert_int_equal(report_level_of("examples/problems/relu_small.py"), 0);
    assert_int_equal(report_level_of(NULL), 0);
}

/* A fresh run store in a temporary folder (its path in *dir, for remove_run). */
static store *temp_store(char **dir)
{
    const char *base = getenv("TMPDIR");
    *dir = xasprintf("%s/cutegen-report-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(*dir))
        fail_msg("mkdtemp failed");
    store *s = NULL;
    strbuf err = STRBUF_INIT;
    if (store_open(*dir, true, &s, &err) != 0)
        fail_msg("store_open: %s", err.buf);
    strbuf_release(&err);
    return s;
}

static void remove_run(char *dir)
{
    char *rm = xasprintf("rm -rf '%s'", dir);
    assert_int_equal(system(rm), 0);
    free(rm);
    free(dir);
}

static void load_report(report *r, const char *dir)
{
    strbuf err = STRBUF_INIT;
    report_init(r);
    if (report_load(r, dir, &err) != 0)
        fail_msg("report_load: %s", err.buf);
    strbuf_release(&err);
}

/* A run with one task and two judged nodes: a recipe variant that gave a wrong result
 * (a message of 2-byte UTF-8 characters longer than the report keeps, offset by one byte
 * so that the cut falls inside a character) and a model's kernel that was correct. */
static void test_judged_nodes(void **state)
{
    (void)state;
    char *dir;
    store *s = temp_store(&dir);
    strbuf err = STRBUF_INIT;
    int64_t task = store_task(s, "19_ReLU.py", "/k/level1/19_ReLU.py", "00", "{}");
    assert_true(task > 0);
    int64_t rec = store_node_add(s, task, 0, 0, 0, "recipe",
                                 "// Generated by cutegen's built-in proposer\n// Parameters: threads=128 cache=4\n"
                                 "CG_EXPORT int cg_forward();\n", 0);
    strbuf msg = STRBUF_INIT;
    strbuf_adds(&msg, "x");
    for (int i = 0; i < 300; i++)
        strbuf_adds(&msg, "\xc3\xa9"); /* U+00E9: byte 400 continues the character at 399 */
    assert_int_equal(store_node_judged(s, rec, "wrong_result", NAN, NAN, msg.buf, NULL, NULL), 0);
    int64_t model = store_node_add(s, task, 0, 0, 0, "first", "CG_EXPORT int cg_forward();\n", 0);
    assert_int_equal(store_node_judged(s, model, "ok", 1.5, 2.0, "correct on every trial", NULL, NULL), 0);
    store_close(s);

    report r;
    load_report(&r, dir);
    strbuf out = STRBUF_INIT;
    assert_int_equal(report_write(&r, "json", NULL, &out, &err), 0);
    json_t *doc = json_loads(out.buf, 0, NULL);
    assert_non_null(doc);
    json_t *judged = json_object_get(json_array_get(json_object_get(doc, "problems"), 0), "judged");
    assert_int_equal(json_array_size(judged), 2);
    json_t *wrong = json_array_get(judged, 0), *ok = json_array_get(judged, 1);
    assert_string_equal(json_string_value(json_object_get(wrong, "verdict")), "wrong_result");
    assert_string_equal(json_string_value(json_object_get(wrong, "params")), "threads=128 cache=4");
    const char *m = json_string_value(json_object_get(wrong, "message"));
    assert_non_null(m); /* valid UTF-8, or jansson would have dropped it */
    assert_int_equal(strlen(m), 399);
    assert_string_equal(json_string_value(json_object_get(ok, "kind")), "first");
    assert_null(json_object_get(ok, "params"));
    assert_true(json_real_value(json_object_get(ok, "time_ms")) == 1.5);
    json_decref(doc);
    /* Markdown: the failed variant a line, its message's first 160 bytes cut whole */
    strbuf_reset(&out);
    assert_int_equal(report_write(&r, "md", NULL, &out, &err), 0);
    const char *sec = strstr(out.buf, "\n## Built-in variants that failed\n\n- 19_ReLU.py, node ");
    assert_non_null(sec);
    const char *line = strstr(sec, "(threads=128 cache=4): wrong_result: x\xc3\xa9");
    assert_non_null(line);
    const char *end = strchr(line, '\n');
    assert_non_null(end);
    assert_int_equal(end - 4 - (line + strlen("(threads=128 cache=4): wrong_result: ")), 159);
    assert_memory_equal(end - 4, " ...", 4);
    assert_null(strstr(end, "- 19_ReLU.py, node ")); /* one line: the correct model node is not listed */
    report_release(&r);
    strbuf_release(&out);
    strbuf_release(&msg);
    strbuf_release(&err);
    remove_run(dir);
}

/* A task a sweep started and cut before any verdict (a node added, never judged, no stop
 * reason) is "not judged" in Markdown and JSON, not "no"; a task whose node was judged wrong
 * is "no". */
static void test_not_judged(void **state)
{
    (void)state;
    char *dir;
    store *s = temp_store(&dir);
    strbuf err = STRBUF_INIT;
    int64_t cut = store_task(s, "93_Cut.py", "/k/level2/93_Cut.py", "00", "{}");
    assert_true(store_node_add(s, cut, 0, 0, 0, "recipe", "CG_EXPORT int cg_forward();\n", 0) > 0);
    int64_t wrong = store_task(s, "94_Wrong.py", "/k/level2/94_Wrong.py", "00", "{}");
    int64_t w = store_node_add(s, wrong, 0, 0, 0, "recipe", "CG_EXPORT int cg_forward();\n", 0);
    assert_int_equal(store_node_judged(s, w, "wrong_result", NAN, NAN, "off by one", NULL, NULL), 0);
    store_close(s);

    report r;
    load_report(&r, dir);
    strbuf out = STRBUF_INIT;
    assert_int_equal(report_write(&r, "md", NULL, &out, &err), 0);
    assert_non_null(strstr(out.buf, "| 93_Cut.py | 2 | "));
    assert_non_null(strstr(strstr(out.buf, "| 93_Cut.py | 2 | "), " | not judged | "));
    assert_non_null(strstr(strstr(out.buf, "| 94_Wrong.py | 2 | "), " | no | "));
    assert_non_null(strstr(out.buf, "\n1 of the problems were started but not judged"));
    strbuf_reset(&out);
    assert_int_equal(report_write(&r, "json", NULL, &out, &err), 0);
    json_t *doc = json_loads(out.buf, 0, NULL);
    assert_non_null(doc);
    json_t *probs = json_object_get(doc, "problems");
    assert_int_equal(json_array_size(probs), 2);
    for (size_t i = 0; i < 2; i++) {
        json_t *p = json_array_get(probs, i);
        bool is_cut = !strcmp(json_string_value(json_object_get(p, "problem")), "93_Cut.py");
        assert_true(json_is_false(json_object_get(p, "correct")));
        assert_true(json_boolean_value(json_object_get(p, "not_judged")) == is_cut);
    }
    json_decref(doc);
    report_release(&r);
    strbuf_release(&out);
    strbuf_release(&err);
    remove_run(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stats_mixed),
        cmocka_unit_test(test_stats_edges),
        cmocka_unit_test(test_categories),
        cmocka_unit_test(test_levels),
        cmocka_unit_test(test_judged_nodes),
        cmocka_unit_test(test_not_judged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
