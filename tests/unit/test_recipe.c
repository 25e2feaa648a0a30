/* Unit tests for the recipe recogniser and generator: every fixture of tests/data/recipe/
 * is recognised as expect.txt says (covered family, or the right "not covered" reason);
 * the recognised expressions evaluate (rx_eval, the kernels' formulas in float on the
 * CPU) to hand-computed values; dims, keepdim, outer/r/inner and input kinds are right;
 * every variant of every covered fixture generates a complete source with no template
 * marker left. Pooling: the plans of the real and hand-made specs, ATen's output sizes, the
 * CPU reference on small cases computed by hand, the variants' invariants. The nvcc builds
 * of the generated kernels are tests/cli/t0700-recipe-compile.sh; the pooling kernels run
 * on the host in tests/cli/t0702-recipe-pool-emu.sh. */
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
#include "recipe_pool.h"
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
        "leaky_module", "softmax_long_prologue", "log_softmax_bf16_long",
        "real_l1_41_Max_Pooling_1D", "real_l1_42_Max_Pooling_2D", "real_l1_43_Max_Pooling_3D",
        "real_l1_44_Average_Pooling_1D", "real_l1_45_Average_Pooling_2D", "real_l1_46_Average_Pooling_3D",
        "pool_emu_max1d", "pool_emu_avg1d", "pool_fn_max2d_ceil", "pool_fn_avg2d_nopad",
        "pool_fn_avg2d_ceil_pad", "pool_fn_avg2d_divisor", "pool_builtin_max1d", "pool_pro_epi_fp16",
        "pool_epi_bf16", "pool_adaptive", "pool_global_avg", "pool_global_max", "pool_l2_avg3d_tuple",
        "pool_l2_max3d_tuple", "pool_l2_avg1d", "pool_l2_global3d" };
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
            if (p.family == RECIPE_POOL) {
                assert_non_null(strstr(cu.buf, "from recipes/pool.cu"));
                assert_non_null(strstr(cu.buf, "#define CGR_POOL_MAX "));
                assert_non_null(strstr(cu.buf, "#define CGR_SMEM "));
            }
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

/* ------------------------------------------------------------------ pooling */

static void test_pool_out_size(void **state)
{
    (void)state;
    /* floor mode: (in + 2 pad - dil (k - 1) - 1) / s + 1 */
    assert_int_equal(recipe_pool_out_size(65536, 8, 1, 4, 3, false), 65523); /* 41 */
    assert_int_equal(recipe_pool_out_size(512, 4, 1, 1, 1, false), 511);     /* 42 */
    assert_int_equal(recipe_pool_out_size(128, 3, 2, 1, 3, false), 62);      /* 43 */
    assert_int_equal(recipe_pool_out_size(65536, 8, 1, 4, 1, false), 65537); /* 44 */
    assert_int_equal(recipe_pool_out_size(2048, 11, 11, 0, 1, false), 186);  /* 45 */
    assert_int_equal(recipe_pool_out_size(256, 3, 2, 1, 1, false), 128);     /* 46 */
    /* ceil mode rounds up ... */
    assert_int_equal(recipe_pool_out_size(32, 3, 2, 1, 1, false), 16);
    assert_int_equal(recipe_pool_out_size(32, 3, 2, 1, 1, true), 17);
    assert_int_equal(recipe_pool_out_size(4, 3, 2, 0, 1, true), 2);
    assert_int_equal(recipe_pool_out_size(4, 3, 2, 0, 1, false), 1);
    /* ... but the last window must start inside the input or the left padding:
     * MaxPool1d(2, 2, padding=1, ceil_mode=True) of 5 gives 3, not 4 */
    assert_int_equal(recipe_pool_out_size(5, 2, 2, 1, 1, true), 3);
    assert_int_equal(recipe_pool_out_size(6, 2, 2, 1, 1, true), 4);
    /* equal when the stride divides */
    assert_int_equal(recipe_pool_out_size(33, 3, 2, 1, 1, true), 17);
    assert_int_equal(recipe_pool_out_size(33, 3, 2, 1, 1, false), 17);
    /* no window fits: below 1 (a negative numerator rounds towards -inf) */
    assert_true(recipe_pool_out_size(2, 5, 1, 0, 1, false) < 1);
    assert_true(recipe_pool_out_size(2, 3, 1, 0, 2, false) < 1);
}

