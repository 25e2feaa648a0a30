/*
 * recipe_stage.c: staged plans (RECIPE_STAGED): a graph no one family covers (a
 * convolution or matrix product whose result feeds a pool, a norm, a reduction), cut
 * into task specs that the ordinary families recognise, two at a time (the second may be
 * cut again), and generated as one candidate file. See recipe_stage.h.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recipe.h"
#include "recipe_conv.h"
#include "recipe_expand.h"
#include "recipe_gemm.h"
#include "recipe_stage.h"
#include "util.h"

/* ================================================================== the cut */

static const char *node_str(const json_t *node, const char *key)
{
    const char *s = json_string_value(json_object_get(node, key));
    return s ? s : "";
}

static bool is_source(const json_t *node)
{
    const char *op = node_str(node, "op");
    return !strcmp(op, "placeholder") || !strcmp(op, "get_attr");
}

/* Whether v (a node's args or kwargs, nested) refers ("%name") to a name in set. */
static bool refers_to(const json_t *v, const json_t *set)
{
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        return s[0] == '%' && json_object_get(set, s + 1) != NULL;
    }
    if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++)
            if (refers_to(json_array_get(v, i), set))
                return true;
    }
    if (json_is_object(v)) {
        const char *key;
        json_t *val;
        json_object_foreach((json_t *)v, key, val)
            if (refers_to(val, set))
                return true;
    }
    return false;
}

/* A cut after node c is valid when it computes something (not a placeholder or an
 * attribute), something follows it, and no later node reads a value computed up to it
 * but c's own. */
static bool valid_cut(const json_t *graph, size_t c)
{
    const json_t *cut = json_array_get(graph, c);
    size_t n = json_array_size(graph);
    if (is_source(cut) || !strcmp(node_str(cut, "op"), "output") || c + 2 > n)
        return false;
    json_t *before = json_object();
    for (size_t i = 0; i < c; i++) {
        const json_t *node = json_array_get(graph, i);
        if (!is_source(node))
            json_object_set_new(before, node_str(node, "name"), json_true());
    }
    bool ok = true;
    for (size_t i = c + 1; i < n && ok; i++) {
        const json_t *node = json_array_get(graph, i);
        ok = !refers_to(json_object_get(node, "args"), before) && !refers_to(json_object_get(node, "kwargs"), before);
    }
    /* the output must not be the cut itself (stage 1 would be a copy) */
    const json_t *out = json_array_get(graph, n - 1);
    const json_t *a0 = json_array_get(json_object_get(out, "args"), 0);
    if (json_is_array(a0) && json_array_size(a0) == 1)
        a0 = json_array_get(a0, 0);
    const char *r = json_string_value(a0);
    if (r && r[0] == '%' && !strcmp(r + 1, node_str(cut, "name")))
        ok = false;
    json_decref(before);
    return ok;
}

/* The spec's tensor entry of mid. */
static json_t *tensor_json(const recipe_tensor *t, const char *kind)
{
    json_t *shape = json_array(), *stride = json_array();
    int64_t n = 1;
    for (int d = 0; d < t->ndim; d++) {
        json_array_append_new(shape, json_integer(t->shape[d]));
        json_array_append_new(stride, json_integer(t->stride[d]));
        n *= t->shape[d];
    }
    return json_pack("{s:s, s:s, s:s, s:o, s:o, s:I}", "name", t->name, "kind", kind, "dtype", t->dtype,
                     "shape", shape, "stride", stride, "bytes", (json_int_t)(n * 4));
}

/* The shape of the product or convolution among graph's nodes (stage 0's), as torch
 * gives it: 0, or 1 when there is none or it is not covered. */
static int product_shape(const json_t *graph, const recipe_plan *base, recipe_tensor *mid)
{
    recipe_plan t;
    recipe_plan_init(&t);
    t.n_inputs = base->n_inputs;
    memcpy(t.inputs, base->inputs, sizeof t.inputs);
    strbuf why = STRBUF_INIT;
    int rc = recipe_conv_prescan(graph, &t, &why);
    memset(mid, 0, sizeof *mid);
    if (rc == 0 && t.family == RECIPE_CONV) {
        const recipe_conv_plan *c = &t.conv;
        mid->ndim = c->dims + 2;
        mid->shape[0] = c->n;
        mid->shape[1] = c->cout;
        for (int d = 0; d < c->dims; d++)
            mid->shape[2 + d] = c->out[3 - c->dims + d];
    } else if (rc == 0 && (rc = recipe_gemm_prescan(graph, &t, &why)) == 0 && t.family == RECIPE_GEMM) {
        mid->ndim = t.gemm.ndim;
        memcpy(mid->shape, t.gemm.shape, sizeof mid->shape);
    } else {
        rc = 1;
    }
    recipe_plan_release(&t);
    strbuf_release(&why);
    return rc || mid->ndim < 1 ? 1 : 0;
}

/* product_shape() of the graph's nodes up to and including node c. */
static bool prefix_product(const json_t *graph, size_t c, const recipe_plan *base, recipe_tensor *mid)
{
    json_t *g0 = json_array();
    for (size_t i = 0; i <= c; i++)
        json_array_append(g0, json_array_get(graph, i));
    bool product = product_shape(g0, base, mid) == 0;
    json_decref(g0);
    return product;
}

static void contiguous_mid(recipe_tensor *mid, const char *name)
{
    snprintf(mid->name, sizeof mid->name, "%s", name);
    snprintf(mid->dtype, sizeof mid->dtype, "float32");
    int64_t s = 1;
    for (int d = mid->ndim - 1; d >= 0; d--) {
        mid->stride[d] = s;
        s *= mid->shape[d];
    }
}

static json_t *output_node(const char *ref_name)
{
    char *ref = xasprintf("%%%s", ref_name);
    json_t *node = json_pack("{s:s, s:s, s:s, s:[s], s:{}}", "name", "output", "op", "output", "target", "output",
                             "args", ref, "kwargs");
    free(ref);
    return node;
}

