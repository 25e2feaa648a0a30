/*
 * recipe_gen.c: from a recognised plan and a parameter set to a complete candidate .cu,
 * and the parameter sets worth trying (recipe_variants). See recipe.h.
 *
 * Generation is textual: the template's `// recipe:params` line becomes a block of CGR_*
 * macros (types, shapes, the tuning parameters, the X-macro list of inputs) and the
 * expression functions cgr_expr / cgr_pro / cgr_epi printed as straight-line code, one
 * `const float tN` per DAG node; `#include "X" // recipe:inline` lines are replaced by
 * the file, so the result is one self-contained source as the ABI wants, and `#include
 * "X" // recipe:inline-if M` lines likewise where the parameters define M, else dropped
 * (so that a kernel's source, its build cache key, does not change with a header it does
 * not use: conv_fold.cuh's fold before a convolution, CGR_PREFOLD).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "recipe.h"
#include "recipe_norm.h"
#include "recipe_rowloss.h"
#include "recipe_gemm.h"
#include "recipe_conv.h"
#include "recipe_pool.h"
#include "recipe_stage.h"
#include "util.h"

/* ================================================================== types */

static const char *ctype_of(const char *dtype)
{
    if (!strcmp(dtype, "float16")) return "__half";
    if (!strcmp(dtype, "bfloat16")) return "__nv_bfloat16";
    if (!strcmp(dtype, "int64")) return "int64_t";
    if (!strcmp(dtype, "bool")) return "bool";
    return "float";
}

static const char *cgdtype_of(const char *dtype)
{
    if (!strcmp(dtype, "float16")) return "CG_FLOAT16";
    if (!strcmp(dtype, "bfloat16")) return "CG_BFLOAT16";
    if (!strcmp(dtype, "int64")) return "CG_INT64";
    if (!strcmp(dtype, "bool")) return "CG_BOOL";
    return "CG_FLOAT32";
}

static int elem_bytes(const char *dtype)
{
    return (!strcmp(dtype, "float16") || !strcmp(dtype, "bfloat16")) ? 2 : 4;
}

/* ================================================================== expressions */

static void add_float(strbuf *sb, double v)
{
    if (isinf(v)) {
        strbuf_adds(sb, v > 0 ? "INFINITY" : "(-INFINITY)");
        return;
    }
    if (isnan(v)) {
        strbuf_adds(sb, "NAN");
        return;
    }
    char buf[64];
    snprintf(buf, sizeof buf, "%.9g", v);
    strbuf_addc(sb, '(');
    strbuf_adds(sb, buf);
    if (!strpbrk(buf, ".en"))
        strbuf_adds(sb, ".0");
    strbuf_adds(sb, "f)");
}

/* How node n is referred to: its temporary, the literal of a constant, or (subst[n] >= 0)
 * the x[] entry holding its value. */
static void operand(const recipe_plan *p, const int *subst, int n, char *buf, size_t size)
{
    if (n >= 0 && subst && subst[n] >= 0) {
        snprintf(buf, size, "x[%d]", subst[n]);
    } else if (n >= 0 && p->nodes[n].op == RX_CONST) {
        strbuf lit = STRBUF_INIT;
        add_float(&lit, p->nodes[n].p0);
        snprintf(buf, size, "%s", lit.buf);
        strbuf_release(&lit);
    } else {
        snprintf(buf, size, "t%d", n);
    }
}

typedef struct emit_ctx {
    const recipe_plan *p;
    const int *subst; /* a node's x[] index, or -1; NULL: none */
    int root;
    bool fast;
    bool *done;
    strbuf *sb;
} emit_ctx;

static void emit_node(emit_ctx *c, int i);

/* One statement per reachable node, operands first (post-order); a node read from x[]
 * (subst) is not computed, nor what only it needs; with fast, exp and log as the fast
 * intrinsics. */
static void emit_expr_with(const recipe_plan *p, int root, const char *fn, const char *params, bool fast,
                           const int *subst, strbuf *sb)
{
    emit_ctx c = { p, subst, root, fast, xcalloc((size_t)p->n_nodes, 1), sb };
    strbuf_addf(sb, "__device__ __forceinline__ float %s(%s)\n{\n", fn, params);
    emit_node(&c, root);
    strbuf_addf(sb, "    (void)%s;\n    return t%d;\n}\n", strstr(params, "*x") ? "x" : "r", root);
    free(c.done);
}

static void emit_expr(const recipe_plan *p, int root, const char *fn, const char *params, bool fast, strbuf *sb)
{
    emit_expr_with(p, root, fn, params, fast, NULL, sb);
}

