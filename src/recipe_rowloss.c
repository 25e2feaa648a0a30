/*
 * recipe_rowloss.c: the ROWLOSS family (recipe_rowloss.h): recognises cross-entropy and
 * the triplet margin loss from the task spec's graph, lists the parameter sets of
 * recipes/rowloss.cu, and writes its parameter block.
 */
#include "recipe_rowloss.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The graph's one call: its node, and the inputs its tensor arguments name. */
struct call {
    const json_t *node;
    const char *fname;  /* cross_entropy, CrossEntropyLoss, triplet_margin_loss, TripletMarginLoss */
    bool is_module;
    const json_t *attrs; /* a module's module_attrs */
};

static int covered_not(strbuf *why, const char *fmt, const char *arg)
{
    strbuf_reset(why);
    strbuf_adds(why, "not covered: ");
    strbuf_addf(why, fmt, arg);
    return 1;
}

static const json_t *arg_at(const json_t *node, size_t pos, const char *kw)
{
    const json_t *args = json_object_get(node, "args"), *kwargs = json_object_get(node, "kwargs");
    if (json_is_array(args) && pos < json_array_size(args))
        return json_array_get(args, pos);
    return kw && json_is_object(kwargs) ? json_object_get(kwargs, kw) : NULL;
}

/* A setting: the function's argument (position pos or keyword kw), or the module's attribute. */
static const json_t *setting(const struct call *c, size_t pos, const char *kw)
{
    return c->is_module ? json_object_get(c->attrs, kw) : arg_at(c->node, pos, kw);
}

static bool is_loss_name(const char *f, bool module, int *loss)
{
    if (!strcmp(f, module ? "CrossEntropyLoss" : "cross_entropy")) {
        *loss = RL_CROSS_ENTROPY;
        return true;
    }
    if (!strcmp(f, module ? "TripletMarginLoss" : "triplet_margin_loss")) {
        *loss = RL_TRIPLET;
        return true;
    }
    return false;
}

/* The graph is placeholders, one loss call on them, and the output of that call: 0 and
 * *c filled; 2 when it is not that shape at all. */
static int find_call(const json_t *graph, struct call *c, int *loss, int *n_placeholders)
{
    const char *call_name = NULL;
    bool output_ok = false;
    *n_placeholders = 0;
    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < json_array_size(graph); i++) {
        const json_t *n = json_array_get(graph, i);
        const char *op = json_string_value(json_object_get(n, "op"));
        const char *target = json_string_value(json_object_get(n, "target"));
        const char *name = json_string_value(json_object_get(n, "name"));
        if (!op || !target || !name)
            return 2;
        if (!strcmp(op, "placeholder")) {
            ++*n_placeholders;
        } else if (!strcmp(op, "output")) {
            const json_t *a = arg_at(n, 0, NULL);
            if (json_is_array(a) && json_array_size(a) == 1)
                a = json_array_get(a, 0);
            const char *s = json_string_value(a);
            output_ok = call_name && s && s[0] == '%' && !strcmp(s + 1, call_name);
        } else if (!c->node && (!strcmp(op, "call_function") || !strcmp(op, "call_module"))) {
            bool module = !strcmp(op, "call_module");
            const char *f = module ? json_string_value(json_object_get(n, "module")) : target;
            if (!f)
                return 2;
            if (!module) {
                const char *dot = strrchr(f, '.');
                if (!dot || strncmp(f, "torch.nn.functional.", 20) || strchr(f + 20, '.'))
                    return 2;
                f = dot + 1;
            }
            if (!is_loss_name(f, module, loss))
                return 2;
            c->node = n;
            c->fname = f;
            c->is_module = module;
            c->attrs = json_object_get(n, "module_attrs");
            call_name = name;
        } else {
            return 2;
        }
    }
    return c->node && output_ok ? 0 : 2;
}

/* Tensor argument k of the call must be placeholder k (the spec's input k). */
static bool reads_inputs_in_order(const struct call *c, const json_t *graph, int n)
{
    int k = 0;
    for (size_t i = 0; i < json_array_size(graph) && k < n; i++) {
        const json_t *node = json_array_get(graph, i);
        if (strcmp(json_string_value(json_object_get(node, "op")), "placeholder"))
            continue;
        const char *want = json_string_value(json_object_get(node, "name"));
        const char *got = json_string_value(arg_at(c->node, (size_t)k, NULL));
        if (!got || got[0] != '%' || strcmp(got + 1, want))
            return false;
        k++;
    }
    return k == n;
}

