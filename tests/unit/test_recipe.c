/* Unit tests for the recipe recogniser and generator: every fixture of tests/data/recipe/
 * is recognised as expect.txt says (covered family, or the right "not covered" reason);
 * the recognised expressions evaluate (rx_eval, the kernels' formulas in float on the
 * CPU) to hand-computed values; dims, keepdim, outer/r/inner and input kinds are right;
 * every variant of every covered fixture generates a complete source with no template
 * marker left. The nvcc builds of the generated kernels are tests/cli/t0700-recipe-compile.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recipe.h"
#include "util.h"

static char *fixture(const char *name)
{
    return xasprintf("%s/tests/data/recipe/%s.json", cg_source_dir(), name);
}

static void load(const char *name, recipe_plan *p)
{
    char *path = fixture(name);
    strbuf why = STRBUF_INIT;
    recipe_plan_init(p);
    int rc = recipe_recognise_file(path, p, &why);
    if (rc != 0)
        fail_msg("%s: %s", name, why.buf);
    strbuf_release(&why);
    free(path);
}

static void test_expectations(void **state)
{
    (void)state;
    char *path = xasprintf("%s/tests/data/recipe/expect.txt", cg_source_dir());
    strbuf text = STRBUF_INIT;
    assert_int_equal(read_file(path, &text, 1 << 20), 0);
    int checked = 0;
    for (char *line = text.buf, *nl; line && *line; line = nl ? nl + 1 : NULL) {
        nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        if (line[0] == '#' || !line[0])
            continue;
        char *tab = strchr(line, '\t');
        assert_non_null(tab);
        *tab = '\0';
        const char *want = tab + 1;
        recipe_plan p;
        recipe_plan_init(&p);
        strbuf why = STRBUF_INIT;
        char *fx = fixture(line);
        int rc = recipe_recognise_file(fx, &p, &why);
        if (!strcmp(want, "pointwise") || !strcmp(want, "reduce") || !strcmp(want, "pool")) {
            if (rc != 0)
                fail_msg("%s: expected %s, got '%s'", line, want, why.buf);
            assert_int_equal(p.family, !strcmp(want, "pointwise") ? RECIPE_POINTWISE :
                                       !strcmp(want, "pool") ? RECIPE_POOL : RECIPE_REDUCE);
        } else {
            if (rc != 1 || !str_starts_with(why.buf, want))
                fail_msg("%s: expected '%s...', got rc %d '%s'", line, want, rc, why.buf);
        }
        checked++;
        free(fx);
        strbuf_release(&why);
        recipe_plan_release(&p);
    }
    assert_true(checked >= 30);
    strbuf_release(&text);
    free(path);
}

/* Evaluates a pointwise fixture at the given input values. */
static float pw(const char *name, float x0, float x1)
{
    recipe_plan p;
    load(name, &p);
    assert_int_equal(p.family, RECIPE_POINTWISE);
    float x[2] = { x0, x1 };
    float r = rx_eval(&p, p.root, x, 0.f);
    recipe_plan_release(&p);
    return r;
}

#define NEAR(a, b) assert_float_equal((a), (b), 1e-6 * (1 + fabs((double)(b))))

static void test_pointwise_math(void **state)
{
    (void)state;
    NEAR(pw("relu", -1.f, 0), 0.f);
    NEAR(pw("relu", 2.5f, 0), 2.5f);
    assert_true(isnan(pw("relu", NAN, 0)));            /* torch.relu keeps NaN */
    NEAR(pw("leaky_relu", -2.f, 0), -0.02f);
    NEAR(pw("leaky_relu", 3.f, 0), 3.f);
    NEAR(pw("leaky_module", -1.f, 0), -0.6f);           /* LeakyReLU(0.2) then * 3 */
    NEAR(pw("sigmoid", 0.f, 0), 0.5f);
    NEAR(pw("tanh", 1.f, 0), 0.76159416f);
    NEAR(pw("swish", 1.f, 0), 0.73105858f);
    NEAR(pw("gelu", 1.f, 0), 0.84134475f);              /* exact erf form */
    NEAR(pw("new_gelu", 1.f, 0), 0.84119199f);          /* tanh form, 88_MinGPTNewGelu */
    NEAR(pw("selu", 1.f, 0), 1.05070099f);
    NEAR(pw("selu", -1.f, 0), -1.11133074f);
    NEAR(pw("hardsigmoid", 0.f, 0), 0.5f);
    NEAR(pw("hardsigmoid", 4.f, 0), 1.f);
    NEAR(pw("softplus", 0.f, 0), 0.69314718f);
    NEAR(pw("softplus", 30.f, 0), 30.f);                /* above the threshold: x */
    NEAR(pw("softsign", 1.f, 0), 0.5f);
    NEAR(pw("softsign", -3.f, 0), -0.75f);
    NEAR(pw("elu", -1.f, 0), -0.63212056f);
    NEAR(pw("hardtanh", 3.f, 0), 1.f);
    NEAR(pw("hardtanh", -0.25f, 0), -0.25f);
    NEAR(pw("scalar_mul", 2.f, 3.14f), 6.28f);
    NEAR(pw("chain_bcast", 0.f, 0.f), 1.f);             /* sigmoid(0) * 2 + tanh(0) */
    NEAR(pw("chain_bcast", 0.f, 1.f), 1.76159416f);
    NEAR(pw("module_chain", 1.f, 0.5f), 1.06773798f);   /* clamp(gelu_tanh(1)+.5)^2 - sigmoid(1) */
    NEAR(pw("module_chain", 5.f, 0.f), 16.f - 0.99330715f); /* clamped at 4 */
    NEAR(pw("silu_bf16", 2.f, 0), 1.76159416f);
}

