/* Unit tests for the recipe recogniser and generator: every fixture of tests/data/recipe/
 * is recognised as expect.txt says (covered family, or the right "not covered" reason);
 * the recognised expressions evaluate (rx_eval, the kernels' formulas in float on the
 * CPU) to hand-computed values; dims, keepdim, outer/r/inner and input kinds are right;
 * every variant of every covered fixture generates a complete source with no template
 * marker left; GEMM plans have the right geometry (M, N, K, batch, operand layouts),
 * epilogue inputs and variants. The nvcc builds of the generated kernels are tests/cli/t0700-recipe-compile.sh. */
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
        if (!strcmp(want, "pointwise") || !strcmp(want, "reduce") || !strcmp(want, "gemm")) {
            if (rc != 0)
                fail_msg("%s: expected %s, got '%s'", line, want, why.buf);
            assert_int_equal(p.family, !strcmp(want, "pointwise") ? RECIPE_POINTWISE :
                                       !strcmp(want, "gemm") ? RECIPE_GEMM : RECIPE_REDUCE);
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
        "matmul", "matmul_rect", "bmm", "matvec", "matmul_large_k", "matmul_small_k", "matmul_irregular",
        "tall_skinny", "matmul_3d", "einsum_4d", "triu_matmul", "tril_matmul", "matmul_ta", "matmul_tb",
        "matmul_tab", "matmul_op_irregular", "bmm_tb_method", "vecmat_linear_row", "l2_gemm_mul_leaky",
        "l2_gemm_add_relu", "l2_matmul_scale_residual", "l2_matmul_swish_scale", "l2_matmul_div_gelu",
        "l2_matmul_sub_mul_relu", "l2_gemm_relu_div", "l2_matmul_mish_mish", "l2_gemm_scale_hardtanh_gelu",
        "l2_gemm_swish_div_clamp_tanh_clamp", "l2_matmul_add_swish_tanh_gelu_hardtanh", "linear_residual",
        "einsum_bmm_bias" };
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
    recipe_params k = { 256, 4, 0, 1, 0, 0, {0} };
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


/* The product's geometry: M, N, K, batch, which operand is K-major, leading strides. */
static void expect_gemm(const char *name, int64_t batch, int64_t m, int64_t n, int64_t k, bool a_kmajor,
                        int64_t lda, bool b_kmajor, int64_t ldb)
{
    recipe_plan p;
    load(name, &p);
    assert_int_equal(p.family, RECIPE_GEMM);
    const recipe_gemm_plan *g = &p.gemm;
    if (g->batch != batch || g->m != m || g->n != n || g->k != k || g->a_kmajor != a_kmajor ||
        g->lda != lda || g->b_kmajor != b_kmajor || g->ldb != ldb)
        fail_msg("%s: batch %lld M %lld N %lld K %lld A %s lda %lld B %s ldb %lld", name, (long long)g->batch,
                 (long long)g->m, (long long)g->n, (long long)g->k, g->a_kmajor ? "K" : "M", (long long)g->lda,
                 g->b_kmajor ? "K" : "N", (long long)g->ldb);
    recipe_plan_release(&p);
}