/* A 1-D (or 2-D) pooling by hand: nc 1, sizes as given, the rest of the window 1. */
static recipe_pool pool1d(bool is_max, int64_t in, int64_t k, int64_t s, int64_t pad, int64_t dil,
                          bool ceil_mode)
{
    recipe_pool q;
    memset(&q, 0, sizeof q);
    q.is_max = is_max;
    q.nsp = 1;
    q.nc = 1;
    q.count_include_pad = true;
    for (int d = 0; d < 3; d++)
        q.k[d] = q.s[d] = q.dil[d] = q.in[d] = q.out[d] = 1;
    q.k[2] = k;
    q.s[2] = s;
    q.pad[2] = pad;
    q.dil[2] = dil;
    q.in[2] = in;
    q.ceil_mode = ceil_mode;
    q.out[2] = recipe_pool_out_size(in, k, s, pad, dil, ceil_mode);
    return q;
}

static void test_pool_reference(void **state)
{
    (void)state;
    float y[8];
    /* max, ceil mode, padding never wins: windows [-1, 0], [1, 2], [3, 4] */
    const float a[] = { 1, 3, 2, 5, 4 };
    recipe_pool q = pool1d(true, 5, 2, 2, 1, 1, true);
    assert_int_equal(q.out[2], 3);
    recipe_pool_ref(&q, a, y);
    NEAR(y[0], 1.f);
    NEAR(y[1], 3.f);
    NEAR(y[2], 5.f);
    /* all-negative input: the -inf padding still loses */
    const float neg[] = { -5, -6 };
    q = pool1d(true, 2, 3, 1, 1, 1, false);
    assert_int_equal(q.out[2], 2);
    recipe_pool_ref(&q, neg, y);
    NEAR(y[0], -5.f);
    NEAR(y[1], -5.f);
    /* NaN wins */
    const float withnan[] = { 1, NAN, 3, 4 };
    q = pool1d(true, 4, 2, 1, 0, 1, false);
    recipe_pool_ref(&q, withnan, y);
    assert_true(isnan(y[0]) && isnan(y[1]));
    NEAR(y[2], 4.f);
    /* average, ceil mode: in 4, window 3, stride 2, padding 1: windows start at -1, 1, 3;
     * the last sticks out of the padded input [-1, 5): pool_size 2, 1 inside */
    const float b[] = { 1, 2, 3, 4 };
    q = pool1d(false, 4, 3, 2, 1, 1, true);
    assert_int_equal(q.out[2], 3);
    recipe_pool_ref(&q, b, y);
    NEAR(y[0], 1.f);  /* (1 + 2) / 3: the padding counts */
    NEAR(y[1], 3.f);  /* (2 + 3 + 4) / 3 */
    NEAR(y[2], 2.f);  /* 4 / 2: clipped to the padded input */
    q.count_include_pad = false;
    recipe_pool_ref(&q, b, y);
    NEAR(y[0], 1.5f); /* (1 + 2) / 2 */
    NEAR(y[1], 3.f);
    NEAR(y[2], 4.f);  /* 4 / 1 */
    q.divisor = 3;    /* divisor_override wins over both */
    recipe_pool_ref(&q, b, y);
    NEAR(y[0], 1.f);
    NEAR(y[2], 4.f / 3.f);
    /* 2-D max with dilation 2 over 0..15 (4 x 4): taps (i, j), (i, j+2), (i+2, j), (i+2, j+2) */
    float x16[16];
    for (int i = 0; i < 16; i++)
        x16[i] = (float)i;
    q = pool1d(true, 4, 2, 1, 0, 2, false);
    q.nsp = 2;
    q.k[1] = 2;
    q.dil[1] = 2;
    q.in[1] = 4;
    q.out[1] = recipe_pool_out_size(4, 2, 1, 0, 2, false);
    assert_int_equal(q.out[1], 2);
    assert_int_equal(q.out[2], 2);
    recipe_pool_ref(&q, x16, y);
    NEAR(y[0], 10.f);
    NEAR(y[1], 11.f);
    NEAR(y[2], 14.f);
    NEAR(y[3], 15.f);
}