static void test_reduce_plans(void **state)
{
    (void)state;
    recipe_plan p;
    strbuf line = STRBUF_INIT;
    load("pro_epi_sum", &p);
    recipe_summary(&p, &line);
    assert_string_equal(line.buf, "reduce sum over dim 2 of (exp(x) * w), then (r / 3) -> float32 [8, 16]");
    recipe_plan_release(&p);
    strbuf_reset(&line);
    load("swish", &p);
    recipe_summary(&p, &line);
    assert_string_equal(line.buf, "pointwise (x * sigmoid(x)) -> float32 [4096, 393216]");
    recipe_plan_release(&p);
    strbuf_release(&line);

    load("sum_dim", &p);
    assert_int_equal(p.red, RED_SUM);
    assert_int_equal(p.dim, 1);
    assert_true(p.keepdim);
    assert_int_equal(p.outer, 128);
    assert_int_equal(p.r, 4096);
    assert_int_equal(p.inner, 4095);
    recipe_plan_release(&p);

    load("max_dim", &p);
    assert_int_equal(p.red, RED_MAX);
    assert_false(p.keepdim);
    recipe_plan_release(&p);

    load("argmin_dim", &p);
    assert_int_equal(p.red, RED_ARGMIN);
    recipe_plan_release(&p);

    load("sum_last", &p); /* x.sum(dim=-1): the method form, a negative dim */
    assert_int_equal(p.dim, 2);
    assert_int_equal(p.inner, 1);
    assert_int_equal(p.outer, 256 * 64);
    recipe_plan_release(&p);

    load("prod_first", &p); /* torch.prod(x, 0): the dim as a positional argument */
    assert_int_equal(p.red, RED_PROD);
    assert_int_equal(p.dim, 0);
    assert_int_equal(p.outer, 1);
    assert_int_equal(p.inner, 64 * 512);
    recipe_plan_release(&p);

    load("amax_last_keep", &p); /* dim=[-1] as a list of one */
    assert_int_equal(p.red, RED_MAX);
    assert_int_equal(p.dim, 1);
    recipe_plan_release(&p);

    load("logsoftmax_module_fp16", &p); /* nn.LogSoftmax(dim=-1): dim from the repr */
    assert_int_equal(p.red, RED_LOGSOFTMAX);
    assert_int_equal(p.dim, 1);
    recipe_plan_release(&p);

    load("softmax_middle", &p);
    assert_int_equal(p.red, RED_SOFTMAX);
    assert_int_equal(p.inner, 512);
    recipe_plan_release(&p);

    /* prologue (exp(x) * w) and epilogue (r / 3) */
    load("pro_epi_sum", &p);
    assert_int_equal(p.red, RED_SUM);
    float x[2] = { 0.f, 2.f };
    NEAR(rx_eval(&p, p.root, x, 0.f), 2.f);
    assert_true(p.epi >= 0);
    NEAR(rx_eval(&p, p.epi, x, 6.f), 2.f);
    assert_int_equal(p.kind[0], RK_FULL);
    assert_int_equal(p.kind[1], RK_FULL);
    recipe_plan_release(&p);
}

static void test_input_kinds(void **state)
{
    (void)state;
    recipe_plan p;
    load("scalar_mul", &p);
    assert_int_equal(p.kind[0], RK_FULL);
    assert_int_equal(p.kind[1], RK_SCALAR);
    recipe_plan_release(&p);
    load("chain_bcast", &p);
    assert_int_equal(p.kind[0], RK_BCAST);
    assert_int_equal(p.kind[1], RK_BCAST);
    recipe_plan_release(&p);
    load("module_chain", &p); /* the parameter comes in through get_attr */
    assert_int_equal(p.kind[0], RK_FULL);
    assert_int_equal(p.kind[1], RK_BCAST);
    recipe_plan_release(&p);
}