static void test_gemm_plans(void **state)
{
    (void)state;
    expect_gemm("matmul", 1, 4096, 4096, 4096, true, 4096, false, 4096);
    expect_gemm("matmul_rect", 1, 2048, 4096, 8192, true, 8192, false, 4096);
    expect_gemm("bmm", 128, 512, 2048, 1024, true, 1024, false, 2048);
    expect_gemm("matmul_irregular", 1, 8205, 5921, 2949, true, 2949, false, 5921);
    expect_gemm("matmul_3d", 1, 16 * 1024, 768, 2048, true, 2048, false, 768);      /* folded into M */
    expect_gemm("einsum_4d", 1, 8 * 256 * 512, 768, 256, true, 256, false, 768);    /* bijl,lk->bijk */
    expect_gemm("matmul_ta", 1, 2048, 4096, 8192, false, 2048, false, 4096);        /* A.T: M-major */
    expect_gemm("matmul_tb", 1, 2048, 4096, 8192, true, 8192, true, 8192);          /* B.T: K-major */
    expect_gemm("matmul_tab", 1, 2048, 4096, 8192, false, 2048, true, 8192);
    expect_gemm("bmm_tb_method", 4, 100, 50, 64, true, 64, true, 64);               /* transpose(-2, -1) */
    expect_gemm("l2_gemm_add_relu", 1, 1024, 8192, 8192, true, 8192, true, 8192);   /* nn.Linear: W is [N, K] */
    expect_gemm("einsum_bmm_bias", 8, 96, 72, 40, true, 40, false, 72);
    expect_gemm("matvec", 1, 2048, 1, 1048576, true, 1048576, true, 1048576);

    recipe_plan p;
    load("bmm", &p);
    assert_int_equal(p.gemm.a_bstride, 512 * 1024);
    assert_int_equal(p.gemm.b_bstride, 1024 * 2048);
    assert_int_equal(p.gemm.in[0], RG_OPERAND);
    assert_int_equal(p.epi, -1);
    recipe_plan_release(&p);
    load("matvec", &p); /* matrix-vector: the memory-bound kernel */
    assert_int_equal(p.gemm.gemv, 1);
    recipe_plan_release(&p);
    load("vecmat_linear_row", &p); /* F.linear of one row: rows of the weight */
    assert_int_equal(p.gemm.gemv, 2);
    assert_int_equal(p.gemm.m, 1);
    assert_int_equal(p.gemm.n, 1024);
    recipe_plan_release(&p);
    load("triu_matmul", &p);
    assert_int_equal(p.gemm.tri, 1);
    assert_int_equal(p.gemm.tri_diag, 0);
    recipe_plan_release(&p);
    load("tril_matmul", &p);
    assert_int_equal(p.gemm.tri, 2);
    recipe_plan_release(&p);
    load("matmul_ta", &p); /* the transpose is consumed by the product */
    assert_int_equal(p.gemm.n_views, 1);
    assert_string_equal(p.gemm.views[0], "getattr_1");
    recipe_plan_release(&p);

    /* epilogues: the Linear's bias per column, a residual in full, a scale per row */
    load("linear_residual", &p);
    assert_int_equal(p.gemm.in[0], RG_OPERAND);
    assert_int_equal(p.gemm.in[1], RG_FULL);
    assert_int_equal(p.gemm.in[2], RG_ROW);
    assert_int_equal(p.gemm.in[3], RG_OPERAND);
    assert_int_equal(p.gemm.in[4], RG_COL);
    float x[5] = { 0.f, 0.5f, 3.f, 0.f, 0.25f };
    NEAR(rx_eval(&p, p.epi, x, 1.f), (1.f + 0.25f) * 3.f + 0.5f);
    recipe_plan_release(&p);
    load("l2_gemm_mul_leaky", &p); /* leaky_relu((r + bias) * 2, 0.1) */
    assert_int_equal(p.gemm.bias, 2);
    assert_int_equal(p.gemm.in[2], RG_COL);
    float y[3] = { 0.f, 0.f, 0.25f };
    NEAR(rx_eval(&p, p.epi, y, -1.f), -0.15f);
    NEAR(rx_eval(&p, p.epi, y, 1.f), 2.5f);
    recipe_plan_release(&p);
    load("l2_matmul_scale_residual", &p); /* x.clone().detach() is the same value */
    float z[3] = { 0.f, 0.f, 1.f };
    NEAR(rx_eval(&p, p.epi, z, 1.f), 3.f);
    recipe_plan_release(&p);
    load("l2_gemm_add_relu", &p); /* Linear(bias=False), then + a parameter of the model */
    assert_int_equal(p.gemm.bias, -1);
    assert_int_equal(p.gemm.in[1], RG_COL);
    recipe_plan_release(&p);
    /* a reduction over the product's rows: the operand, then the reduced value's epilogue */
    load("kb_l2_22_lse_mish", &p); /* real spec: logsumexp(clamp(2 (x W^T + b) doubled), keepdim) */
    assert_int_equal(p.red, RED_LOGSUMEXP);
    assert_true(p.keepdim);
    assert_int_equal(p.dim, 1);
    assert_true(p.root >= 0 && p.epi >= 0);
    assert_int_equal(p.r, 8192);
    float w[3] = { 0.f, 0.f, 1.f };
    NEAR(rx_eval(&p, p.root, w, 1.f), 8.f);  /* clamp(((1 + 1) * 2) * 2, -10, 10) */
    NEAR(rx_eval(&p, p.epi, w, 1.f), 0.86509836f); /* r * mish(r) at r = 1 */
    recipe_plan_release(&p);
    load("kb_l2_99_gelu_softmax", &p);
    assert_int_equal(p.red, RED_SOFTMAX);
    assert_int_equal(p.epi, -1);
    assert_int_equal(p.gemm.in[2], RG_COL);
    recipe_plan_release(&p);
    load("mm_sum", &p); /* sum(mm(A, B), 1, keepdim): the product itself reduced */
    assert_int_equal(p.red, RED_SUM);
    assert_int_equal(p.root, -1);
    recipe_plan_release(&p);
    /* BatchNorm1d in eval mode on a 2-D product: per column, from the running statistics */
    load("kb_l2_33_scale_bn", &p); /* x W^T + b, * scale, bn: inputs x scale w b bn.{w,b,mean,var,n} */
    for (int i = 4; i <= 7; i++)
        assert_int_equal(p.gemm.in[i], RG_COL);
    assert_int_equal(p.gemm.in[8], RG_UNUSED); /* num_batches_tracked */
    float bn[9] = { 0.f, 2.f, 0.f, 0.5f, 3.f, 1.f, 0.25f, 4.f, 0.f };
    /* ((r + 0.5) * 2 - 0.25) / sqrt(4 + 1e-5) * 3 + 1 at r = 1 */
    NEAR(rx_eval(&p, p.epi, bn, 1.f), (float)((3.0 - 0.25) / sqrt(4.00001) * 3.0 + 1.0));
    recipe_plan_release(&p);
    strbuf line = STRBUF_INIT;
    load("l2_matmul_div_gelu", &p);
    recipe_summary(&p, &line);
    assert_string_equal(line.buf, "gemm Linear 1024x8192x8192, then gelu(((r + linear.bias) / 10)) -> float32 [1024, 8192]");
    recipe_plan_release(&p);
    strbuf_release(&line);
}