static void test_pool_plans(void **state)
{
    (void)state;
    recipe_plan p;
    strbuf line = STRBUF_INIT;
    /* the real spec of 41: nn.MaxPool1d from its repr */
    load("real_l1_41_Max_Pooling_1D", &p);
    assert_int_equal(p.family, RECIPE_POOL);
    const recipe_pool *q = &p.pool;
    assert_true(q->is_max);
    assert_int_equal(q->nsp, 1);
    assert_int_equal(q->nc, 64 * 192);
    assert_int_equal(q->k[2], 8);
    assert_int_equal(q->s[2], 1);
    assert_int_equal(q->pad[2], 4);
    assert_int_equal(q->dil[2], 3);
    assert_int_equal(q->out[2], 65523);
    assert_int_equal(q->k[1], 1);
    assert_int_equal(q->in[0], 1);
    assert_int_equal(p.epi, -1);
    recipe_summary(&p, &line);
    assert_string_equal(line.buf, "pool max 1-D (window 8, stride 1, padding 4, dilation 3) of x -> float32 [64, 192, 65523]");
    recipe_plan_release(&p);
    /* 43: 3-D, every dim */
    load("real_l1_43_Max_Pooling_3D", &p);
    for (int d = 0; d < 3; d++) {
        assert_int_equal(p.pool.k[d], 3);
        assert_int_equal(p.pool.dil[d], 3);
        assert_int_equal(p.pool.out[d], 62);
    }
    recipe_plan_release(&p);
    /* 44: AvgPool1d's repr has tuples and no ceil_mode / count_include_pad */
    load("real_l1_44_Average_Pooling_1D", &p);
    assert_false(p.pool.is_max);
    assert_int_equal(p.pool.k[2], 8);
    assert_int_equal(p.pool.pad[2], 4);
    assert_false(p.pool.ceil_mode);
    assert_false(p.pool.ceil_known);
    assert_true(p.pool.count_include_pad);
    assert_false(p.pool.cip_known);
    strbuf_reset(&line);
    recipe_describe(&p, &line);
    assert_non_null(strstr(line.buf, "ASSUMED"));
    recipe_plan_release(&p);
    /* 45: stride from the repr; no padding, so nothing assumed */
    load("real_l1_45_Average_Pooling_2D", &p);
    assert_int_equal(p.pool.s[1], 11);
    assert_int_equal(p.pool.out[1], 186);
    assert_int_equal(p.pool.out[2], 186);
    strbuf_reset(&line);
    recipe_describe(&p, &line);
    assert_null(strstr(line.buf, "ASSUMED"));
    recipe_plan_release(&p);
    /* 46 */
    load("real_l1_46_Average_Pooling_3D", &p);
    assert_int_equal(p.pool.out[0], 64);
    assert_int_equal(p.pool.out[1], 64);
    assert_int_equal(p.pool.out[2], 128);
    assert_int_equal(p.pool.nc, 16 * 32);
    recipe_plan_release(&p);
    /* F.max_pool2d with ceil_mode=True */
    load("pool_fn_max2d_ceil", &p);
    assert_true(p.pool.ceil_mode);
    assert_int_equal(p.pool.out[1], 17);
    assert_int_equal(p.pool.s[2], 2);
    recipe_plan_release(&p);
    /* F.avg_pool2d keywords: count_include_pad=False, ceil_mode=True */
    load("pool_fn_avg2d_nopad", &p);
    assert_false(p.pool.count_include_pad);
    assert_true(p.pool.ceil_mode);
    assert_true(p.pool.cip_known);
    recipe_plan_release(&p);
    /* positional: kernel (4, 5), stride (3, 3), padding 2, divisor_override 7 */
    load("pool_fn_avg2d_divisor", &p);
    assert_int_equal(p.pool.k[1], 4);
    assert_int_equal(p.pool.k[2], 5);
    assert_int_equal(p.pool.pad[2], 2);
    assert_int_equal(p.pool.divisor, 7);
    recipe_plan_release(&p);
    /* torch.max_pool1d(x, [3], [], [1], [2]): stride [] is the window; (C, L) input */
    load("pool_builtin_max1d", &p);
    assert_int_equal(p.pool.s[2], 3);
    assert_int_equal(p.pool.dil[2], 2);
    assert_int_equal(p.pool.nc, 24);
    recipe_plan_release(&p);
    /* prologue and epilogue around an AvgPool3d with tuples */
    load("pool_pro_epi_fp16", &p);
    assert_int_equal(p.pool.k[0], 2);
    assert_int_equal(p.pool.s[0], 1);
    assert_int_equal(p.pool.pad[0], 0);
    assert_int_equal(p.pool.pad[1], 1);
    assert_int_equal(p.kind[0], RK_FULL);
    assert_int_equal(p.kind[1], RK_FULL);
    float x[2] = { 1.f, 0.5f };
    NEAR(rx_eval(&p, p.root, x, 0.f), 2.5f);
    assert_true(p.epi >= 0);
    NEAR(rx_eval(&p, p.epi, x, 0.f), -0.5f);
    recipe_plan_release(&p);
    /* adaptive 64x48 -> 8x8: windows 8x6 */
    load("pool_adaptive", &p);
    assert_int_equal(p.family, RECIPE_POOL);
    assert_int_equal(p.pool.k[1], 8);
    assert_int_equal(p.pool.k[2], 6);
    assert_int_equal(p.pool.s[2], 6);
    recipe_plan_release(&p);
    /* global pooling becomes a reduction over the plane */
    load("pool_global_avg", &p);
    assert_int_equal(p.family, RECIPE_REDUCE);
    assert_int_equal(p.red, RED_MEAN);
    assert_int_equal(p.outer, 32 * 256);
    assert_int_equal(p.r, 196);
    assert_int_equal(p.inner, 1);
    recipe_plan_release(&p);
    load("pool_global_max", &p);
    assert_int_equal(p.family, RECIPE_REDUCE);
    assert_int_equal(p.red, RED_MAX);
    assert_int_equal(p.r, 300);
    recipe_plan_release(&p);
    load("pool_l2_global3d", &p);
    assert_int_equal(p.red, RED_MEAN);
    assert_int_equal(p.r, 9 * 10 * 11);
    recipe_plan_release(&p);
    strbuf_release(&line);
}