static int read_settings(const struct call *c, struct recipe_rowloss *rl, strbuf *why)
{
    const bool ce = rl->loss == RL_CROSS_ENTROPY;
    if (c->is_module && !json_is_object(c->attrs))
        return covered_not(why, "%s without module_attrs in the spec (its settings are not in its repr: "
                                "recompute the spec with this cutegen's reference script, --no-cache)",
                           c->fname);
    const json_t *sa = setting(c, ce ? 3 : 7, "size_average"), *rd = setting(c, ce ? 5 : 8, "reduce");
    if ((sa && !json_is_null(sa)) || (rd && !json_is_null(rd)))
        return covered_not(why, "%s with the deprecated size_average/reduce arguments", c->fname);
    const json_t *r = setting(c, ce ? 6 : 9, "reduction");
    const char *red = r ? json_string_value(r) : "mean";
    if (!red)
        return covered_not(why, "%s with a reduction that is not a constant string", c->fname);
    rl->reduction = !strcmp(red, "none") ? 0 : !strcmp(red, "sum") ? 1 : !strcmp(red, "mean") ? 2 : -1;
    if (rl->reduction < 0)
        return covered_not(why, "%s with an unknown reduction", c->fname);
    if (ce) {
        const json_t *wt = c->is_module ? NULL : arg_at(c->node, 2, "weight");
        if (wt && !json_is_null(wt))
            return covered_not(why, "%s with class weights", c->fname);
        const json_t *ig = setting(c, 4, "ignore_index"), *ls = setting(c, 7, "label_smoothing");
        if (ig && !json_is_integer(ig))
            return covered_not(why, "%s with an ignore_index that is not a constant integer", c->fname);
        rl->ignore = ig ? json_integer_value(ig) : -100;
        if (ls && !(json_is_number(ls) && json_number_value(ls) == 0.0))
            return covered_not(why, "%s with label smoothing", c->fname);
        return 0;
    }
    const json_t *m = setting(c, 3, "margin"), *pn = setting(c, 4, "p"), *e = setting(c, 5, "eps"),
                 *sw = setting(c, 6, "swap");
    if ((m && !json_is_number(m)) || (pn && !json_is_number(pn)) || (e && !json_is_number(e)) ||
        (sw && !json_is_boolean(sw)))
        return covered_not(why, "%s with settings that are not constants", c->fname);
    rl->margin = m ? json_number_value(m) : 1.0;
    double p = pn ? json_number_value(pn) : 2.0;
    rl->eps = e ? json_number_value(e) : 1e-6;
    rl->swap = sw && json_is_true(sw);
    if (p != 1.0 && p != 2.0)
        return covered_not(why, "%s with a norm other than p = 1 or 2", c->fname);
    rl->pnorm = (int)p;
    return 0;
}

/* The inputs' and the output's shapes: (N, C) float32 logits and (N) int64 targets, or
 * three (N, D) float32 tensors; the output [N] (no reduction) or a scalar. */
static int check_shapes(recipe_plan *p, struct recipe_rowloss *rl, const char *f, strbuf *why)
{
    const recipe_tensor *x = &p->inputs[0];
    if (x->ndim != 2 || strcmp(x->dtype, "float32"))
        return covered_not(why, "%s of an input that is not a 2-D float32 (N, C) tensor", f);
    rl->rows = x->shape[0];
    rl->cols = x->shape[1];
    for (int i = 0; i < p->n_inputs; i++) {
        const recipe_tensor *t = &p->inputs[i];
        bool target = rl->loss == RL_CROSS_ENTROPY && i == 1;
        bool ok = target ? (t->ndim == 1 && t->shape[0] == rl->rows && !strcmp(t->dtype, "int64") && t->stride[0] == 1)
                         : (t->ndim == 2 && t->shape[0] == rl->rows && t->shape[1] == rl->cols &&
                            !strcmp(t->dtype, "float32") && t->stride[1] == 1 && t->stride[0] == rl->cols);
        if (!ok)
            return covered_not(why, target ? "%s with targets that are not (N) int64 class indices"
                                           : "%s of inputs that are not the same contiguous (N, C) float32 shape",
                               f);
        p->kind[i] = RK_FULL;
    }
    const recipe_tensor *o = &p->output;
    bool scalar = o->ndim == 0, rows = o->ndim == 1 && o->shape[0] == rl->rows;
    if (strcmp(o->dtype, "float32") || (rl->reduction == 0 ? !rows : !scalar))
        return covered_not(why, "%s whose output is not the float32 shape its reduction gives", f);
    return 0;
}

int recipe_rowloss_recognise(const json_t *spec, recipe_plan *p, strbuf *why)
{
    if (json_is_object(json_object_get(spec, "spec")))
        spec = json_object_get(spec, "spec"); /* the reference process's reply, as cached */
    const json_t *graph = json_object_get(spec, "graph");
    if (!json_is_array(graph) || p->n_inputs < 2)
        return 2;
    struct call c;
    int loss = 0, n_ph = 0;
    if (find_call(graph, &c, &loss, &n_ph))
        return 2;
    struct recipe_rowloss rl;
    memset(&rl, 0, sizeof rl);
    rl.loss = loss;
    int want = loss == RL_CROSS_ENTROPY ? 2 : 3;
    if (n_ph != want || p->n_inputs != want || !reads_inputs_in_order(&c, graph, want))
        return covered_not(why, "%s of other than its inputs in order (or with parameters)", c.fname);
    int rc = read_settings(&c, &rl, why);
    if (rc == 0)
        rc = check_shapes(p, &rl, c.fname, why);
    if (rc)
        return rc;
    p->family = RECIPE_ROWLOSS;
    p->rowloss = rl;
    strbuf_reset(why);
    return 0;
}