/* Stage 0's spec: the graph up to the cut, whose value is the output (of shape mid, or
 * marked free: the family says). */
static json_t *stage0_spec(const json_t *spec, const json_t *graph, size_t c, const recipe_tensor *mid, bool free_shape)
{
    json_t *g = json_array();
    for (size_t i = 0; i <= c; i++)
        json_array_append(g, json_array_get(graph, i));
    json_array_append_new(g, output_node(mid->name));
    json_t *out = tensor_json(mid, "output");
    if (free_shape)
        json_object_set_new(out, "free", json_true());
    json_t *outs = json_array();
    json_array_append_new(outs, out);
    json_t *s = json_object();
    json_object_set(s, "inputs", json_object_get(spec, "inputs"));
    json_object_set_new(s, "outputs", outs);
    json_object_set_new(s, "graph", g);
    if (json_object_get(spec, "init_args"))
        json_object_set(s, "init_args", json_object_get(spec, "init_args"));
    return s;
}

/* Stage 1's spec: the cut's value as a new first input (and placeholder), then the
 * original inputs, placeholders and attributes, and the nodes after the cut. */
static json_t *stage1_spec(const json_t *spec, const json_t *graph, size_t c, const recipe_tensor *mid)
{
    json_t *ins = json_array();
    json_array_append_new(ins, tensor_json(mid, "input"));
    json_array_extend(ins, json_object_get(spec, "inputs"));
    json_t *g = json_array();
    json_array_append_new(g, json_pack("{s:s, s:s, s:s, s:[], s:{}}", "name", mid->name, "op", "placeholder",
                                       "target", mid->name, "args", "kwargs"));
    for (size_t i = 0; i < json_array_size(graph); i++) {
        const json_t *node = json_array_get(graph, i);
        if (i > c || is_source(node))
            json_array_append(g, (json_t *)node);
    }
    json_t *s = json_object();
    json_object_set_new(s, "inputs", ins);
    json_object_set(s, "outputs", json_object_get(spec, "outputs"));
    json_object_set_new(s, "graph", g);
    if (json_object_get(spec, "init_args"))
        json_object_set(s, "init_args", json_object_get(spec, "init_args"));
    return s;
}

static bool dag_reads(const recipe_plan *p, int n, const recipe_tensor *t)
{
    if (n < 0)
        return false;
    const rx_node *x = &p->nodes[n];
    if (x->op == RX_INPUT && x->input < p->n_inputs && !x->unsq && recipe_same_shape(&p->inputs[x->input], t))
        return true;
    return dag_reads(p, x->a, t) || dag_reads(p, x->b, t);
}

/* Whether a pointwise or norm plan's output expression reads an input of t's shape, so
 * that its value has that shape and is not something smaller broadcast up to it. */
static bool reads_tensor_of(const recipe_plan *p, const recipe_tensor *t)
{
    return (p->family == RECIPE_POINTWISE || p->family == RECIPE_NORM) && dag_reads(p, p->root, t);
}

/* A GEMM stage whose rows are reduced (sum, max, logsumexp over the product's last dim):
 * the cut's value is the reduced one, not the product broadcast back over its rows, so
 * plan is recognised again with that shape (into mid). 0, or 1 when it is not the stage's
 * value (an epilogue that broadcasts it against a full-size input: cut earlier). */
static int reduced_product(const json_t *spec, const json_t *graph, size_t c, recipe_plan *plan, recipe_tensor *mid,
                           strbuf *why)
{
    if (plan->red == RED_SOFTMAX || plan->red == RED_LOGSOFTMAX || plan->red == RED_GROUPNORM)
        return 0; /* the product's shape */
    recipe_tensor red = *mid;
    if (plan->keepdim)
        red.shape[red.ndim - 1] = 1;
    else
        red.ndim--;
    contiguous_mid(&red, mid->name);
    json_t *s0 = stage0_spec(spec, graph, c, &red, false);
    int rc = recipe_recognise_single(s0, plan, why);
    json_decref(s0);
    if (rc == 0 && (red.ndim < 1 || plan->gemm.bcast_w > 0)) {
        strbuf_reset(why);
        strbuf_adds(why, "not covered: a reduced product's value broadcast back");
        rc = 1;
    }
    if (rc == 0)
        *mid = red;
    return rc;
}

/* A convolution reduced at the cut, over its channels (pixels false; level 2's 36: the min
 * over dim 1, then a sum over the height in a later stage) or over its pixels (pixels true:
 * all of them, level 2's 42: the mean over (2, 3), then a bias and a logsumexp over the
 * channels later, recipes/conv_mean.cu folds it; or some of them, level 2's 13: the mean
 * over the depth, then a softmax over the channels later, recipes/conv_fold.cuh folds it):
 * stage 0 recognised again with those dims of the convolution's shape mid kept as 1, then
 * dropped (all the pixels first, then each proper subset). 0 (mid the reduced shape), or 1
 * (the cut's value is something else). */