static void emit_node(emit_ctx *c, int i)
{
    const recipe_plan *p = c->p;
    strbuf *sb = c->sb;
    const bool fast = c->fast;
    if (i < 0 || c->done[i])
        return;
    c->done[i] = true;
    if (i != c->root && c->subst && c->subst[i] >= 0)
        return; /* read from x[] where it is used */
    emit_node(c, p->nodes[i].a);
    emit_node(c, p->nodes[i].b);
    const rx_node *x = &p->nodes[i];
    if (x->op == RX_CONST && i != c->root)
        return; /* constants are written where they are used */
    char a[64], b[64];
    operand(p, c->subst, x->a, a, sizeof a);
    operand(p, c->subst, x->b, b, sizeof b);
    strbuf_addf(sb, "    const float t%d = ", i);
    switch (x->op) {
    case RX_INPUT: strbuf_addf(sb, "x[%d]", x->input); break;
    case RX_CONST: add_float(sb, x->p0); break;
    case RX_ACC: strbuf_adds(sb, "r"); break;
    case RX_NEG: strbuf_addf(sb, "-%s", a); break;
    case RX_ABS: strbuf_addf(sb, "fabsf(%s)", a); break;
    case RX_EXP: strbuf_addf(sb, fast ? "__expf(%s)" : "expf(%s)", a); break;
    case RX_LOG: strbuf_addf(sb, fast ? "__logf(%s)" : "logf(%s)", a); break;
    case RX_SQRT: strbuf_addf(sb, "sqrtf(%s)", a); break;
    case RX_RSQRT: strbuf_addf(sb, "1.f / sqrtf(%s)", a); break;
    case RX_TANH: strbuf_addf(sb, "tanhf(%s)", a); break;
    case RX_SIGMOID: strbuf_addf(sb, "cgr::sigmoid(%s)", a); break;
    case RX_RELU: strbuf_addf(sb, "cgr::relu(%s)", a); break;
    case RX_ERF: strbuf_addf(sb, "erff(%s)", a); break;
    case RX_SIN: strbuf_addf(sb, "sinf(%s)", a); break;
    case RX_COS: strbuf_addf(sb, "cosf(%s)", a); break;
    case RX_RECIP: strbuf_addf(sb, "1.f / %s", a); break;
    case RX_LOG1P: strbuf_addf(sb, "log1pf(%s)", a); break;
    case RX_EXPM1: strbuf_addf(sb, "expm1f(%s)", a); break;
    case RX_SQUARE: strbuf_addf(sb, "%s * %s", a, a); break;
    case RX_SELU: strbuf_addf(sb, "cgr::selu(%s)", a); break;
    case RX_SILU: strbuf_addf(sb, "cgr::silu(%s)", a); break;
    case RX_MISH: strbuf_addf(sb, "cgr::mish(%s)", a); break;
    case RX_SOFTSIGN: strbuf_addf(sb, "cgr::softsign(%s)", a); break;
    case RX_HARDSIGMOID: strbuf_addf(sb, "cgr::hardsigmoid(%s)", a); break;
    case RX_HARDSWISH: strbuf_addf(sb, "cgr::hardswish(%s)", a); break;
    case RX_LOGSIGMOID: strbuf_addf(sb, "cgr::logsigmoid(%s)", a); break;
    case RX_GELU: strbuf_addf(sb, "cgr::gelu(%s)", a); break;
    case RX_GELU_TANH: strbuf_addf(sb, "cgr::gelu_tanh(%s)", a); break;
    case RX_LEAKY_RELU:
        strbuf_addf(sb, "cgr::leaky_relu(%s, ", a);
        add_float(sb, x->p0);
        strbuf_addc(sb, ')');
        break;
    case RX_ELU:
        strbuf_addf(sb, "cgr::elu(%s, ", a);
        add_float(sb, x->p0);
        strbuf_addc(sb, ')');
        break;
    case RX_CLAMP:
    case RX_SOFTPLUS:
        strbuf_addf(sb, "cgr::%s(%s, ", x->op == RX_CLAMP ? "clamp" : "softplus", a);
        add_float(sb, x->p0);
        strbuf_adds(sb, ", ");
        add_float(sb, x->p1);
        strbuf_addc(sb, ')');
        break;
    case RX_ADD: strbuf_addf(sb, "%s + %s", a, b); break;
    case RX_SUB: strbuf_addf(sb, "%s - %s", a, b); break;
    case RX_MUL: strbuf_addf(sb, "%s * %s", a, b); break;
    case RX_DIV: strbuf_addf(sb, "%s / %s", a, b); break;
    case RX_POW: {
        const rx_node *e = &p->nodes[x->b];
        if (e->op == RX_CONST && e->p0 == 2.0)
            strbuf_addf(sb, "%s * %s", a, a);
        else if (e->op == RX_CONST && e->p0 == 3.0)
            strbuf_addf(sb, "%s * %s * %s", a, a, a);
        else
            strbuf_addf(sb, "powf(%s, %s)", a, b);
        break;
    }
    case RX_MAX: strbuf_addf(sb, "cgr::maximum(%s, %s)", a, b); break;
    case RX_MIN: strbuf_addf(sb, "cgr::minimum(%s, %s)", a, b); break;
    default: BUG("emit_expr: op %d", (int)x->op);
    }
    strbuf_adds(sb, ";\n");
}

void recipe_emit_expr(const recipe_plan *p, int root, const char *fn, const char *params, strbuf *sb)
{
    emit_expr(p, root, fn, params, false, sb);
}

void recipe_emit_expr_subst(const recipe_plan *p, int root, const char *fn, const char *params, const int *subst,
                            strbuf *sb)
{
    emit_expr_with(p, root, fn, params, false, subst, sb);
}

/* Whether the expression under root reads an input. */
static bool expr_reads_input(const recipe_plan *p, int root)
{
    if (root < 0)
        return false;
    const rx_node *x = &p->nodes[root];
    return x->op == RX_INPUT || expr_reads_input(p, x->a) || expr_reads_input(p, x->b);
}

/* Whether the expression under root takes an exp or a log. */
static bool expr_has_exp_log(const recipe_plan *p, int root)
{
    if (root < 0)
        return false;
    const rx_node *x = &p->nodes[root];
    return x->op == RX_EXP || x->op == RX_LOG || expr_has_exp_log(p, x->a) || expr_has_exp_log(p, x->b);
}

static void emit_shape(strbuf *sb, const recipe_tensor *t)
{
    strbuf_addc(sb, '{');
    for (int d = 0; d < t->ndim; d++)
        strbuf_addf(sb, "%s%lld", d ? ", " : "", (long long)t->shape[d]);
    if (t->ndim == 0)
        strbuf_adds(sb, "1");
    strbuf_addc(sb, '}');
}