static const char *reduction_name(int r) { return r == 0 ? "none" : r == 1 ? "sum" : "mean"; }

void recipe_rowloss_summary(const recipe_plan *p, strbuf *out)
{
    const struct recipe_rowloss *rl = &p->rowloss;
    strbuf_addf(out, "row loss %s over %lld rows of %lld, %s",
                rl->loss == RL_CROSS_ENTROPY ? "cross-entropy" : "triplet margin", (long long)rl->rows,
                (long long)rl->cols, reduction_name(rl->reduction));
}

void recipe_rowloss_describe(const recipe_plan *p, strbuf *out)
{
    const struct recipe_rowloss *rl = &p->rowloss;
    strbuf_adds(out, "family: rowloss (");
    recipe_rowloss_summary(p, out);
    strbuf_adds(out, ")\n");
    if (rl->loss == RL_CROSS_ENTROPY)
        strbuf_addf(out, "loss: logsumexp(x[i]) - x[i, t[i]], rows with t == %lld ignored\n", (long long)rl->ignore);
    else
        strbuf_addf(out, "loss: max(||a - p + %g||_%d - ||a - n + %g||_%d%s + %g, 0)\n", rl->eps, rl->pnorm, rl->eps,
                    rl->pnorm, rl->swap ? " (the smaller of d(a, n), d(p, n))" : "", rl->margin);
    for (int i = 0; i < p->n_inputs; i++)
        strbuf_addf(out, "input %d: %s %s\n", i, p->inputs[i].name, p->inputs[i].dtype);
}

/*
 * (threads, threads a row, vectors in flight a thread): a warp a row first (8 rows a CTA
 * of 256), then a CTA a row; rows shorter than a warp's vectors in flight get the warp
 * forms only. Then the first again with the fast exp (cross-entropy), second.
 */
int recipe_rowloss_variants(const recipe_plan *p, const recipe_hw *hw, recipe_params *out, int max)
{
    static const int cand[][3] = { { 256, 32, 4 }, { 512, 512, 2 }, { 256, 256, 4 }, { 128, 32, 8 }, { 1024, 1024, 1 } };
    const struct recipe_rowloss *rl = &p->rowloss;
    int64_t vecs = rl->cols % 4 == 0 ? rl->cols / 4 : rl->cols;
    int n = 0;
    for (size_t c = 0; c < sizeof cand / sizeof cand[0] && n < max; c++) {
        if (cand[c][0] > hw->max_threads_per_sm || (cand[c][1] > 32 && vecs < (int64_t)cand[c][1] * cand[c][2] / 2))
            continue;
        out[n++] = (recipe_params){ .threads = cand[c][0], .row_threads = cand[c][1], .unroll = cand[c][2], .split = 1 };
        if (n == 1 && rl->loss == RL_CROSS_ENTROPY && n < max) {
            out[n] = out[0];
            out[n++].fast = 1;
        }
    }
    return n;
}

void recipe_rowloss_emit_params(const recipe_plan *p, const recipe_params *k, strbuf *sb)
{
    const struct recipe_rowloss *rl = &p->rowloss;
    strbuf_adds(sb, "#define CGR_GENERATED 1\n");
    strbuf_addf(sb, "#define CGR_LOSS %d  // %s\n", rl->loss, rl->loss == RL_CROSS_ENTROPY ? "cross-entropy" : "triplet");
    strbuf_addf(sb, "#define CGR_REDUCTION %d  // %s\n", rl->reduction, reduction_name(rl->reduction));
    strbuf_addf(sb, "#define CGR_ROWS %lld\n#define CGR_COLS %lld\n", (long long)rl->rows, (long long)rl->cols);
    strbuf_addf(sb, "#define CGR_THREADS %d\n#define CGR_ROW_THREADS %d\n#define CGR_UNROLL %d\n", k->threads,
                k->row_threads, k->unroll > 0 ? k->unroll : 1);
    strbuf_addf(sb, "#define CGR_IGNORE (%lldLL)\n", (long long)rl->ignore);
    strbuf_addf(sb, "#define CGR_MARGIN float(%.17g)\n#define CGR_EPS float(%.17g)\n#define CGR_P %d\n#define CGR_SWAP %d\n",
                rl->margin, rl->eps, rl->pnorm > 0 ? rl->pnorm : 2, rl->swap ? 1 : 0);
    strbuf_addf(sb, "#define CGR_FAST %d\n", k->fast ? 1 : 0);
}