static int conv_reduced(const json_t *spec, const json_t *graph, size_t c, recipe_plan *plan, recipe_tensor *mid,
                        bool pixels)
{
    strbuf why = STRBUF_INIT;
    int rc = 1, sp = mid->ndim - 2, all = (1 << sp) - 1;
    for (int set = all; rc && set > 0 && (pixels || set == all); set--) {
        for (int keep = 1; keep >= 0 && rc; keep--) {
            recipe_tensor red = *mid;
            if (pixels) {
                int k = 2;
                for (int d = 2; d < mid->ndim; d++)
                    if (!(set >> (d - 2) & 1))
                        red.shape[k++] = mid->shape[d];
                    else if (keep)
                        red.shape[k++] = 1;
                red.ndim = k;
            } else if (keep) {
                red.shape[1] = 1;
            } else {
                memmove(&red.shape[1], &red.shape[2], (size_t)(red.ndim - 2) * sizeof red.shape[0]);
                red.ndim--;
            }
            contiguous_mid(&red, mid->name);
            json_t *s0 = stage0_spec(spec, graph, c, &red, false);
            recipe_plan_release(plan);
            strbuf_reset(&why);
            rc = recipe_recognise_single(s0, plan, &why);
            json_decref(s0);
            bool folded = pixels ? (set == all ? plan->conv.spatred : plan->conv.pf_mask) : plan->conv.chanred;
            if (rc == 0 && (plan->family != RECIPE_CONV || !folded))
                rc = 1;
            if (rc == 0)
                *mid = red;
        }
    }
    strbuf_release(&why);
    return rc;
}

/* Stage 0 of the cut after node c, recognised into plan, its output (the intermediate)
 * into mid: with the product's shape when the prefix holds the convolution or matrix
 * product; else the shape a reduction, pooling or scan gives (the output marked free),
 * else the shape of the spec's input 0 (pointwise, a norm). 0, or 1 (why says why). */
static int recognise_stage0(const json_t *spec, const json_t *graph, size_t c, const recipe_plan *base,
                            recipe_plan *plan, recipe_tensor *mid, strbuf *why)
{
    const char *cut = node_str(json_array_get(graph, c), "name");
    bool product = prefix_product(graph, c, base, mid);
    if (!product) {
        *mid = base->inputs[0];
        if (mid->ndim < 1)
            return 1;
    }
    contiguous_mid(mid, cut);
    /* the shape a reduction, pooling or scan gives first: a norm or pointwise plan would
     * take a reduced value broadcast back to input 0's shape as its output (x.mean(dim,
     * keepdim=True) "is" a norm whose output is the mean broadcast), which is not the
     * cut's value; they get input 0's shape only where their output reads a tensor of it */
    strbuf other = STRBUF_INIT;
    int rc = 1;
    for (int attempt = product ? 1 : 0; attempt < 2 && rc; attempt++) {
        bool free_shape = attempt == 0;
        recipe_tensor want = *mid;
        if (free_shape)
            want.ndim = 0; /* nothing a family could take as the shape */
        json_t *s0 = stage0_spec(spec, graph, c, &want, free_shape);
        recipe_plan_release(plan);
        rc = recipe_recognise_single(s0, plan, free_shape ? &other : why);
        json_decref(s0);
        /* only these say their shape (a norm re-reads the spec and would keep the one given) */
        if (rc == 0 && free_shape &&
            (plan->output_free || (plan->family != RECIPE_REDUCE && plan->family != RECIPE_POOL &&
                                   plan->family != RECIPE_SCAN)))
            rc = 1;
        if (rc == 0 && !free_shape && !product && !reads_tensor_of(plan, mid)) {
            strbuf_reset(why);
            strbuf_adds(why, "not covered: a stage whose output does not read a tensor of its shape");
            rc = 1;
        }
        if (rc == 0 && (strcmp(plan->output.dtype, "float32") || plan->output.ndim < 1 ||
                        plan->family == RECIPE_ROWLOSS || plan->family == RECIPE_STAGED)) {
            strbuf_reset(why);
            strbuf_adds(why, "not covered: an intermediate that is not a float32 tensor");
            rc = 1;
        }
    }
    if (rc == 0 && plan->family == RECIPE_GEMM && plan->root >= 0)
        rc = reduced_product(spec, graph, c, plan, mid, why);
    if (rc && product && mid->ndim >= 3 &&
        ((mid->shape[1] > 1 && conv_reduced(spec, graph, c, plan, mid, false) == 0) ||
         conv_reduced(spec, graph, c, plan, mid, true) == 0)) {
        strbuf_reset(why);
        rc = 0;
    }
    if (rc && !product && !why->len)
        strbuf_adds(why, other.buf);
    strbuf_release(&other);
    if (rc == 0) {
        mid->ndim = plan->output.ndim;
        memcpy(mid->shape, plan->output.shape, sizeof mid->shape);
        contiguous_mid(mid, cut);
    }
    return rc;
}

static int chain(const json_t *spec, recipe_plan *p, int max_stages, bool plain_product, strbuf *first);

static int norm_dim(int64_t d, int nd)
{
    return d < 0 ? (int)(d + nd) : (int)d;
}

/* The shape of x.squeeze/unsqueeze/view/reshape/flatten(...) (also torch.* forms) of a
 * contiguous x of shape in: 0 with *out, 1 when node is no such view. */