static void emit_params(const recipe_plan *p, const recipe_params *k, strbuf *sb)
{
    if (p->family == RECIPE_NORM) {
        recipe_norm_emit_params(p, k, sb); /* recipe_norm.c */
        return;
    }
    if (p->family == RECIPE_ROWLOSS) {
        recipe_rowloss_emit_params(p, k, sb); /* recipe_rowloss.c */
        return;
    }
    strbuf_adds(sb, "#define CGR_GENERATED 1\n");
    const char *tdt = p->family == RECIPE_POINTWISE ? p->output.dtype : NULL;
    if (p->family == RECIPE_REDUCE) {
        for (int i = 0; i < p->n_inputs && !tdt; i++)
            if (p->kind[i] == RK_FULL)
                tdt = p->inputs[i].dtype;
        strbuf_addf(sb, "#define CGR_T %s\n#define CGR_DTYPE %s\n", ctype_of(tdt), cgdtype_of(tdt));
        strbuf_addf(sb, "#define CGR_OUT_T %s\n#define CGR_OUT_DTYPE %s\n", ctype_of(p->output.dtype),
                    cgdtype_of(p->output.dtype));
        strbuf_addf(sb, "#define CGR_RED %d  // %s\n", (int)p->red, recipe_red_name(p->red));
        strbuf_addf(sb, "#define CGR_OUTER %lld\n#define CGR_R %lld\n#define CGR_INNER %lld\n",
                    (long long)p->outer, (long long)p->r, (long long)p->inner);
        strbuf_addf(sb, "#define CGR_THREADS %d\n#define CGR_ROW_THREADS %d\n#define CGR_SPLIT %d\n"
                        "#define CGR_CACHE %d\n", k->threads, k->row_threads, k->split, k->cache);
        if (k->cluster > 0)
            strbuf_addf(sb, "#define CGR_CLUSTER %d\n#define CGR_VECS %d\n#define CGR_MIN_BLOCKS %d\n"
                            "#define CGR_PREFETCH %d\n",
                        k->cluster, k->cache, k->min_blocks > 1 ? k->min_blocks : 1, k->prefetch ? 1 : 0);
        strbuf_addf(sb, "#define CGR_OP_NDIM %d\n#define CGR_OP_SHAPE ", p->operand.ndim);
        emit_shape(sb, &p->operand);
        strbuf_addc(sb, '\n');
    } else if (p->family == RECIPE_SCAN) {
        strbuf_addf(sb, "#define CGR_OUT_T %s\n#define CGR_OUT_DTYPE %s\n", ctype_of(p->output.dtype),
                    cgdtype_of(p->output.dtype));
        strbuf_addf(sb, "#define CGR_SCAN_OP %d  // %s\n#define CGR_REVERSE %d\n#define CGR_EXCLUSIVE %d\n",
                    p->red == RED_CUMPROD ? 1 : 0, recipe_red_name(p->red), p->scan_reverse ? 1 : 0,
                    p->scan_exclusive ? 1 : 0);
        strbuf_addf(sb, "#define CGR_EPI_READS %d\n", p->epi >= 0 && expr_reads_input(p, p->epi) ? 1 : 0);
        strbuf_addf(sb, "#define CGR_OUTER %lld\n#define CGR_R %lld\n#define CGR_INNER %lld\n",
                    (long long)p->outer, (long long)p->r, (long long)p->inner);
        strbuf_addf(sb, "#define CGR_THREADS %d\n#define CGR_UNROLL %d\n#define CGR_SPLIT %d\n", k->threads, k->unroll,
                    k->split > 1 ? k->split : 1);
    } else if (p->family == RECIPE_POOL) {
        for (int i = 0; i < p->n_inputs && !tdt; i++)
            if (p->kind[i] == RK_FULL)
                tdt = p->inputs[i].dtype;
        strbuf_addf(sb, "#define CGR_T %s\n#define CGR_DTYPE %s\n", ctype_of(tdt), cgdtype_of(tdt));
        recipe_pool_emit(p, k, sb);
    } else {
        strbuf_addf(sb, "#define CGR_T %s\n#define CGR_OUT_DTYPE %s\n", ctype_of(tdt), cgdtype_of(tdt));
        strbuf_addf(sb, "#define CGR_THREADS %d\n#define CGR_UNROLL %d\n", k->threads, k->unroll);
    }
    static const char *kind_names[] = { "CGR_UNUSED", "CGR_FULL", "CGR_SCALAR", "CGR_BCAST" };
    strbuf_addf(sb, "#define CGR_NIN %d\n#define CGR_INPUTS(X)", p->n_inputs);
    for (int i = 0; i < p->n_inputs; i++) {
        const char *dt = p->kind[i] == RK_UNUSED ? "float32" : p->inputs[i].dtype;
        strbuf_addf(sb, " \\\n    X(%d, %s, %s, %s)", i, ctype_of(dt), kind_names[p->kind[i]], cgdtype_of(dt));
    }
    strbuf_adds(sb, "\n#define CGR_IN_NDIMS {");
    for (int i = 0; i < p->n_inputs; i++)
        strbuf_addf(sb, "%s%d", i ? ", " : "", p->inputs[i].ndim);
    strbuf_adds(sb, "}\n#define CGR_IN_SHAPES {");
    for (int i = 0; i < p->n_inputs; i++) {
        strbuf_adds(sb, i ? ", " : "");
        emit_shape(sb, &p->inputs[i]);
    }
    strbuf_addf(sb, "}\n#define CGR_OUT_NDIM %d\n#define CGR_OUT_SHAPE ", p->output.ndim);
    emit_shape(sb, &p->output);
    strbuf_addc(sb, '\n');
    if (p->family == RECIPE_POINTWISE) {
        strbuf_adds(sb, "#define CGR_IN_UNSQ {");
        for (int i = 0; i < p->n_inputs; i++)
            strbuf_addf(sb, "%s%uu", i ? ", " : "", p->in_unsq[i]);
        strbuf_adds(sb, "}\n");
        emit_expr(p, p->root, "cgr_expr", "const float *x", k->fast, sb);
    } else {
        emit_expr(p, p->root, "cgr_pro", "const float *x", k->fast, sb);
        bool scan = p->family == RECIPE_SCAN; /* its epilogue may read the inputs */
        if (p->epi >= 0)
            emit_expr(p, p->epi, "cgr_epi", scan ? "float r, const float *x" : "float r", k->fast, sb);
        else if (scan)
            strbuf_adds(sb, "__device__ __forceinline__ float cgr_epi(float r, const float *x) { (void)x; return r; }\n");
        else
            strbuf_adds(sb, "__device__ __forceinline__ float cgr_epi(float r) { return r; }\n");
    }
}