static void test_gemm_variants(void **state)
{
    (void)state;
    recipe_hw hw;
    recipe_hw_default(&hw);
    recipe_plan p;
    recipe_params v[RECIPE_MAX_VARIANTS];
    load("matmul", &p);
    int n = recipe_variants(&p, &hw, v, RECIPE_MAX_VARIANTS);
    assert_true(n >= 4);
    assert_int_equal(v[0].gemm.prec, RECIPE_GEMM_3XTF32);
    int tf32 = 0;
    for (int i = 0; i < n; i++) {
        const recipe_gemm_params *t = &v[i].gemm;
        assert_int_equal(v[i].threads, 32 * t->wm * t->wn);
        assert_true((t->bm + t->bn) * t->bk * 4 * t->stages <= hw.smem_per_block);
        assert_int_equal(t->bm % (16 * t->wm), 0);
        assert_int_equal(t->bn % (16 * t->wn), 0);
        assert_int_equal(t->split_k, 1);
        tf32 += t->prec == RECIPE_GEMM_TF32;
    }
    assert_true(tf32 >= 1); /* offered, flagged: the judge decides */
    strbuf s = STRBUF_INIT;
    for (int i = 0; i < n; i++)
        if (v[i].gemm.prec == RECIPE_GEMM_TF32) {
            recipe_params_format(&v[i], &s);
            break;
        }
    assert_non_null(strstr(s.buf, "TF32 accuracy"));
    strbuf_release(&s);
    /* less shared memory: every tile still fits */
    hw.smem_per_block = 64 * 1024;
    n = recipe_variants(&p, &hw, v, RECIPE_MAX_VARIANTS);
    assert_true(n >= 1);
    for (int i = 0; i < n; i++)
        assert_true((v[i].gemm.bm + v[i].gemm.bn) * v[i].gemm.bk * 4 * v[i].gemm.stages <= 64 * 1024);
    recipe_hw_default(&hw);
    recipe_plan_release(&p);
    /* M = N = 256, K = 524288: a few tiles, K split over the SMs */
    load("matmul_large_k", &p);
    n = recipe_variants(&p, &hw, v, RECIPE_MAX_VARIANTS);
    assert_true(n >= 1 && v[0].gemm.split_k > 1);
    recipe_plan_release(&p);
    /* matrix-vector: the GEMV kernel, its own template */
    load("matvec", &p);
    n = recipe_variants(&p, &hw, v, RECIPE_MAX_VARIANTS);
    assert_true(n >= 2 && v[0].gemm.gemv_rows > 0 && v[0].gemm.bm == 0);
    strbuf cu = STRBUF_INIT, err = STRBUF_INIT;
    assert_int_equal(recipe_generate(&p, &v[0], recipe_dir(), &cu, &err), 0);
    assert_non_null(strstr(cu.buf, "gemv_kernel"));
    assert_non_null(strstr(cu.buf, "#define CGR_VEC 4"));
    recipe_plan_release(&p);
    strbuf_reset(&cu);
    /* 4-byte copies where a row is not a multiple of 16 bytes */
    load("matmul_irregular", &p);
    n = recipe_variants(&p, &hw, v, RECIPE_MAX_VARIANTS);
    assert_int_equal(recipe_generate(&p, &v[0], recipe_dir(), &cu, &err), 0);
    assert_non_null(strstr(cu.buf, "#define CGR_VEC_A 1"));
    assert_non_null(strstr(cu.buf, "#define CGR_VEC_B 1"));
    recipe_plan_release(&p);
    strbuf_reset(&cu);
    load("matmul", &p);
    n = recipe_variants(&p, &hw, v, RECIPE_MAX_VARIANTS);
    assert_int_equal(recipe_generate(&p, &v[0], recipe_dir(), &cu, &err), 0);
    assert_non_null(strstr(cu.buf, "#define CGR_VEC_A 4"));
    assert_non_null(strstr(cu.buf, "gemm_kernel"));
    recipe_plan_release(&p);
    strbuf_release(&cu);
    strbuf_release(&err);
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
        cmocka_unit_test(test_gemm_plans),
        cmocka_unit_test(test_gemm_variants),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