static int view_shape(const json_t *node, const recipe_tensor *in, recipe_tensor *out)
{
    const char *op = node_str(node, "op"), *target = node_str(node, "target");
    if (strcmp(op, "call_method") && strcmp(op, "call_function"))
        return 1;
    const char *fn = strrchr(target, '.');
    fn = fn ? fn + 1 : target;
    const json_t *args = json_object_get(node, "args"), *kw = json_object_get(node, "kwargs");
    size_t na = json_array_size(args);
    int nd = in->ndim, k = 0;
    int64_t numel = 1;
    for (int d = 0; d < nd; d++)
        numel *= in->shape[d];
    *out = *in;
    if (!strcmp(fn, "squeeze")) {
        const json_t *a = na > 1 ? json_array_get(args, 1) : json_object_get(kw, "dim");
        bool drop[RECIPE_MAX_DIMS] = { false };
        if (!a) {
            for (int d = 0; d < nd; d++)
                drop[d] = in->shape[d] == 1;
        } else if (json_is_integer(a)) {
            int d = norm_dim(json_integer_value(a), nd);
            if (d < 0 || d >= nd)
                return 1;
            drop[d] = in->shape[d] == 1;
        } else {
            return 1;
        }
        for (int d = 0; d < nd; d++)
            if (!drop[d])
                out->shape[k++] = in->shape[d];
        out->ndim = k;
    } else if (!strcmp(fn, "unsqueeze")) {
        const json_t *a = na > 1 ? json_array_get(args, 1) : json_object_get(kw, "dim");
        int d = json_is_integer(a) ? norm_dim(json_integer_value(a), nd + 1) : -1;
        if (d < 0 || d > nd || nd + 1 > RECIPE_MAX_DIMS)
            return 1;
        for (int e = 0, j = 0; e < nd + 1; e++)
            out->shape[e] = e == d ? 1 : in->shape[j++];
        out->ndim = nd + 1;
    } else if (!strcmp(fn, "view") || !strcmp(fn, "reshape")) {
        if (recipe_view_args(node, numel, out->shape, &out->ndim))
            return 1;
    } else if (!strcmp(fn, "flatten")) {
        const json_t *a = na > 1 ? json_array_get(args, 1) : json_object_get(kw, "start_dim");
        const json_t *b = na > 2 ? json_array_get(args, 2) : json_object_get(kw, "end_dim");
        int s0 = a ? norm_dim(json_integer_value(a), nd) : 0, s1 = b ? norm_dim(json_integer_value(b), nd) : nd - 1;
        if ((a && !json_is_integer(a)) || (b && !json_is_integer(b)) || s0 < 0 || s1 >= nd || s0 > s1)
            return 1;
        for (int d = 0; d < nd; d++) {
            if (d <= s0 || d > s1)
                out->shape[k++] = in->shape[d];
            else
                out->shape[k - 1] *= in->shape[d];
        }
        out->ndim = k;
    } else {
        return 1;
    }
    int64_t m = 1;
    for (int d = 0; d < out->ndim; d++)
        m *= out->shape[d];
    if (m != numel || out->ndim < 1)
        return 1;
    contiguous_mid(out, node_str(node, "name"));
    return 0;
}

/* How many nodes after `after` read the value called name. */
static int readers(const json_t *graph, size_t after, const char *name)
{
    json_t *set = json_object();
    json_object_set_new(set, name, json_true());
    int n = 0;
    for (size_t i = after + 1; i < json_array_size(graph); i++) {
        const json_t *node = json_array_get(graph, i);
        n += refers_to(json_object_get(node, "args"), set) || refers_to(json_object_get(node, "kwargs"), set);
    }
    json_decref(set);
    return n;
}

/* Views of the cut's value right after it (squeeze, unsqueeze, view, reshape, flatten;
 * each the only reader of the value before it) cost nothing: the intermediate is
 * contiguous, so the next stage reads it with the viewed shape. *view gets that shape
 * and the last view's name, *last its node; *to_output whether the output is that view
 * (then no next stage: the last stage writes the output, viewed). */
static void absorb_views(const json_t *graph, size_t c, recipe_tensor *view, size_t *last, bool *to_output)
{
    size_t n = json_array_size(graph);
    *last = c;
    *to_output = false;
    for (size_t j = c + 1; j < n; j++) {
        const json_t *node = json_array_get(graph, j);
        const json_t *a0 = json_array_get(json_object_get(node, "args"), 0);
        if (!strcmp(node_str(node, "op"), "output")) {
            if (json_is_array(a0) && json_array_size(a0) == 1)
                a0 = json_array_get(a0, 0);
            const char *r = json_string_value(a0);
            *to_output = *last > c && r && r[0] == '%' && !strcmp(r + 1, view->name);
            return;
        }
        const char *r = json_string_value(a0);
        recipe_tensor v;
        if (!r || r[0] != '%' || strcmp(r + 1, view->name) || readers(graph, *last, view->name) != 1 ||
            view_shape(node, view, &v))
            return;
        *view = v;
        *last = j;
    }
}

/* Tries the cut after node c with the rest in at most `rest` stages: 0 with both
 * recognised into st, 1 not (why0 says why stage 0 was not covered, else why1 why the
 * rest was not). */
static int try_cut(const json_t *spec, const json_t *graph, size_t c, const recipe_plan *base, int rest,
                   struct recipe_staged *st, strbuf *why0, strbuf *why1)
{
    strbuf_reset(why0);
    strbuf_reset(why1);
    recipe_tensor mid;
    if (recognise_stage0(spec, graph, c, base, &st->stage[0], &mid, why0))
        return 1;
    strbuf_reset(why0);
    /* reads of the cut's shape after it (b, c, d, h, w = x.shape; x.size(1)) are now
     * constants: x.view(b, c, -1) becomes a view with numbers, absorbed below */
    json_t *folded = recipe_fold_shape_reads(graph, c, mid.name, mid.ndim, mid.shape);
    if (folded)
        graph = folded;
    recipe_tensor view = mid;
    size_t last;
    bool to_output;
    absorb_views(graph, c, &view, &last, &to_output);
    recipe_plan_release(&st->stage[1]);
    int rc = 0;
    if (to_output) { /* the output is a view of the cut's value: stage 0 writes it */
        const recipe_tensor *o = &base->output;
        bool same = o->ndim == view.ndim && !strcmp(o->dtype, "float32");
        for (int d = 0; same && d < o->ndim; d++)
            same = o->shape[d] == view.shape[d];
        if (!same) {
            strbuf_adds(why1, "not covered: the output is a view of another shape or dtype");
            rc = 1;
        }
    } else {
        json_t *s1 = stage1_spec(spec, graph, last, &view);
        rc = recipe_recognise_single(s1, &st->stage[1], why1);
        if (rc == 1 && rest > 1) {
            strbuf ignored = STRBUF_INIT;
            rc = chain(s1, &st->stage[1], rest, false, &ignored);
            strbuf_release(&ignored);
        }
        json_decref(s1);
    }
    json_decref(folded);
    if (rc == 0) {
        snprintf(st->cut, sizeof st->cut, "%s", mid.name);
        st->mid = mid;
        st->mid_in = view;
        st->out_view = to_output;
    }
    return rc ? 1 : 0;
}