/* ================================================================== templates */

const char *recipe_dir(void)
{
    static char *dir;
    if (!dir)
        dir = xasprintf("%s/recipes", cg_source_dir());
    return dir;
}

/* Whether the source generated so far has a line "#define M ..." (M: the macro's name, up
 * to the first blank of m). */
static bool defines_macro(const strbuf *cu, const char *m)
{
    size_t n = strcspn(m, " \t\r\n");
    for (const char *p = cu->buf; p && (p = strstr(p, "#define ")) != NULL; p += 8) {
        const char *name = p + 8;
        if ((p == cu->buf || p[-1] == '\n') && !strncmp(name, m, n) && (name[n] == ' ' || name[n] == '\n'))
            return true;
    }
    return false;
}

int recipe_generate(const recipe_plan *p, const recipe_params *k, const char *recipes_dir,
                    strbuf *cu, strbuf *err)
{
    if (p->family == RECIPE_NONE) {
        strbuf_adds(err, "no plan: the spec was not recognised");
        return -1;
    }
    if (p->family == RECIPE_STAGED || (k->staged && p->staged)) /* a GEMM's: recipe_staged_rows_apart */
        return recipe_staged_generate(p, k, recipes_dir, cu, err);
    const char *tmpl = p->family == RECIPE_POINTWISE ? "pointwise.cu"
                     : p->family == RECIPE_NORM ? "norm.cu"
                     : p->family == RECIPE_GEMM ? recipe_gemm_template(p, k)
                     : p->family == RECIPE_CONV ? recipe_conv_template(p, k)
                     : p->family == RECIPE_POOL ? "pool.cu"
                     : p->family == RECIPE_ROWLOSS ? "rowloss.cu"
                     : p->family == RECIPE_SCAN ? "scan.cu"
                     : k->cluster > 0 ? "softmax_cluster.cu" : "reduce.cu";
    char *path = xasprintf("%s/%s", recipes_dir, tmpl);
    strbuf text = STRBUF_INIT;
    if (read_file(path, &text, 1 << 20) < 0) {
        strbuf_addf(err, "cannot read recipe template '%s': %s", path, strerror(errno));
        free(path);
        strbuf_release(&text);
        return -1;
    }
    free(path);

    strbuf plan = STRBUF_INIT, par = STRBUF_INIT;
    recipe_describe(p, &plan);
    recipe_params_format(k, &par);
    strbuf_addf(cu, "// Generated by cutegen's built-in proposer (src/recipe_gen.c) from recipes/%s.\n"
                    "// Parameters: %s\n", tmpl, par.buf);
    for (char *line = plan.buf, *nl; line && *line; line = nl ? nl + 1 : NULL) {
        nl = strchr(line, '\n');
        strbuf_adds(cu, "// ");
        strbuf_add(cu, line, nl ? (size_t)(nl - line) : strlen(line));
        strbuf_addc(cu, '\n');
    }
    strbuf_release(&plan);
    strbuf_release(&par);

    int rc = 0;
    for (char *line = text.buf, *nl; line && *line && rc == 0; line = nl ? nl + 1 : NULL) {
        nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        char *l = xstrndup(line, len);
        if (!strcmp(l, "// recipe:params")) {
            strbuf_adds(cu, "// ---- recipe parameters (generated) ----\n");
            if (p->family == RECIPE_GEMM)
                recipe_gemm_emit_params(p, k, cu);
            else if (p->family == RECIPE_CONV)
                recipe_conv_emit_params(p, k, cu);
            else
                emit_params(p, k, cu);
            strbuf_adds(cu, "// ---- end of recipe parameters ----\n");
        } else if (str_starts_with(l, "#include \"") && strstr(l, "// recipe:inline")) {
            char *name = l + strlen("#include \"");
            char *q = strchr(name, '"');
            if (q)
                *q = '\0';
            const char *cond = strstr(q ? q + 1 : name, "// recipe:inline-if ");
            if (cond && !defines_macro(cu, cond + strlen("// recipe:inline-if "))) {
                strbuf_addf(cu, "// recipes/%s: not inlined (%s is not defined)\n", name,
                            cond + strlen("// recipe:inline-if "));
                free(l);
                continue;
            }
            char *ipath = xasprintf("%s/%s", recipes_dir, name);
            strbuf inc = STRBUF_INIT;
            if (read_file(ipath, &inc, 1 << 20) < 0) {
                strbuf_addf(err, "cannot read recipe include '%s': %s", ipath, strerror(errno));
                rc = -1;
            } else {
                strbuf_addf(cu, "// ---- recipes/%s (inlined) ----\n", name);
                strbuf_add(cu, inc.buf, inc.len);
                if (inc.len && inc.buf[inc.len - 1] != '\n')
                    strbuf_addc(cu, '\n');
            }
            strbuf_release(&inc);
            free(ipath);
        } else {
            strbuf_add(cu, l, len);
            strbuf_addc(cu, '\n');
        }
        free(l);
    }
    strbuf_release(&text);
    return rc;
}