static void test_malformed(void **state)
{
    (void)state;
    recipe_plan p;
    recipe_plan_init(&p);
    strbuf why = STRBUF_INIT;
    json_t *spec = json_loads("{\"inputs\": 3}", 0, NULL);
    assert_int_equal(recipe_recognise(spec, &p, &why), -1);
    assert_non_null(strstr(why.buf, "malformed"));
    json_decref(spec);
    /* the reference process's reply, as cutegen eval caches it, is accepted too */
    char *path = fixture("relu");
    json_t *inner = json_load_file(path, 0, NULL);
    assert_non_null(inner);
    spec = json_pack("{s:b, s:o}", "ok", 1, "spec", inner);
    assert_int_equal(recipe_recognise(spec, &p, &why), 0);
    assert_int_equal(p.family, RECIPE_POINTWISE);
    json_decref(spec);
    free(path);
    assert_int_equal(recipe_recognise_file("/nonexistent/spec.json", &p, &why), -1);
    assert_non_null(strstr(why.buf, "cannot read task spec"));
    strbuf_release(&why);
    recipe_plan_release(&p);
}

static void test_generate_all(void **state)
{
    (void)state;
    static const char *names[] = { "relu", "leaky_relu", "sigmoid", "tanh", "swish", "gelu",
        "selu", "hardsigmoid", "softplus", "softsign", "elu", "hardtanh", "new_gelu",
        "scalar_mul", "sum_dim", "mean_dim", "max_dim", "argmax_dim", "argmin_dim", "min_dim",
        "softmax", "log_softmax", "sum_last", "prod_first", "amax_last_keep", "chain_bcast",
        "module_chain", "pro_epi_sum", "logsoftmax_module_fp16", "softmax_middle", "silu_bf16",
        "leaky_module", "softmax_long_prologue", "log_softmax_bf16_long" };
    recipe_hw hw;
    recipe_hw_default(&hw);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        recipe_plan p;
        load(names[i], &p);
        recipe_params v[64];
        int n = recipe_variants(&p, &hw, v, 64);
        assert_true(n >= 1);
        for (int k = 0; k < n; k++) {
            assert_true(v[k].threads >= 32 && v[k].threads <= 1024);
            strbuf cu = STRBUF_INIT, err = STRBUF_INIT;
            if (recipe_generate(&p, &v[k], recipe_dir(), &cu, &err))
                fail_msg("%s variant %d: %s", names[i], k, err.buf);
            assert_non_null(strstr(cu.buf, "CG_EXPORT int cg_forward"));
            assert_non_null(strstr(cu.buf, "#define CGR_GENERATED 1"));
            assert_null(strstr(cu.buf, "\n// recipe:params"));
            assert_null(strstr(cu.buf, "// recipe:inline"));
            assert_non_null(strstr(cu.buf, "namespace cgr {")); /* ops.cuh inlined */
            strbuf_release(&cu);
            strbuf_release(&err);
        }
        recipe_plan_release(&p);
    }
    /* a missing template directory is an error, not a crash */
    recipe_plan p;
    load("relu", &p);
    recipe_params k = { .threads = 256, .unroll = 4, .split = 1 };
    strbuf cu = STRBUF_INIT, err = STRBUF_INIT;
    assert_int_equal(recipe_generate(&p, &k, "/nonexistent", &cu, &err), -1);
    assert_non_null(strstr(err.buf, "cannot read recipe template"));
    strbuf_release(&cu);
    strbuf_release(&err);
    recipe_plan_release(&p);
}

static void test_variants_pruned(void **state)
{
    (void)state;
    recipe_hw hw;
    recipe_hw_default(&hw);
    recipe_plan p;
    recipe_params v[64];
    /* few long rows: split over CTAs */
    load("amax_last_keep", &p);
    int n = recipe_variants(&p, &hw, v, 64);
    assert_true(n > 0 && v[0].split > 1);
    recipe_plan_release(&p);
    /* short fp16 rows: a warp a row, the row cached in registers for log-softmax */
    load("logsoftmax_module_fp16", &p);
    n = recipe_variants(&p, &hw, v, 64);
    assert_true(n > 0 && v[0].row_threads == 32 && v[0].cache > 0);
    recipe_plan_release(&p);
    /* softmax rows of 393216 floats on sm_90: a cluster of 8 CTAs holds the row first */
    load("softmax", &p);
    n = recipe_variants(&p, &hw, v, 64);
    assert_true(n > 1 && v[0].cluster == 8 && v[0].threads == 512 && v[0].cache == 24);
    hw.sm = 80; /* no clusters before sm_90 */
    n = recipe_variants(&p, &hw, v, 64);
    for (int i = 0; i < n; i++)
        assert_int_equal(v[i].cluster, 0);
    recipe_plan_release(&p);
    hw.sm = 90;
    /* a smaller SM thread limit drops 1024-thread CTAs */
    hw.max_threads_per_sm = 512;
    load("softmax", &p);
    n = recipe_variants(&p, &hw, v, 64);
    for (int i = 0; i < n; i++)
        assert_true(v[i].threads <= 512);
    recipe_plan_release(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_expectations),
        cmocka_unit_test(test_pointwise_math),
        cmocka_unit_test(test_reduce_plans),
        cmocka_unit_test(test_input_kinds),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_generate_all),
        cmocka_unit_test(test_variants_pruned),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