static struct recipe_staged *staged_new(void)
{
    struct recipe_staged *st = xcalloc(1, sizeof *st);
    recipe_plan_init(&st->stage[0]);
    recipe_plan_init(&st->stage[1]);
    return st;
}

/* Stage 0 is a matrix product with no reduction over its rows (plain_product's cuts). */
static bool plain_product_stage(const struct recipe_staged *st)
{
    return !st->out_view && st->stage[0].family == RECIPE_GEMM && st->stage[0].root < 0;
}

/* spec as a chain of 2 .. max_stages stages into p (its inputs and output read here):
 * the fewest stages, then the latest cut (the most fused into the earlier stage); with
 * plain_product, only cuts whose stage 0 is a matrix product with no row reduction. 0,
 * or 1 with first holding, when empty before, what the first cut after the convolution
 * or matrix product lacked. */
static int chain(const json_t *spec, recipe_plan *p, int max_stages, bool plain_product, strbuf *first)
{
    const json_t *graph = json_object_get(spec, "graph"), *ins = json_object_get(spec, "inputs");
    const json_t *outs = json_object_get(spec, "outputs");
    size_t n = json_array_size(graph);
    if (!json_is_array(graph) || json_array_size(ins) + 1 > RECIPE_MAX_INPUTS || json_array_size(outs) != 1)
        return 1;
    recipe_plan base;
    recipe_plan_init(&base);
    base.n_inputs = (int)json_array_size(ins);
    strbuf why0 = STRBUF_INIT, why1 = STRBUF_INIT;
    int rc = 0;
    for (int i = 0; i < base.n_inputs && rc == 0; i++)
        rc = recipe_read_tensor(json_array_get(ins, (size_t)i), &base.inputs[i], &why0);
    if (rc == 0)
        rc = recipe_read_tensor(json_array_get(outs, 0), &base.output, &why0);
    struct recipe_staged *st = staged_new(), *found = NULL;
    for (int k = 2; rc == 0 && k <= max_stages && !found; k++) {
        for (size_t c = n; c-- > 0 && !found;) {
            if (!valid_cut(graph, c))
                continue;
            if (try_cut(spec, graph, c, &base, k - 1, st, &why0, &why1) == 0) {
                if (plain_product && !plain_product_stage(st))
                    continue;
                found = st;
                break;
            }
            /* the 2-stage cut closest after the product: what it lacked */
            recipe_tensor probe;
            if (k == 2 && prefix_product(graph, c, &base, &probe)) {
                strbuf_reset(first);
                strbuf_addf(first, "; in two stages cut after '%s', the %s stage is %s",
                            node_str(json_array_get(graph, c), "name"), why0.len ? "first" : "second",
                            why0.len ? why0.buf : why1.buf);
            }
        }
    }
    strbuf_release(&why0);
    strbuf_release(&why1);
    if (!found) {
        recipe_staged_free(st);
        return 1;
    }
    recipe_plan_release(p);
    p->n_inputs = base.n_inputs;
    memcpy(p->inputs, base.inputs, sizeof p->inputs);
    p->output = base.output;
    p->family = RECIPE_STAGED;
    p->staged = found;
    return 0;
}

/* At most this many stages: each more is another round trip of an intermediate. */
#define MAX_STAGES 5

/* chain() over spec (a task spec, or an object holding it under "spec"): its stages, or
 * NULL with first as chain() leaves it. */
static struct recipe_staged *chained_stages(const json_t *spec, bool plain_product, strbuf *first)
{
    if (json_object_get(spec, "spec"))
        spec = json_object_get(spec, "spec");
    recipe_plan chained;
    recipe_plan_init(&chained);
    struct recipe_staged *st = NULL;
    if (chain(spec, &chained, MAX_STAGES, plain_product, first) == 0) {
        st = chained.staged;
        chained.staged = NULL;
    }
    recipe_plan_release(&chained);
    return st;
}

int recipe_staged_recognise(const json_t *spec, recipe_plan *p, strbuf *why)
{
    strbuf first = STRBUF_INIT;
    struct recipe_staged *st = chained_stages(spec, false, &first);
    int rc = 0;
    if (st) {
        p->family = RECIPE_STAGED;
        p->staged = st;
    } else if (first.len) {
        strbuf_adds(why, first.buf);
        rc = 1;
    } else {
        rc = 2;
    }
    strbuf_release(&first);
    return rc;
}

int recipe_staged_rows_apart(const json_t *spec, recipe_plan *p)
{
    strbuf first = STRBUF_INIT;
    struct recipe_staged *st = chained_stages(spec, true, &first);
    strbuf_release(&first);
    if (!st)
        return 1;
    recipe_staged_free(p->staged);
    p->staged = st;
    return 0;
}

void recipe_staged_free(struct recipe_staged *s)
{
    if (!s)
        return;
    recipe_plan_release(&s->stage[0]);
    recipe_plan_release(&s->stage[1]);
    free(s);
}

/* ================================================================== variants */

/* The plain TF32 product (~1e-3 relative, which an fp32 tolerance of 1e-4 fails element by
 * element) where the stages after it average its errors down at least 4x: second in stage
 * 0's list (so that `--variants 2` judges it) instead of last, and 2xFP16 third
 * (recipe_precision_gambles). H100, lab round 50 (docs/perf.md, 12-05): TF32 passed on
 * level 2 #42 (a mean over 514x514, then a logsumexp) and #43 (a logsumexp over 64
 * channels), 1.56x and 1.66x faster than 3xFP16; it failed after norms (#11, #17, #19), a
 * minimum over channels (#32) and a max pool (#35). Whether it applied. */