/* ================================================================== variants */

void recipe_hw_default(recipe_hw *hw)
{
    hw->sms = 132;
    hw->max_threads_per_sm = 2048;
    hw->regs_per_thread_max = 255;
    hw->sm = 90;
    hw->smem_per_block = 232448;
    hw->smem_per_sm = 233472;
    hw->regs_per_sm = 65536;
    hw->l2_bytes = 62914560; /* the H200's device attribute */
}

void recipe_hw_from_gpu(const gpu_facts *g, recipe_hw *hw)
{
    recipe_hw_default(hw);
    if (!g)
        return;
    if (g->sms > 0)
        hw->sms = g->sms;
    if (g->max_threads_per_sm > 0)
        hw->max_threads_per_sm = g->max_threads_per_sm;
    if (g->cc_major > 0)
        hw->sm = g->cc_major * 10 + g->cc_minor;
    if (g->smem_per_block_optin > 0)
        hw->smem_per_block = g->smem_per_block_optin;
    if (g->smem_per_sm > 0)
        hw->smem_per_sm = g->smem_per_sm;
    if (g->regs_per_sm > 0)
        hw->regs_per_sm = g->regs_per_sm;
    if (g->l2_bytes > 0)
        hw->l2_bytes = (int64_t)g->l2_bytes;
}

void recipe_params_format(const recipe_params *k, strbuf *out)
{
    if (k->staged) {
        strbuf_addf(out, "stage 0 variant %d, stage 1 variant %d", k->stage_v[0], k->stage_v[1]);
        return;
    }
    if (k->conv.as_gemm) { /* a pointwise convolution as its GEMM */
        recipe_conv_params_format(k, out);
        return;
    }
    if (k->gemm.bm || k->gemm.gemv_rows) {
        recipe_gemm_params_format(k, out);
        return;
    }
    if (k->conv.bm || k->conv.dw_threads) {
        recipe_conv_params_format(k, out);
        return;
    }
    strbuf_addf(out, "threads=%d", k->threads);
    if (k->unroll)
        strbuf_addf(out, " unroll=%d", k->unroll);
    if (k->cluster)
        strbuf_addf(out, " cluster=%d vecs=%d", k->cluster, k->cache);
    else if (k->row_threads)
        strbuf_addf(out, " row_threads=%d split=%d cache=%d", k->row_threads, k->split, k->cache);
    else if (k->split > 1)
        strbuf_addf(out, " split=%d", k->split);
    if (k->min_blocks > 1)
        strbuf_addf(out, " minb=%d", k->min_blocks);
    if (k->persist)
        strbuf_adds(out, " persistent");
    if (k->lag > 0)
        strbuf_addf(out, " lag=%d", k->lag);
    if (k->prefetch)
        strbuf_adds(out, " prefetch");
    if (k->group > 1)
        strbuf_addf(out, " group=%d", k->group);
    if (k->ring > 0)
        strbuf_addf(out, " ring=%dx%d", k->ring, k->ring_pieces);
    if (k->fast)
        strbuf_adds(out, " fast");
    if (k->pool.tx)
        strbuf_addf(out, " tx=%d cols=%d rows=%d %s", k->pool.tx, k->pool.cols, k->pool.rows,
                    k->pool.smem ? "staged" : "direct");
}

static int push(recipe_params *out, int n, int max, recipe_params k)
{
    for (int i = 0; i < n; i++)
        if (!memcmp(&out[i], &k, sizeof k))
            return n;
    if (n < max)
        out[n++] = k;
    return n;
}

static int64_t tensor_numel(const recipe_tensor *t)
{
    int64_t n = 1;
    for (int d = 0; d < t->ndim; d++)
        n *= t->shape[d];
    return n;
}

static int pow2_at_least(int64_t v)
{
    int r = 1;
    while (r < v && r < (1 << 20))
        r <<= 1;
    return r;
}

/*
 * Pruning (recipe.h's recipe_hw):
 * - threads per CTA <= 1024 and <= the SM's thread limit;
 * - registers: the values a thread holds at once (pointwise: unroll x 16 bytes per
 *   full-size input and the output; softmax: cache x 16 bytes) must stay under ~96
 *   32-bit registers, so that two CTAs of 256 threads fit an SM (65536 registers) with
 *   room for addresses and temporaries, and nothing spills at the 255 cap;
 * - grid: a pointwise tile so large that fewer than 2 CTAs per SM exist is dropped
 *   (unless it is the only one); reductions split rows over CTAs only when there are
 *   too few rows (or columns) to give every SM two CTAs' worth of work.
 */
/*
 * SCAN (recipes/scan.cu). Rows: (threads, sub-tiles a pass), a CTA a row; 256 x 4 first
 * (4096 elements a pass, four 16-byte loads in flight a thread, eight CTAs an SM); a pass
 * much longer than the row leaves threads idle, so those are dropped (the smallest kept).
 * Rows too few for two CTAs an SM, and long (16 Ki elements or more), are first split
 * into chunks (CTAs a row: about four CTAs an SM in all, chunks of 4 Ki elements at least;
 * then half as many), the unsplit forms after.
 * Columns: a thread a column, (threads, loads in flight).
 */