/* Every variant is a valid tile (tx a multiple of 32 dividing the CTA, at most 16
 * outputs a thread, no wasted columns), both code paths are offered, the SM's thread
 * limit holds. */
static void test_pool_variants(void **state)
{
    (void)state;
    recipe_hw hw;
    recipe_hw_default(&hw);
    static const char *names[] = { "real_l1_41_Max_Pooling_1D", "real_l1_42_Max_Pooling_2D",
        "real_l1_43_Max_Pooling_3D", "real_l1_44_Average_Pooling_1D", "real_l1_45_Average_Pooling_2D",
        "real_l1_46_Average_Pooling_3D", "pool_pro_epi_fp16", "pool_epi_bf16", "pool_builtin_max1d" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        recipe_plan p;
        load(names[i], &p);
        recipe_params v[64];
        int n = recipe_variants(&p, &hw, v, 64);
        assert_true(n >= 2 && n <= RECIPE_MAX_VARIANTS);
        int direct = 0, staged = 0;
        for (int k = 0; k < n; k++) {
            const struct recipe_pool_params *pp = &v[k].pool;
            assert_true(pp->tx >= 32 && pp->tx % 32 == 0 && v[k].threads % pp->tx == 0);
            assert_true(pp->cols >= 1 && pp->rows >= 1 && pp->cols * pp->rows <= 16);
            if (p.pool.out[1] == 1)
                assert_int_equal(pp->rows, 1);
            /* no column a thread is given lies beyond the row when one tile spans it */
            assert_true((int64_t)pp->tx * (pp->cols - 1) < p.pool.out[2] || pp->cols == 1);
            direct += !pp->smem;
            staged += pp->smem;
        }
        assert_true(direct >= 1);
        if (strcmp(names[i], "pool_epi_bf16"))
            assert_true(staged >= 1);
        recipe_plan_release(&p);
    }
    /* what the cost model must prefer: staged first; long 1-D rows in tiles big enough to
     * keep ~30 KB in flight an SM (8 columns a thread); overlapping 2-D/3-D windows in
     * 8-row strips (an input row read once serves 8 outputs) */
    recipe_plan p;
    recipe_params v[64];
    static const struct { const char *name; int cols, rows; } first[] = {
        { "real_l1_41_Max_Pooling_1D", 8, 1 }, { "real_l1_44_Average_Pooling_1D", 8, 1 },
        { "real_l1_42_Max_Pooling_2D", 2, 8 }, { "real_l1_43_Max_Pooling_3D", 1, 8 },
        { "real_l1_46_Average_Pooling_3D", 1, 8 }, { "real_l1_45_Average_Pooling_2D", 1, 1 },
    };
    for (size_t i = 0; i < sizeof first / sizeof first[0]; i++) {
        load(first[i].name, &p);
        assert_true(recipe_variants(&p, &hw, v, 64) > 0);
        if (!v[0].pool.smem || v[0].pool.cols != first[i].cols || v[0].pool.rows != first[i].rows)
            fail_msg("%s: variant 0 is cols %d rows %d smem %d", first[i].name, v[0].pool.cols,
                     v[0].pool.rows, v[0].pool.smem);
        recipe_plan_release(&p);
    }
    /* an SM of 128 threads: no bigger CTA */
    hw.max_threads_per_sm = 128;
    load("real_l1_42_Max_Pooling_2D", &p);
    int n = recipe_variants(&p, &hw, v, 64);
    assert_true(n >= 1);
    for (int k = 0; k < n; k++)
        assert_true(v[k].threads <= 128);
    recipe_plan_release(&p);
    /* a tiny plane (6 columns) still gets variants (the ragged-tile rule gives way) */
    recipe_hw_default(&hw);
    load("pool_pro_epi_fp16", &p);
    assert_true(recipe_variants(&p, &hw, v, 64) >= 1);
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
        cmocka_unit_test(test_pool_out_size),
        cmocka_unit_test(test_pool_reference),
        cmocka_unit_test(test_pool_plans),
        cmocka_unit_test(test_pool_variants),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