static bool tf32_second(struct recipe_staged *s)
{
    enum recipe_family f = s->stage[0].family;
    if (s->out_view || (f != RECIPE_CONV && f != RECIPE_GEMM) || s->n_vars[0] < 2 ||
        (f == RECIPE_CONV && s->stage[0].conv.spatred) || /* folded: no product to round */
        recipe_error_shrink(&s->stage[1], recipe_error_shrink(&s->stage[0], 1.0)) < RECIPE_TF32_SHRINK)
        return false;
    s->n_vars[0] = recipe_precision_gambles(s->vars[0], s->n_vars[0], RECIPE_MAX_VARIANTS, f == RECIPE_CONV);
    return true;
}

int recipe_staged_variants(const recipe_plan *p, const recipe_hw *hw, recipe_params *out, int max)
{
    struct recipe_staged *s = p->staged;
    for (int i = 0; i < 2; i++)
        s->n_vars[i] = i && s->out_view ? 0 : recipe_variants(&s->stage[i], hw, s->vars[i], RECIPE_MAX_VARIANTS);
    bool gambles = tf32_second(s);
    s->have_vars = true;
    if (s->out_view) { /* one stage: its variants */
        int n = 0;
        for (int i = 0; i < s->n_vars[0] && n < max; i++)
            out[n++] = (recipe_params){ .staged = 1, .stage_v = { i, 0 } };
        return n;
    }
    if (s->n_vars[0] == 0 || s->n_vars[1] == 0)
        return 0;
    /* (0, 0), then stage 0's second (the product is usually the larger cost), then the two
     * lists' next ones alternately: (1, 0), (0, 1), (2, 0), (0, 2), ... */
    int n = 0;
    out[n++] = (recipe_params){ .staged = 1, .stage_v = { 0, 0 } };
    for (int i = 1; n < max && (i < s->n_vars[0] || i < s->n_vars[1]); i++) {
        if (i < s->n_vars[0] && n < max)
            out[n++] = (recipe_params){ .staged = 1, .stage_v = { i, 0 } };
        if (i < s->n_vars[1] && n < max)
            out[n++] = (recipe_params){ .staged = 1, .stage_v = { 0, i } };
    }
    /* the precision gambles together: (0, 0), TF32 (1, 0), 2xFP16 (2, 0), so that the one
     * takes the other's place when `--variants 2` finds TF32 wrong */
    for (int i = 3; gambles && i < n; i++)
        if (out[i].stage_v[0] == 2 && out[i].stage_v[1] == 0) {
            recipe_params k = out[i];
            memmove(&out[3], &out[2], (size_t)(i - 2) * sizeof k);
            out[2] = k;
            break;
        }
    return n;
}

/* ================================================================== generation */

static bool line_is(const char *line, size_t len, const char *directive, const char **rest)
{
    size_t i = 0;
    while (i < len && (line[i] == ' ' || line[i] == '\t'))
        i++;
    if (i >= len || line[i] != '#')
        return false;
    i++;
    while (i < len && (line[i] == ' ' || line[i] == '\t'))
        i++;
    size_t dl = strlen(directive);
    if (len - i < dl || strncmp(line + i, directive, dl) || (i + dl < len && isalnum((unsigned char)line[i + dl])))
        return false;
    *rest = line + i + dl;
    return true;
}

void recipe_stage_includes(const char *src, strbuf *out)
{
    for (const char *line = src, *nl; line && *line; line = nl ? nl + 1 : NULL) {
        nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        const char *rest;
        if (line_is(line, len, "include", &rest)) {
            strbuf_add(out, line, len);
            strbuf_addc(out, '\n');
        }
    }
}

void recipe_stage_undefs(const char *src, strbuf *out)
{
    json_t *seen = json_object();
    for (const char *line = src, *nl; line && *line; line = nl ? nl + 1 : NULL) {
        nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        const char *rest;
        if (!line_is(line, len, "define", &rest))
            continue;
        while (*rest == ' ' || *rest == '\t')
            rest++;
        size_t k = 0;
        while (isalnum((unsigned char)rest[k]) || rest[k] == '_')
            k++;
        char *name = xstrndup(rest, k);
        if (k && !json_object_get(seen, name)) {
            json_object_set_new(seen, name, json_true());
            strbuf_addf(out, "#undef %s\n", name);
        }
        free(name);
    }
    json_decref(seen);
}

/* Appends src with every whole-word `from` replaced by `to`. */
static void replace_word(const char *src, const char *from, const char *to, strbuf *out)
{
    size_t fl = strlen(from);
    const char *p = src;
    for (const char *hit; (hit = strstr(p, from)) != NULL; p = hit + fl) {
        bool left = hit > src && (isalnum((unsigned char)hit[-1]) || hit[-1] == '_');
        bool right = isalnum((unsigned char)hit[fl]) || hit[fl] == '_';
        strbuf_add(out, p, (size_t)(hit - p));
        strbuf_adds(out, left || right ? from : to);
    }
    strbuf_adds(out, p);
}

void recipe_stage_body(const char *src, strbuf *out)
{
    strbuf a = STRBUF_INIT, b = STRBUF_INIT;
    replace_word(src, "cg_forward", "stage_forward", &a);
    replace_word(a.buf, "cg_workspace_bytes", "stage_workspace_bytes", &b);
    replace_word(b.buf, "CG_EXPORT", "static", out);
    if (!strstr(src, "cg_workspace_bytes("))
        strbuf_adds(out, "\nstatic size_t stage_workspace_bytes(const cg_tensor *, int) { return 0; }\n");
    strbuf_release(&a);
    strbuf_release(&b);
}

static const recipe_params *stage_params(const struct recipe_staged *s, int i, const recipe_params *k)
{
    int v = k->stage_v[i];
    return v >= 0 && v < s->n_vars[i] ? &s->vars[i][v] : NULL;
}