static int scan_variants(const recipe_plan *p, const recipe_hw *hw, recipe_params *out, int max)
{
    static const int rows[][2] = { { 256, 4 }, { 512, 2 }, { 128, 8 }, { 1024, 1 }, { 256, 2 },
                                   { 512, 4 }, { 128, 2 }, { 64, 1 } };
    static const int cols[][2] = { { 256, 4 }, { 128, 4 }, { 256, 8 }, { 128, 8 }, { 64, 4 }, { 128, 1 } };
    int n = 0;
    bool r = p->inner == 1;
    if (r && p->outer < 2 * hw->sms && p->r >= 16384) {
        int64_t split = (4 * (int64_t)hw->sms + p->outer - 1) / p->outer;
        if (split > p->r / 4096)
            split = p->r / 4096;
        if (split > 4096)
            split = 4096;
        for (int64_t sp = split; sp >= 2 && sp >= split / 2 && n < max; sp /= 2)
            n = push(out, n, max, (recipe_params){ .threads = 256, .unroll = 4, .split = (int)sp });
    }
    size_t nc = r ? sizeof rows / sizeof rows[0] : sizeof cols / sizeof cols[0];
    for (size_t c = 0; c < nc; c++) {
        int threads = r ? rows[c][0] : cols[c][0], unroll = r ? rows[c][1] : cols[c][1];
        if (threads > hw->max_threads_per_sm)
            continue;
        if (r && (int64_t)threads * 4 * unroll > 2 * p->r && threads * unroll > 64)
            continue;
        n = push(out, n, max, (recipe_params){ .threads = threads, .unroll = unroll });
    }
    if (n == 0)
        n = push(out, n, max, (recipe_params){ .threads = 64, .unroll = 1 });
    return n;
}