static void emit_shape(strbuf *cu, const char *name, const recipe_tensor *t)
{
    strbuf_addf(cu, "constexpr int %sNdim = %d;\nconstexpr int64_t %sShape[%sNdim] = {", name, t->ndim, name, name);
    for (int d = 0; d < t->ndim; d++)
        strbuf_addf(cu, "%s%lld", d ? ", " : "", (long long)t->shape[d]);
    strbuf_adds(cu, "};\n");
}

/* The composite's entry points: mid at the workspace's start, the stages' own
 * workspace after it (the larger of the two: they run one after the other); or, when
 * the output is a view of mid, stage 0 writing the output handed to it with mid's shape. */
static void emit_entry(const struct recipe_staged *s, int n_in, strbuf *cu)
{
    int64_t numel = 1;
    for (int d = 0; d < s->mid.ndim; d++)
        numel *= s->mid.shape[d];
    strbuf_addf(cu, "\n// ---- the stages in a row (src/recipe_stage.c) ----\n"
                    "namespace cgr_staged {\n"
                    "constexpr int kNin = %d;  // the task's inputs; stage 1 reads [the intermediate, inputs...]\n"
                    "// the intermediate '%s' (float32, contiguous) as stage 0 writes it and as stage 1 reads it\n",
                n_in, s->mid.name);
    emit_shape(cu, "kMid", &s->mid);
    emit_shape(cu, "kMid1", &s->mid_in);
    strbuf_addf(cu, "constexpr int64_t kMidNumel = %lldll;\n"
                    "constexpr size_t kMidBytes = (size_t(kMidNumel) * 4 + 255) / 256 * 256;\n"
                    "static cg_tensor contiguous(void *data, int ndim, const int64_t *shape)\n"
                    "{\n"
                    "    cg_tensor t;\n"
                    "    memset(&t, 0, sizeof t);\n"
                    "    t.data = data;\n"
                    "    t.dtype = CG_FLOAT32;\n"
                    "    t.ndim = ndim;\n"
                    "    int64_t stride = 1;\n"
                    "    for (int d = ndim - 1; d >= 0; d--) {\n"
                    "        t.shape[d] = shape[d];\n"
                    "        t.stride[d] = stride;\n"
                    "        stride *= shape[d];\n"
                    "    }\n"
                    "    return t;\n"
                    "}\n",
                (long long)numel);
    if (s->out_view) {
        strbuf_addf(cu, "}  // namespace cgr_staged\n\n"
                        "// the output is the intermediate viewed ('%s'): stage 0 writes it\n"
                        "CG_EXPORT size_t cg_workspace_bytes(const cg_tensor *in, int n_in)\n"
                        "{\n"
                        "    return n_in == cgr_staged::kNin ? cgr_stage0::stage_workspace_bytes(in, n_in) : 0;\n"
                        "}\n\n"
                        "CG_EXPORT int cg_forward(const cg_tensor *in, int n_in, cg_tensor *out, int n_out,\n"
                        "                         void *workspace, size_t workspace_bytes, cudaStream_t stream)\n"
                        "{\n"
                        "    using namespace cgr_staged;\n"
                        "    if (n_in != kNin || n_out != 1 || out->dtype != CG_FLOAT32 || cg_numel(out) != kMidNumel ||\n"
                        "        !cg_is_contiguous(out))\n"
                        "        return CG_UNSUPPORTED;\n"
                        "    cg_tensor o = contiguous(out->data, kMidNdim, kMidShape);\n"
                        "    return cgr_stage0::stage_forward(in, n_in, &o, 1, workspace, workspace_bytes, stream);\n"
                        "}\n",
                    s->mid_in.name);
        return;
    }
    strbuf_adds(cu, "static void stage1_inputs(const cg_tensor *in, void *mid, cg_tensor *in1)\n"
                    "{\n"
                    "    in1[0] = contiguous(mid, kMid1Ndim, kMid1Shape);\n"
                    "    for (int i = 0; i < kNin; i++)\n"
                    "        in1[i + 1] = in[i];\n"
                    "}\n"
                    "static size_t stage_bytes(const cg_tensor *in)\n"
                    "{\n"
                    "    cg_tensor in1[kNin + 1];\n"
                    "    stage1_inputs(in, nullptr, in1);\n"
                    "    size_t a = cgr_stage0::stage_workspace_bytes(in, kNin);\n"
                    "    size_t b = cgr_stage1::stage_workspace_bytes(in1, kNin + 1);\n"
                    "    return ((a > b ? a : b) + 255) / 256 * 256;\n"
                    "}\n"
                    "}  // namespace cgr_staged\n\n"
                    "CG_EXPORT size_t cg_workspace_bytes(const cg_tensor *in, int n_in)\n"
                    "{\n"
                    "    if (n_in != cgr_staged::kNin)\n"
                    "        return 0;\n"
                    "    return cgr_staged::kMidBytes + cgr_staged::stage_bytes(in);\n"
                    "}\n\n"
                    "CG_EXPORT int cg_forward(const cg_tensor *in, int n_in, cg_tensor *out, int n_out,\n"
                    "                         void *workspace, size_t workspace_bytes, cudaStream_t stream)\n"
                    "{\n"
                    "    using namespace cgr_staged;\n"
                    "    if (n_in != kNin || n_out != 1)\n"
                    "        return CG_UNSUPPORTED;\n"
                    "    if (workspace == nullptr || workspace_bytes < cg_workspace_bytes(in, n_in))\n"
                    "        return CG_BAD_WORKSPACE;\n"
                    "    cg_tensor mid = contiguous(workspace, kMidNdim, kMidShape);\n"
                    "    char *rest = static_cast<char *>(workspace) + kMidBytes;\n"
                    "    size_t rest_bytes = workspace_bytes - kMidBytes;\n"
                    "    int rc = cgr_stage0::stage_forward(in, n_in, &mid, 1, rest, rest_bytes, stream);\n"
                    "    if (rc != CG_OK)\n"
                    "        return rc;\n"
                    "    cg_tensor in1[kNin + 1];\n"
                    "    stage1_inputs(in, workspace, in1);\n"
                    "    return cgr_stage1::stage_forward(in1, kNin + 1, out, n_out, rest, rest_bytes, stream);\n"
                    "}\n");
}