static int family_variants(const recipe_plan *p, const recipe_hw *hw, recipe_params *out, int max)
{
    int n = 0;
    if (p->family == RECIPE_STAGED)
        return recipe_staged_variants(p, hw, out, max); /* recipe_stage.c */
    if (p->family == RECIPE_NORM)
        return recipe_norm_variants(p, hw, out, max); /* recipe_norm.c */
    if (p->family == RECIPE_SCAN)
        return scan_variants(p, hw, out, max);
    if (p->family == RECIPE_ROWLOSS)
        return recipe_rowloss_variants(p, hw, out, max); /* recipe_rowloss.c */
    const int budget = 96;
    if (p->family == RECIPE_POOL)
        return recipe_pool_variants(p, hw, out, max);
    if (p->family == RECIPE_POINTWISE) {
        /* (threads, 16-byte vectors a thread), best first on the H200 (docs/perf.md,
         * 2026-12-02: ReLU over 1.6G floats, plain loads and stores, eager 3.04 ms):
         * 128 x 1 3.006 ms, 256 x 1 3.029, 128 x 2 3.034, 512 x 1 3.050, 1024 x 2 3.081,
         * 512 x 2 3.100, 256 x 4 3.165 */
        static const int cand[][2] = { { 128, 1 }, { 256, 1 }, { 128, 2 }, { 512, 1 },
                                       { 512, 2 }, { 256, 4 } };
        int n_full = 0;
        for (int i = 0; i < p->n_inputs; i++)
            n_full += p->kind[i] == RK_FULL;
        int64_t elems = tensor_numel(&p->output);
        int vec = 16 / elem_bytes(p->output.dtype);
        for (size_t c = 0; c < sizeof cand / sizeof cand[0]; c++) {
            recipe_params k = { .threads = cand[c][0], .unroll = cand[c][1], .split = 1 };
            if (k.threads > 1024 || k.threads > hw->max_threads_per_sm)
                continue;
            if (k.unroll * 4 * (n_full + 1) > budget)
                continue;
            int64_t tile = (int64_t)k.threads * k.unroll * vec;
            if ((elems + tile - 1) / tile < 2 * hw->sms && n > 0)
                continue;
            n = push(out, n, max, k);
        }
        if (n == 0)
            n = push(out, n, max, (recipe_params){ .threads = 128, .unroll = 1, .split = 1 });
        return n;
    }
    if (p->family == RECIPE_GEMM)
        return recipe_gemm_variants(p, hw, out, max);
    if (p->family == RECIPE_CONV)
        return recipe_conv_variants(p, hw, out, max);
    if (p->family != RECIPE_REDUCE)
        return 0;
    bool soft = p->red == RED_SOFTMAX || p->red == RED_LOGSOFTMAX;
    const char *tdt = "float32";
    for (int i = 0; i < p->n_inputs; i++)
        if (p->kind[i] == RK_FULL)
            tdt = p->inputs[i].dtype;
    int vec = 16 / elem_bytes(tdt);
    if (p->inner == 1) {
        int64_t rows = p->outer;
        /* split long rows when there are too few rows for the SMs */
        int split = 1;
        if (rows < 2 * hw->sms && p->r >= 8192) {
            split = pow2_at_least((2 * hw->sms + rows - 1) / rows);
            while (split > 1 && p->r / split < 2048)
                split >>= 1;
            /* at most 64 CTAs a row, unless that leaves SMs idle (a handful of rows, or
             * one: a reduction over every element) */
            int cap = rows * 64 < 2 * hw->sms ? 1024 : 64;
            if (split > cap)
                split = cap;
        }
        static const int block_rows[][2] = { { 256, 256 }, { 512, 512 }, { 1024, 1024 } };
        static const int warp_rows[][2] = { { 256, 32 }, { 128, 32 } };
        bool short_rows = p->r <= 2048;
        /* softmax rows too long for one CTA's registers: a cluster holds the row
         * (sm_90; 8 CTAs is the portable cluster size; at most 96 floats a thread, as
         * examples/kernels/softmax.cu, which fits 128 registers at 512 threads) */
        bool bcast = false;
        for (int i = 0; i < p->n_inputs; i++)
            bcast |= p->kind[i] == RK_BCAST;
        if (soft && !bcast && hw->sm >= 90 && p->r > 8192 && rows <= 65535) {
            /* threads, CTAs a cluster, CTAs an SM, prefetch: first a persistent cluster of 8 x
             * 512 threads that bulk-copies a CTA's chunk of its next row into shared memory
             * meanwhile, then a cluster of 16 (not portable) at 256 threads and two CTAs an
             * SM (one CTA's loads overlap the other's stores), then 8 x 512 not persistent,
             * then 16 x 256 persistent. H200 (docs/perf.md, lab rounds 10 and 15, 96 floats a
             * thread): 23_Softmax 3.270 ms, 3.515, 3.610, 3.704; 24_LogSoftmax 3.280 ms,
             * 3.470, -, 3.812 */
            static const int cl[][4] = { { 512, 8, 1, 1 }, { 256, 16, 2, 0 }, { 512, 8, 1, 0 }, { 256, 16, 2, 1 },
                                         { 512, 4, 1, 0 },  { 512, 2, 1, 0 }, { 256, 8, 1, 0 }, { 256, 4, 1, 0 },
                                         { 256, 2, 1, 0 } };
            int nfull = 0;
            for (int i = 0; i < p->n_inputs; i++)
                nfull += p->kind[i] == RK_FULL;
            for (size_t c = 0; c < sizeof cl / sizeof cl[0]; c++) {
                int64_t per = (int64_t)cl[c][1] * cl[c][0] * vec;
                if (p->r % per || cl[c][0] * cl[c][2] > hw->max_threads_per_sm)
                    continue;
                int64_t vecs = p->r / per;
                int64_t smem = (int64_t)nfull * cl[c][0] * vecs * 16; /* a CTA's prefetched chunks */
                if (vecs * vec > 96 ||
                    (cl[c][3] && (nfull < 1 || smem > hw->smem_per_block - 1024 ||
                                  smem * cl[c][2] > hw->smem_per_sm - 2048 * cl[c][2])))
                    continue;
                recipe_params k = { .threads = cl[c][0], .row_threads = cl[c][0], .split = 1, .cache = (int)vecs,
                                    .cluster = cl[c][1], .min_blocks = cl[c][2], .prefetch = cl[c][3] };
                n = push(out, n, max, k);
            }
        }
        for (int pass = 0; pass < 2; pass++) {
            bool warps = (pass == 0) == short_rows;
            const int (*cand)[2] = warps ? warp_rows : block_rows;
            int nc = warps ? 2 : 3;
            if (warps && p->r > 8192)
                continue;
            for (int c = 0; c < nc; c++) {
                for (int s = split; s >= 1; s = s > 1 ? s / 2 : 0) {
                    recipe_params k = { .threads = cand[c][0], .row_threads = cand[c][1], .split = s };
                    if (k.threads > hw->max_threads_per_sm)
                        continue;
                    if (soft && s == 1) {
                        int64_t per_thread = (p->r + (int64_t)k.row_threads * vec - 1) / ((int64_t)k.row_threads * vec);
                        if (per_thread * 4 <= budget / 2) /* the chunk fits in registers */
                            k.cache = (int)per_thread;
                    }
                    n = push(out, n, max, k);
                    if (k.cache && c == 0) {
                        k.cache = 0;
                        n = push(out, n, max, k);
                    }
                    if (s == split && split > 1)
                        continue; /* also try half the split */
                    break;
                }
            }
        }
        return n;
    }
    /* columns: first R shared by several threads of a column (interleaved rows, combined
     * in shared memory): more and shorter threads, neighbouring rows read together. On
     * the H200 (docs/perf.md, 2026-12-02) a (128, 4096, 4095) sum over dim 1 took 2.00 ms
     * at (512 threads, 8 along R) and 2.39 ms at one thread a column (eager: 2.07 ms). */
    static const int col_r[][2] = { { 512, 8 }, { 256, 4 }, { 256, 8 }, { 256, 2 } };
    for (size_t c = 0; c < sizeof col_r / sizeof col_r[0] && !soft; c++)
        if (p->r >= 8 * col_r[c][1] && col_r[c][0] <= hw->max_threads_per_sm)
            n = push(out, n, max, (recipe_params){ .threads = col_r[c][0], .row_threads = col_r[c][1], .split = 1 });
    int64_t cols = p->outer * p->inner;
    static const int threads[] = { 256, 128, 512 };
    for (size_t c = 0; c < sizeof threads / sizeof threads[0]; c++) {
        int split = 1;
        int64_t want = (int64_t)hw->sms * hw->max_threads_per_sm;
        if (!soft && cols < want && p->r >= 256) {
            split = pow2_at_least((want + cols - 1) / cols);
            while (split > 1 && p->r / split < 64)
                split >>= 1;
        }
        n = push(out, n, max, (recipe_params){ .threads = threads[c], .row_threads = 1, .split = split });
        if (split > 1)
            n = push(out, n, max, (recipe_params){ .threads = threads[c], .row_threads = 1, .split = 1 });
    }
    return n;
}

/*
 * The parameter sets of p's family, best first. A pointwise expression or a reduction's
 * operand that takes exp or log also gets the first set again with the fast intrinsics,
 * second (H200, docs/perf.md 2026-12-03: 98_KLDivLoss, two logf an element); the judge
 * keeps it only where it passes the tolerance.
 */
double recipe_error_shrink(const recipe_plan *p, double shrink)
{
    switch (p->family) {
    case RECIPE_STAGED: /* stage 0, then stage 1 (none when the output is stage 0's viewed) */
        shrink = recipe_error_shrink(&p->staged->stage[0], shrink);
        return p->staged->out_view ? shrink : recipe_error_shrink(&p->staged->stage[1], shrink);
    case RECIPE_NORM:
        return 1.0;
    case RECIPE_REDUCE:
        if ((p->red == RED_MEAN || p->red == RED_LOGSUMEXP) && p->r > 1)
            return shrink * sqrt((double)p->r);
        return shrink;
    case RECIPE_POOL:
        if (!p->pool.is_max) {
            double window = 1; /* dims not pooled hold a window of 1 */
            for (int d = 0; d < 3; d++)
                window *= p->pool.adaptive && p->pool.out[d] > 0 ? (double)p->pool.in[d] / (double)p->pool.out[d]
                                                                 : (double)p->pool.k[d];
            return shrink * sqrt(window);
        }
        return shrink;
    case RECIPE_CONV: /* a mean (2) or logsumexp (5) over the channels in the epilogue */
        if (p->conv.chanred == 2 || p->conv.chanred == 5)
            return shrink * sqrt((double)p->conv.cout);
        return shrink;
    case RECIPE_GEMM: /* over the product's rows; not where the rows' sum comes first as A @
                         (the sum of B's rows): exact, and memory-bound */
        if (p->root >= 0 && (p->red == RED_MEAN || p->red == RED_LOGSUMEXP) && !recipe_gemm_sumb(p))
            return shrink * sqrt((double)p->gemm.n);
        return shrink;
    default:
        return shrink;
    }
}

static int *prec_of(recipe_params *k, bool conv)
{
    return conv && !k->conv.as_gemm ? &k->conv.prec : &k->gemm.prec;
}

/* v[0..n) with the first variant of precision prec (else variant 0 copied in it) moved to
 * position at (the last making room when the list is full); the new count. */
static int put_prec_at(recipe_params *v, int n, int max, bool conv, int prec, int at)
{
    int i = 0, base = 0;
    while (i < n && *prec_of(&v[i], conv) != prec)
        i++;
    while (base < n - 1 && v[base].gemm.stream) /* (gemm_stream.cu is 3xFP16 only) */
        base++;
    if (i == n && v[base].gemm.stream)
        return n;
    recipe_params k = i < n ? v[i] : v[base];
    *prec_of(&k, conv) = prec;
    if (i < n) {
        memmove(&v[i], &v[i + 1], (size_t)(n - i - 1) * sizeof k);
        n--;
    }
    if (n == max)
        n--;
    if (at > n)
        at = n;
    memmove(&v[at + 1], &v[at], (size_t)(n - at) * sizeof k);
    v[at] = k;
    return n + 1;
}

int recipe_precision_gambles(recipe_params *v, int n, int max, bool conv)
{
    if (n < 1 || max < 3)
        return n;
    /* 2xFP16 is gemm_tc.cu's and conv_tc.cu's (not gemm_wgmma.cu's) */
    bool f16 = *prec_of(&v[0], conv) == RECIPE_GEMM_3XF16 && (conv || (!v[0].gemm.wgmma && !v[0].gemm.stream));
    n = put_prec_at(v, n, max, conv, RECIPE_GEMM_TF32, 1);
    if (f16)
        n = put_prec_at(v, n, max, conv, RECIPE_GEMM_2XF16, 2);
    return n;
}

/* A GEMM plan with a row reduction and its staged alternative (recipe_staged_rows_apart):
 * the composite's first variant, its product alone on warpgroup MMAs, goes first where
 * that is its product's first variant (Hopper, a product long enough for the split first:
 * src/recipe_gemm.c), ahead of the fused kernels (mma.sync, the reduction in the product's
 * epilogue); elsewhere the fused ones alone (the composite's extra round trip of the
 * product and its mma.sync product would only be slower), and never ahead of a product
 * folded into a matrix-vector one (level 2 #14's sum of the rows: N times less work). */
static int rows_apart_first(const recipe_plan *p, const recipe_hw *hw, recipe_params *out, int n, int max)
{
    recipe_params st[RECIPE_MAX_VARIANTS];
    if (n > 0 && out[0].gemm.gemv_rows > 0) /* a product folded to a matrix-vector one comes first still */
        return n;
    if (recipe_staged_variants(p, hw, st, RECIPE_MAX_VARIANTS) == 0 || p->staged->n_vars[0] == 0 ||
        !p->staged->vars[0][0].gemm.wgmma || max < 1)
        return n;
    if (n == max)
        n--;
    memmove(&out[1], &out[0], (size_t)n * sizeof out[0]);
    out[0] = st[0];
    return n + 1;
}

int recipe_variants(const recipe_plan *p, const recipe_hw *hw, recipe_params *out, int max)
{
    if (max > RECIPE_MAX_VARIANTS)
        max = RECIPE_MAX_VARIANTS;
    int n = family_variants(p, hw, out, max);
    if (p->family == RECIPE_GEMM && p->staged)
        return rows_apart_first(p, hw, out, n, max);
    bool math = (p->family == RECIPE_POINTWISE || p->family == RECIPE_REDUCE) &&
                (expr_has_exp_log(p, p->root) || (p->family == RECIPE_REDUCE && expr_has_exp_log(p, p->epi)));
    if (!math || n == 0 || max < 2)
        return n;
    if (n == max)
        n--;
    memmove(&out[2], &out[1], (size_t)(n - 1) * sizeof out[0]);
    out[1] = out[0];
    out[1].fast = 1;
    return n + 1;
}