int recipe_staged_generate(const recipe_plan *p, const recipe_params *k, const char *recipes_dir, strbuf *cu,
                           strbuf *err)
{
    struct recipe_staged *s = p->staged;
    if (!s->have_vars) { /* asked without recipe_variants() first: an H200's */
        recipe_hw hw;
        recipe_hw_default(&hw);
        recipe_params tmp[RECIPE_MAX_VARIANTS];
        recipe_staged_variants(p, &hw, tmp, RECIPE_MAX_VARIANTS);
    }
    strbuf src[2] = { STRBUF_INIT, STRBUF_INIT };
    int rc = 0, n_stages = s->out_view ? 1 : 2;
    for (int i = 0; i < n_stages && rc == 0; i++) {
        const recipe_params *ki = stage_params(s, i, k);
        if (!k->staged || !ki) {
            strbuf_addf(err,
                        "staged plan: stage %d has no variant %d (its stages list %d and %d); generate with "
                        "a parameter set that recipe_variants() gave for this plan (`cutegen recipe --list`)",
                        i, k->stage_v[i], s->n_vars[0], s->n_vars[1]);
            rc = -1;
        } else {
            rc = recipe_generate(&s->stage[i], ki, recipes_dir, &src[i], err);
        }
    }
    if (rc == 0) {
        strbuf desc = STRBUF_INIT;
        recipe_staged_describe(p, &desc);
        strbuf_adds(cu, "// Generated by cutegen's built-in proposer (src/recipe_stage.c): two stages in a row.\n"
                        "// Parameters:");
        for (int i = 0; i < n_stages; i++) { /* which variant of each stage (cutegen report reads it) */
            strbuf par = STRBUF_INIT;
            recipe_params_format(stage_params(s, i, k), &par);
            strbuf_addf(cu, "%s stage %d variant %d (%s)", i ? "," : "", i, k->stage_v[i], par.buf);
            strbuf_release(&par);
        }
        strbuf_addc(cu, '\n');
        for (char *line = desc.buf, *nl; line && *line; line = nl ? nl + 1 : NULL) {
            nl = strchr(line, '\n');
            strbuf_adds(cu, "// ");
            strbuf_add(cu, line, nl ? (size_t)(nl - line) : strlen(line));
            strbuf_addc(cu, '\n');
        }
        strbuf_adds(cu, "// Every stage's #include, hoisted here: inside the namespaces below they are no-ops.\n");
        for (int i = 0; i < n_stages; i++)
            recipe_stage_includes(src[i].buf, cu);
        strbuf_adds(cu, "#include <cstring>\n");
        for (int i = 0; i < n_stages; i++) {
            strbuf_addf(cu, "\n// ================================================================ stage %d\n"
                            "namespace cgr_stage%d {\n", i, i);
            recipe_stage_body(src[i].buf, cu);
            strbuf_addf(cu, "\n}  // namespace cgr_stage%d\n", i);
            recipe_stage_undefs(src[i].buf, cu);
        }
        emit_entry(s, p->n_inputs, cu);
        strbuf_release(&desc);
    }
    strbuf_release(&src[0]);
    strbuf_release(&src[1]);
    return rc;
}

/* ================================================================== description */

static void shape_of(const recipe_tensor *t, strbuf *out)
{
    strbuf_addc(out, '[');
    for (int d = 0; d < t->ndim; d++)
        strbuf_addf(out, "%s%lld", d ? ", " : "", (long long)t->shape[d]);
    strbuf_addc(out, ']');
}

void recipe_staged_describe(const recipe_plan *p, strbuf *out)
{
    const struct recipe_staged *s = p->staged;
    if (s->out_view) {
        strbuf_addf(out, "family: staged (one plan, its output viewed: '%s' ", s->cut);
        shape_of(&s->mid, out);
        strbuf_addf(out, " is the output '%s' ", s->mid_in.name);
        shape_of(&s->mid_in, out);
        strbuf_adds(out, ")\n");
    } else {
        strbuf_addf(out, "family: staged (two plans in a row, cut after '%s')\n", s->cut);
        strbuf_addf(out, "intermediate: '%s' float32 ", s->mid.name);
        shape_of(&s->mid, out);
        strbuf_adds(out, ", contiguous, at the workspace's start (stage 1's input 0");
        if (strcmp(s->mid_in.name, s->mid.name)) {
            strbuf_addf(out, ", read as '%s' ", s->mid_in.name);
            shape_of(&s->mid_in, out);
        }
        strbuf_adds(out, ")\n");
    }
    for (int i = 0; i < (s->out_view ? 1 : 2); i++) {
        strbuf_addf(out, "---- stage %d%s\n", i, i ? " (from the intermediate)" : " (into the intermediate)");
        recipe_describe(&s->stage[i], out);
        if (s->have_vars)
            for (int v = 0; v < s->n_vars[i]; v++) {
                strbuf_addf(out, "stage %d variant %d: ", i, v);
                recipe_params_format(&s->vars[i][v], out);
                strbuf_addc(out, '\n');
            }
    }
}

void recipe_staged_summary(const recipe_plan *p, strbuf *out)
{
    const struct recipe_staged *s = p->staged;
    strbuf_adds(out, "staged: ");
    recipe_summary(&s->stage[0], out);
    if (s->out_view) {
        strbuf_adds(out, ", viewed as the output");
        return;
    }
    strbuf_adds(out, "; then ");
    recipe_summary(&s->stage[1], out);
}
