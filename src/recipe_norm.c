/*
 * recipe_norm.c: the NORM family of the built-in proposer: recognition of
 * "normalise by reduced statistics, broadcast back" graphs (LayerNorm, GroupNorm,
 * InstanceNorm, BatchNorm as eval mode computes it, RMSNorm, F.normalize, and written-out
 * forms such as x / x.norm(p=2, dim=1, keepdim=True) or x - x.amax(-1, keepdim=True)),
 * their CPU evaluation, the tuning variants and the parameter block of recipes/norm.cu.
 * recipe_norm.h describes the plan.
 *
 * DESIGN: recognition is a rewrite, so that every elementwise operator the pointwise
 * family knows is known here too, with the same formulas. The fx graph is walked once,
 * tracking each value's shape; every reduction whose result is broadcast back becomes a
 * statistic: its node is replaced by a get_attr of a pseudo-input "__stat<slot>" (shaped
 * as the reduction with keepdim) followed by the pointwise nodes that finish it (a mean
 * divides the sum by the count, a 2-norm takes its square root), and norm modules become
 * their formulas over such statistics ((a - mean) * rsqrt(var + eps) * weight + bias).
 * The rewritten graph, with the pseudo-inputs appended to the spec's inputs, is then an
 * ordinary pointwise spec: recipe_recognise() turns it into the epilogue's DAG, and the
 * graph cut at each statistic's operand into that statistic's prologue. The DAGs are
 * concatenated into one plan; a pseudo-input reads a statistic's slot.
 * GroupNorm needs one more step: the view splits the channel dim into (groups, channels
 * a group), so that its statistics reduce a block of adjacent dims like all the others;
 * every tensor of the sub-specs is given that view, and 1-D per-channel parameters of the
 * norm modules are placed along the channel dim.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recipe_hoist.h"
#include "recipe_norm.h"
#include "util.h"

/* ================================================================== the walk */

enum nv_kind { NV_OTHER = 0, NV_TENSOR, NV_CONST, NV_PAIR };

struct nval {
    char name[96];
    enum nv_kind kind;
    int ndim;
    int64_t shape[RECIPE_MAX_DIMS];
    /* NV_PAIR: torch.max/min(x, dim) before getitem */
    char pair_operand[96];
    unsigned pair_mask;
    bool pair_keep, pair_max;
};

/* A statistic as found in the graph, before its prologue is recognised. */
struct stat_src {
    enum norm_stat_kind kind;
    char operand[96]; /* the node reduced */
    unsigned mask;    /* reduced dims of the output (original coordinates) */
    bool gn;          /* GroupNorm's: the channel's group and every dim after it */
    int slot;
};

struct nwalk {
    const json_t *spec;
    const json_t *inputs;
    strbuf *why;
    json_t *g2; /* the rewritten graph */
    struct nval *vals;
    int n_vals;
    struct stat_src st[RECIPE_NORM_MAX_STATS];
    int n_st, n_slots;
    char slot_name[RECIPE_NORM_MAX_SLOTS][16];
    int out_nd;
    int64_t out_shape[RECIPE_MAX_DIMS];
    const char *out_dtype;
    int gn_dim, gn_groups;                /* the view's split: dim, groups (0: none) */
    int chan_dim[RECIPE_MAX_INPUTS];      /* per input: -1, or the dim a 1-D parameter runs along */
    int modules;                          /* norm modules rewritten */
    bool foreign;                         /* a reduction that is not broadcast back: not ours */
    int placeholders;
    int fresh;
    char what[160];
};

static int nw_fail(struct nwalk *w, const char *fmt, const char *arg)
{
    strbuf_reset(w->why);
    strbuf_adds(w->why, "not covered: ");
    strbuf_addf(w->why, fmt, arg);
    return 1;
}

static struct nval *nv_find(struct nwalk *w, const char *name)
{
    for (int i = w->n_vals - 1; i >= 0; i--)
        if (!strcmp(w->vals[i].name, name))
            return &w->vals[i];
    return NULL;
}

static struct nval *nv_add(struct nwalk *w, const char *name)
{
    w->vals = xrealloc(w->vals, (size_t)(w->n_vals + 1) * sizeof *w->vals);
    struct nval *v = &w->vals[w->n_vals++];
    memset(v, 0, sizeof *v);
    snprintf(v->name, sizeof v->name, "%s", name);
    return v;
}

/* The value an fx argument refers to ("%name"), else NULL. */
static struct nval *ref_of(struct nwalk *w, const json_t *a)
{
    if (!json_is_string(a) || json_string_value(a)[0] != '%')
        return NULL;
    return nv_find(w, json_string_value(a) + 1);
}

/* An argument by keyword, else by position: keyword first, because functions that
 * dispatch through handle_torch_function (torch.norm, F.normalize, F.layer_norm) are
 * recorded with other values in args than their signature's (F.normalize's args are
 * (input, out), its p and dim in kwargs). */
static const json_t *arg_at(const json_t *node, size_t pos, const char *kw)
{
    const json_t *kwargs = json_object_get(node, "kwargs");
    if (kw && json_is_object(kwargs) && json_object_get(kwargs, kw))
        return json_object_get(kwargs, kw);
    const json_t *args = json_object_get(node, "args");
    if (json_is_array(args) && pos < json_array_size(args))
        return json_array_get(args, pos);
    return NULL;
}

static int input_index(const json_t *inputs, const char *name)
{
    for (size_t i = 0; i < json_array_size(inputs); i++) {
        const char *n = json_string_value(json_object_get(json_array_get(inputs, i), "name"));
        if (n && !strcmp(n, name))
            return (int)i;
    }
    return -1;
}

static void tensor_shape(const json_t *t, struct nval *v)
{
    const json_t *shape = json_object_get(t, "shape");
    v->kind = NV_TENSOR;
    v->ndim = (int)json_array_size(shape);
    if (v->ndim > RECIPE_MAX_DIMS) {
        v->kind = NV_OTHER;
        return;
    }
    for (int d = 0; d < v->ndim; d++)
        v->shape[d] = json_integer_value(json_array_get(shape, (size_t)d));
}

/* Broadcasts b into a (numpy rules); false when they do not broadcast. */
static bool broadcast_into(struct nval *a, const struct nval *b)
{
    int nd = a->ndim > b->ndim ? a->ndim : b->ndim;
    int64_t s[RECIPE_MAX_DIMS];
    for (int d = 0; d < nd; d++) {
        int ia = d - (nd - a->ndim), ib = d - (nd - b->ndim);
        int64_t x = ia >= 0 ? a->shape[ia] : 1, y = ib >= 0 ? b->shape[ib] : 1;
        if (x != y && x != 1 && y != 1)
            return false;
        s[d] = x == 1 ? y : x;
    }
    a->ndim = nd;
    memcpy(a->shape, s, sizeof s);
    return true;
}

/* The shape of an elementwise node: the broadcast of its tensor arguments. */
static void elementwise_shape(struct nwalk *w, const json_t *a, struct nval *out, bool *any, bool *bad)
{
    if (json_is_array(a)) {
        for (size_t i = 0; i < json_array_size(a); i++)
            elementwise_shape(w, json_array_get(a, i), out, any, bad);
        return;
    }
    if (json_is_object(a)) {
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)a, k, v)
            elementwise_shape(w, v, out, any, bad);
        return;
    }
    struct nval *v = ref_of(w, a);
    if (!v)
        return;
    if (v->kind != NV_TENSOR) {
        *bad = true;
        return;
    }
    if (!*any) {
        out->ndim = v->ndim;
        memcpy(out->shape, v->shape, sizeof out->shape);
        *any = true;
    } else if (!broadcast_into(out, v)) {
        *bad = true;
    }
}

/* ------------------------------------------------------------------ emitting nodes */

static char *fresh_name(struct nwalk *w)
{
    return xasprintf("__nrm%d", w->fresh++);
}

static void emit(struct nwalk *w, const char *name, const char *op, const char *target, json_t *args,
                 json_t *kwargs)
{
    json_t *n = json_pack("{s:s, s:s, s:s, s:o, s:o}", "name", name, "op", op, "target", target,
                          "args", args ? args : json_array(), "kwargs", kwargs ? kwargs : json_object());
    json_array_append_new(w->g2, n);
}

/* target(a, b) as a call_function named name; b is a node name or NULL, else c (a number). */
static void emit_bin(struct nwalk *w, const char *name, const char *target, const char *a, const char *b,
                     double c)
{
    char ra[100], rb[100];
    snprintf(ra, sizeof ra, "%%%s", a);
    json_t *args = json_array();
    json_array_append_new(args, json_string(ra));
    if (b) {
        snprintf(rb, sizeof rb, "%%%s", b);
        json_array_append_new(args, json_string(rb));
    } else {
        json_array_append_new(args, json_real(c));
    }
    emit(w, name, "call_function", target, args, NULL);
}

static void emit_un(struct nwalk *w, const char *name, const char *target, const char *a)
{
    char ra[100];
    snprintf(ra, sizeof ra, "%%%s", a);
    emit(w, name, "call_function", target, json_pack("[s]", ra), NULL);
}

static void emit_attr(struct nwalk *w, const char *name, const char *target)
{
    emit(w, name, "get_attr", target, NULL, NULL);
}

/* Registers name as a tensor of the given shape. */
static void set_tensor(struct nwalk *w, const char *name, int nd, const int64_t *shape)
{
    int64_t s[RECIPE_MAX_DIMS];
    memcpy(s, shape, (size_t)nd * sizeof *shape); /* shape may point into w->vals */
    struct nval *v = nv_add(w, name);
    v->kind = NV_TENSOR;
    v->ndim = nd;
    memcpy(v->shape, s, (size_t)nd * sizeof *s);
}

/* ------------------------------------------------------------------ statistics */

static int64_t count_of(const struct nwalk *w, unsigned mask)
{
    int64_t c = 1;
    for (int d = 0; d < w->out_nd; d++)
        if (mask & (1u << d))
            c *= w->out_shape[d];
    return c;
}

/*
 * A new statistic of kind over `operand` (a node of the output's shape) and dims `mask`;
 * emits the get_attr of its slot(s) as raw (and raw2 for VAR's variance). gn: GroupNorm's
 * block of dims instead of mask. Callers check that the result broadcasts back.
 */
static int new_stat(struct nwalk *w, enum norm_stat_kind kind, const char *operand, unsigned mask, bool gn,
                    const char *raw, const char *raw2, const char *what)
{
    struct nval *x = nv_find(w, operand);
    if (!x || x->kind != NV_TENSOR)
        return nw_fail(w, "%s of something that is not a tensor", what);
    if (x->ndim != w->out_nd || memcmp(x->shape, w->out_shape, (size_t)x->ndim * sizeof *x->shape)) {
        w->foreign = true; /* its result is not broadcast back onto the output */
        return nw_fail(w, "%s of a tensor that is not the output's shape", what);
    }
    if (w->n_st == RECIPE_NORM_MAX_STATS)
        return nw_fail(w, "more than %s statistics", "4");
    int slots = kind == NS_VAR ? 2 : 1;
    if (w->n_slots + slots > RECIPE_NORM_MAX_SLOTS)
        return nw_fail(w, "more than %s statistic values", "8");
    struct stat_src *s = &w->st[w->n_st++];
    s->kind = kind;
    snprintf(s->operand, sizeof s->operand, "%s", operand);
    s->mask = mask;
    s->gn = gn;
    s->slot = w->n_slots;
    static const char *names[] = { "sum", "max", "min", "mean" };
    snprintf(w->slot_name[s->slot], sizeof w->slot_name[0], "%s%d", names[kind], w->n_st - 1);
    if (kind == NS_VAR)
        snprintf(w->slot_name[s->slot + 1], sizeof w->slot_name[0], "var%d", w->n_st - 1);
    w->n_slots += slots;
    char target[32];
    snprintf(target, sizeof target, "__stat%d", s->slot);
    emit_attr(w, raw, target);
    if (kind == NS_VAR) {
        snprintf(target, sizeof target, "__stat%d", s->slot + 1);
        emit_attr(w, raw2, target);
    }
    return 0;
}

/* The kept shape of a reduction over mask of the output's shape. */
static void kept_shape(const struct nwalk *w, unsigned mask, bool keepdim, int *nd, int64_t *shape)
{
    *nd = 0;
    for (int d = 0; d < w->out_nd; d++) {
        if (mask & (1u << d)) {
            if (keepdim)
                shape[(*nd)++] = 1;
        } else {
            shape[(*nd)++] = w->out_shape[d];
        }
    }
}

/* The result of a reduction must broadcast back as one value per kept position: with
 * keepdim, or without it when only leading dims are reduced (a (D,) sum over dim 0 of
 * (B, D) broadcasts right-aligned onto the columns it was taken over). */
static int check_broadcast_back(struct nwalk *w, unsigned mask, bool keepdim, const char *what)
{
    if (keepdim)
        return 0;
    bool lead = true;
    for (int d = 0; d < w->out_nd; d++) {
        bool red = mask & (1u << d);
        if (red && !lead)
            return nw_fail(w, "%s without keepdim over an inner dim (its result would broadcast "
                              "along other dims than those reduced)", what);
        if (!red)
            lead = false;
    }
    return 0;
}

/* Reads the dims argument: an int, a list of ints, None or absent (all dims). */
static int dims_arg(struct nwalk *w, const json_t *a, int nd, unsigned *mask, const char *what)
{
    *mask = 0;
    if (!a || json_is_null(a) || (json_is_array(a) && json_array_size(a) == 0)) {
        *mask = nd >= 32 ? ~0u : (1u << nd) - 1;
        return 0;
    }
    const json_t *one = a;
    size_t n = json_is_array(a) ? json_array_size(a) : 1;
    for (size_t i = 0; i < n; i++) {
        if (json_is_array(a))
            one = json_array_get(a, i);
        if (!json_is_integer(one))
            return nw_fail(w, "%s with a dim that is not a constant integer", what);
        int64_t d = json_integer_value(one);
        if (d < 0)
            d += nd;
        if (d < 0 || d >= nd)
            return nw_fail(w, "%s with a dim out of range", what);
        *mask |= 1u << d;
    }
    return 0;
}

static bool truthy(const json_t *a)
{
    return a && (json_is_true(a) || (json_is_integer(a) && json_integer_value(a) != 0));
}

/* Operand name of a reduction or module: the node its first argument names. */
static struct nval *operand_of(struct nwalk *w, const json_t *node, bool is_module, const char *what)
{
    const json_t *a = arg_at(node, 0, is_module ? NULL : "input");
    struct nval *x = ref_of(w, a);
    if (!x)
        nw_fail(w, "%s of something that is not a graph value", what);
    return x;
}

/*
 * p-norm statistics: emits the prologue (|a|, a*a, |a|^p) and the statistic, then the
 * finish named `name`. p is "fro"/2, 1, inf, -inf or another number; clamp_eps >= 0 adds
 * F.normalize's clamp_min(eps) before name.
 */
static int emit_norm(struct nwalk *w, const char *name, const char *a, double p, unsigned mask,
                     const char *what)
{
    if (!(p > 0))
        return nw_fail(w, "%s with p <= 0", what);
    char *pro = fresh_name(w), *raw = fresh_name(w), *ab = fresh_name(w);
    if (p == 2.0) {
        emit_bin(w, pro, "_operator.mul", a, a, 0);
    } else if (p == 1.0 || isinf(p)) {
        emit_un(w, pro, "torch.abs", a);
    } else {
        emit_un(w, ab, "torch.abs", a);
        emit_bin(w, pro, "torch.pow", ab, NULL, p);
    }
    /* pro is an elementwise value of the operand's shape */
    const struct nval *x = nv_find(w, a);
    set_tensor(w, pro, x->ndim, x->shape);
    bool finish = p != 1.0 && !isinf(p);
    int rc = new_stat(w, isinf(p) ? NS_MAX : NS_SUM, pro, mask, false, finish ? raw : name, NULL, what);
    if (!rc && p == 2.0)
        emit_un(w, name, "torch.sqrt", raw);
    else if (!rc && finish)
        emit_bin(w, name, "torch.pow", raw, NULL, 1.0 / p);
    free(pro);
    free(raw);
    free(ab);
    return rc;
}

/* The p of torch.norm / vector_norm: 'fro' and None are 2; 'nuc' and others refused. */
static int norm_p(struct nwalk *w, const json_t *a, double *p, const char *what)
{
    *p = 2.0;
    if (!a || json_is_null(a))
        return 0;
    if (json_is_string(a)) {
        const char *s = json_string_value(a);
        if (!strcmp(s, "fro"))
            return 0;
        if (!strcmp(s, "inf") || !strcmp(s, "Infinity")) {
            *p = INFINITY;
            return 0;
        }
        if (!strcmp(s, "-inf") || !strcmp(s, "-Infinity")) {
            *p = -INFINITY;
            return 0;
        }
        return nw_fail(w, "%s with a p other than 'fro', a number or inf", what);
    }
    if (!json_is_number(a))
        return nw_fail(w, "%s with a p that is not a constant", what);
    *p = json_number_value(a);
    return 0;
}

/* The per-node result: the reduction's keepdim shape is registered under name. */
static void set_reduced(struct nwalk *w, const char *name, unsigned mask, bool keepdim)
{
    int nd;
    int64_t shape[RECIPE_MAX_DIMS];
    kept_shape(w, mask, keepdim, &nd, shape);
    set_tensor(w, name, nd, shape);
}

/* Function and method reductions; -2 when name is not one. */
static int reduction(struct nwalk *w, const char *name, const json_t *node)
{
    const char *nname = json_string_value(json_object_get(node, "name"));
    static const char *names[] = { "sum", "mean", "amax", "amin", "max", "min", "norm", "vector_norm",
                                   "linalg_vector_norm", "var", "std" };
    size_t which = sizeof names / sizeof names[0];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(name, names[i]))
            which = i;
    if (which == sizeof names / sizeof names[0])
        return -2;
    struct nval *xp = ref_of(w, arg_at(node, 0, "input")), xv;
    if (!xp || xp->kind != NV_TENSOR)
        return -2; /* Python's max(a, b) on numbers and the like: not a reduction */
    xv = *xp; /* w->vals moves as values are added */
    const struct nval *x = &xv;
    bool is_norm = which >= 6 && which <= 8, is_var = which >= 9;
    bool minmax = which == 4 || which == 5;
    const json_t *dim_a, *keep_a, *dtype_a = NULL;
    if (is_norm) {
        dim_a = arg_at(node, 2, "dim");
        keep_a = arg_at(node, 3, "keepdim");
        dtype_a = arg_at(node, which == 6 ? 5 : 4, "dtype");
    } else if (is_var) {
        dim_a = arg_at(node, 1, "dim");
        keep_a = arg_at(node, 3, "keepdim");
    } else {
        dim_a = arg_at(node, 1, "dim");
        keep_a = arg_at(node, 2, "keepdim");
        if (which <= 1)
            dtype_a = arg_at(node, 3, "dtype");
    }
    if (dtype_a && !json_is_null(dtype_a))
        return nw_fail(w, "%s with a dtype argument", name);
    if (minmax && dim_a && ref_of(w, dim_a))
        return -2; /* torch.max(x, y): elementwise */
    unsigned mask;
    if (dims_arg(w, dim_a, x->ndim, &mask, name))
        return 1;
    bool keepdim = truthy(keep_a);
    if (x->ndim != w->out_nd || memcmp(x->shape, w->out_shape, (size_t)x->ndim * sizeof *x->shape)) {
        w->foreign = true; /* a reduction to the output, or of a smaller tensor: not ours */
        return nw_fail(w, "%s of a tensor that is not the output's shape", name);
    }
    if (minmax && dim_a && !json_is_null(dim_a)) {
        /* (values, indices): a statistic only when element 0 is taken */
        struct nval *v = nv_add(w, nname);
        v->kind = NV_PAIR;
        memcpy(v->pair_operand, x->name, sizeof v->pair_operand);
        v->pair_mask = mask;
        v->pair_keep = keepdim;
        v->pair_max = which == 4;
        return 0;
    }
    if (check_broadcast_back(w, mask, keepdim, name))
        return 1;
    int rc = 0;
    char *raw = fresh_name(w);
    if (is_norm) {
        double p;
        if (which != 6)
            rc = norm_p(w, arg_at(node, 1, "ord"), &p, name);
        else
            rc = norm_p(w, arg_at(node, 1, "p"), &p, name);
        if (!rc)
            rc = emit_norm(w, nname, x->name, p, mask, name);
    } else if (is_var) {
        /* var(x, dim, unbiased, keepdim) or var(x, dim, correction=, keepdim=) */
        double corr = 1.0;
        const json_t *ub = arg_at(node, 2, "unbiased"), *cr = arg_at(node, 99, "correction");
        if (ub && json_is_boolean(ub))
            corr = json_is_true(ub) ? 1.0 : 0.0;
        if (cr && json_is_number(cr))
            corr = json_number_value(cr);
        else if (cr && !json_is_null(cr))
            rc = nw_fail(w, "%s with a correction that is not a constant", name);
        int64_t n = count_of(w, mask);
        if (!rc && n - corr <= 0)
            rc = nw_fail(w, "%s with no degrees of freedom", name);
        char *mean = fresh_name(w), *scaled = fresh_name(w);
        const char *var = corr == 0.0 && which == 9 ? nname : raw;
        if (!rc)
            rc = new_stat(w, NS_VAR, x->name, mask, false, mean, var, name);
        if (!rc) {
            const char *v = var;
            if (corr != 0.0) {
                v = which == 9 ? nname : scaled;
                emit_bin(w, v, "_operator.mul", raw, NULL, (double)n / ((double)n - corr));
            }
            if (which == 10)
                emit_un(w, nname, "torch.sqrt", v);
        }
        free(mean);
        free(scaled);
    } else {
        static const enum norm_stat_kind kinds[] = { NS_SUM, NS_SUM, NS_MAX, NS_MIN, NS_MAX, NS_MIN };
        rc = new_stat(w, kinds[which], x->name, mask, false, which == 1 ? raw : nname, NULL, name);
        if (!rc && which == 1)
            emit_bin(w, nname, "_operator.truediv", raw, NULL, (double)count_of(w, mask));
    }
    free(raw);
    if (!rc)
        set_reduced(w, nname, mask, keepdim);
    return rc;
}

/* getitem / getattr on torch.max/min(x, dim)'s pair. */
static int pair_item(struct nwalk *w, const json_t *node, const char *fname, const struct nval *pp)
{
    const struct nval pv = *pp, *pair = &pv; /* w->vals moves as values are added */
    const char *nname = json_string_value(json_object_get(node, "name"));
    if (recipe_pair_index(fname, arg_at(node, 1, NULL)) != 0)
        return nw_fail(w, "%s", "the indices of torch.max/min broadcast back");
    if (check_broadcast_back(w, pair->pair_mask, pair->pair_keep, pair->pair_max ? "max" : "min"))
        return 1;
    int rc = new_stat(w, pair->pair_max ? NS_MAX : NS_MIN, pair->pair_operand, pair->pair_mask, false, nname,
                      NULL, pair->pair_max ? "max" : "min");
    if (!rc)
        set_reduced(w, nname, pair->pair_mask, pair->pair_keep);
    return rc;
}

/* ------------------------------------------------------------------ norm modules */

/* Reads "key" followed by a number in a module repr; dflt when absent. */
static double repr_num(const char *repr, const char *key, double dflt)
{
    const char *s = repr ? strstr(repr, key) : NULL;
    if (!s)
        return dflt;
    char *end;
    double v = strtod(s + strlen(key), &end);
    return end == s + strlen(key) ? dflt : v;
}

static bool repr_flag(const char *repr, const char *key, bool dflt)
{
    const char *s = repr ? strstr(repr, key) : NULL;
    if (!s)
        return dflt;
    return !strncmp(s + strlen(key), "True", 4);
}

/* A parameter input named "<module>.<what>", or -1. */
static int param_of(struct nwalk *w, const char *module, const char *what)
{
    char name[160];
    snprintf(name, sizeof name, "%s.%s", module, what);
    return input_index(w->inputs, name);
}

/* Emits a get_attr of input k, placed along dim chan when chan >= 0 (1-D channel
 * parameters); writes its node name into name. */
static void emit_param(struct nwalk *w, int k, int chan, char *name, size_t size)
{
    const char *in = json_string_value(json_object_get(json_array_get(w->inputs, (size_t)k), "name"));
    char *n = fresh_name(w);
    snprintf(name, size, "%s", n);
    free(n);
    emit_attr(w, name, in);
    if (chan >= 0)
        w->chan_dim[k] = chan;
}

/*
 * out = (a - mean) * rsqrt(var + eps) [* weight] [+ bias], the statistics over mask (or
 * GroupNorm's dims), or with given mean/var nodes (running statistics) when mean_node is
 * set. The last node is named name.
 */
static int emit_standardise(struct nwalk *w, const char *name, const char *a, unsigned mask, bool gn,
                            double eps, int wk, int bk, int chan, const char *mean_node,
                            const char *var_node, const char *what)
{
    char *mean = fresh_name(w), *var = fresh_name(w), *d = fresh_name(w), *ve = fresh_name(w),
         *rs = fresh_name(w), *nrm = fresh_name(w), *wn = fresh_name(w);
    int rc = 0;
    if (!mean_node) {
        rc = new_stat(w, NS_VAR, a, mask, gn, mean, var, what);
        mean_node = mean;
        var_node = var;
    }
    if (!rc) {
        bool last_w = bk < 0, last_n = wk < 0 && bk < 0;
        emit_bin(w, d, "_operator.sub", a, mean_node, 0);
        emit_bin(w, ve, "_operator.add", var_node, NULL, eps);
        emit_un(w, rs, "torch.rsqrt", ve);
        emit_bin(w, last_n ? name : nrm, "_operator.mul", d, rs, 0);
        if (wk >= 0) {
            char pw[64];
            emit_param(w, wk, chan, pw, sizeof pw);
            emit_bin(w, last_w ? name : wn, "_operator.mul", nrm, pw, 0);
        }
        if (bk >= 0) {
            char pb[64];
            emit_param(w, bk, chan, pb, sizeof pb);
            emit_bin(w, name, "_operator.add", wk >= 0 ? wn : nrm, pb, 0);
        }
    }
    free(mean);
    free(var);
    free(d);
    free(ve);
    free(rs);
    free(nrm);
    free(wn);
    return rc;
}

/* out = a * rsqrt(mean(a * a) + eps) [* weight]: nn.RMSNorm and F.rms_norm. */
static int emit_rms(struct nwalk *w, const char *name, const char *a, unsigned mask, double eps, int wk,
                    const char *wnode, const char *what)
{
    char *sq = fresh_name(w), *raw = fresh_name(w), *mean = fresh_name(w), *me = fresh_name(w),
         *rs = fresh_name(w), *nrm = fresh_name(w);
    struct nval *x = nv_find(w, a);
    emit_bin(w, sq, "_operator.mul", a, a, 0);
    set_tensor(w, sq, x->ndim, x->shape);
    int rc = new_stat(w, NS_SUM, sq, mask, false, raw, NULL, what);
    if (!rc) {
        bool has_w = wk >= 0 || wnode;
        emit_bin(w, mean, "_operator.truediv", raw, NULL, (double)count_of(w, mask));
        emit_bin(w, me, "_operator.add", mean, NULL, eps);
        emit_un(w, rs, "torch.rsqrt", me);
        emit_bin(w, has_w ? nrm : name, "_operator.mul", a, rs, 0);
        if (wk >= 0) {
            char pw[64];
            emit_param(w, wk, -1, pw, sizeof pw);
            emit_bin(w, name, "_operator.mul", nrm, pw, 0);
        } else if (wnode) {
            emit_bin(w, name, "_operator.mul", nrm, wnode, 0);
        }
    }
    free(sq);
    free(raw);
    free(mean);
    free(me);
    free(rs);
    free(nrm);
    return rc;
}

/* Parses LayerNorm's "((64, 256, 256)" or "((1024,)" normalized_shape: count, sizes. */
static int repr_shape(const char *repr, int64_t *shape)
{
    const char *s = repr ? strstr(repr, "((") : NULL;
    if (!s)
        return -1;
    s += 2;
    int n = 0;
    while (*s && *s != ')' && n < RECIPE_MAX_DIMS) {
        char *end;
        long long v = strtoll(s, &end, 10);
        if (end == s)
            return -1;
        shape[n++] = v;
        s = end;
        while (*s == ',' || *s == ' ')
            s++;
    }
    return *s == ')' ? n : -1;
}

static unsigned last_dims(int nd, int k)
{
    unsigned m = 0;
    for (int d = nd - k; d < nd; d++)
        m |= 1u << d;
    return m;
}

static int norm_module(struct nwalk *w, const char *cls, const json_t *node)
{
    const char *nname = json_string_value(json_object_get(node, "name"));
    const char *target = json_string_value(json_object_get(node, "target"));
    const char *repr = json_string_value(json_object_get(node, "module_repr"));
    bool ln = !strcmp(cls, "LayerNorm"), gnm = !strcmp(cls, "GroupNorm"), rms = !strcmp(cls, "RMSNorm");
    bool in = !strncmp(cls, "InstanceNorm", 12), bn = !strncmp(cls, "BatchNorm", 9);
    if (!ln && !gnm && !rms && !in && !bn)
        return -2;
    struct nval *xp = operand_of(w, node, true, cls), xv;
    if (!xp)
        return 1;
    xv = *xp; /* w->vals moves as values are added */
    const struct nval *x = &xv;
    if (x->kind != NV_TENSOR || x->ndim != w->out_nd ||
        memcmp(x->shape, w->out_shape, (size_t)x->ndim * sizeof *x->shape)) {
        w->foreign = true;
        return nw_fail(w, "%s of a tensor that is not the output's shape", cls);
    }
    int nd = x->ndim;
    double eps = repr_num(repr, "eps=", 1e-5);
    int wk = param_of(w, target, "weight"), bk = param_of(w, target, "bias");
    int rc = 0;
    w->modules++;
    if (ln || rms) {
        int64_t ns[RECIPE_MAX_DIMS];
        int k = repr_shape(repr, ns);
        if (k <= 0 || k > nd)
            return nw_fail(w, "%s without a readable normalized_shape in its repr", cls);
        for (int i = 0; i < k; i++)
            if (ns[i] != x->shape[nd - k + i])
                return nw_fail(w, "%s whose normalized_shape is not the input's last dims", cls);
        if (rms) {
            if (repr && strstr(repr, "eps=None"))
                eps = !strcmp(w->out_dtype, "float16") ? 0.0009765625
                    : !strcmp(w->out_dtype, "bfloat16") ? 0.0078125 : 1.1920928955078125e-07;
            rc = emit_rms(w, nname, x->name, last_dims(nd, k), eps, wk, NULL, cls);
        } else {
            rc = emit_standardise(w, nname, x->name, last_dims(nd, k), false, eps, wk, bk, -1, NULL, NULL, cls);
        }
        snprintf(w->what, sizeof w->what, "%s over the last %d dim%s", cls, k, k > 1 ? "s" : "");
    } else if (gnm) {
        /* GroupNorm(num_groups, num_channels, eps=, affine=) on (N, C, *) */
        const char *s = repr ? strchr(repr, '(') : NULL;
        char *end;
        long g = s ? strtol(s + 1, &end, 10) : 0;
        long c = s && end && *end == ',' ? strtol(end + 1, NULL, 10) : 0;
        if (nd < 2 || g <= 0 || c != x->shape[1] || c % g)
            return nw_fail(w, "%s whose groups and channels do not fit its input", cls);
        if (w->gn_groups && (w->gn_groups != g || w->gn_dim != 1))
            return nw_fail(w, "%s: two different channel groupings", cls);
        w->gn_dim = 1;
        w->gn_groups = (int)g;
        rc = emit_standardise(w, nname, x->name, 0, true, eps, wk, bk, 1, NULL, NULL, cls);
        snprintf(w->what, sizeof w->what, "GroupNorm (%ld groups of %ld channels)", g, c / g);
    } else {
        /* InstanceNormNd on (N, C, spatial...) or (C, spatial...); BatchNormNd on (N, C, *) */
        int sp = cls[strlen(cls) - 2] - '0';
        int chan = in ? nd - sp - 1 : 1;
        bool running = bn ? repr_flag(repr, "track_running_stats=", true)
                          : repr_flag(repr, "track_running_stats=", false);
        if (chan < 0 || chan >= nd || (in && (sp < 1 || sp > 3)))
            return nw_fail(w, "%s on an input of unexpected rank", cls);
        int64_t c = (int64_t)repr_num(repr, "(", -1);
        /* PyTorch only warns for an InstanceNorm without affine parameters or running
         * statistics whose num_features is not the input's channels (level 2 #28:
         * InstanceNorm2d(8192) of a [1024, 1, 1, 8192] view), and normalises as usual */
        bool mismatch_ok = in && !running && !repr_flag(repr, "affine=", false);
        if (c != x->shape[chan] && !mismatch_ok)
            return nw_fail(w, "%s whose channel count is not its input's", cls);
        if (running) {
            /* eval mode with running statistics: a per-channel affine map */
            int mk = param_of(w, target, "running_mean"), vk = param_of(w, target, "running_var");
            if (mk < 0 || vk < 0)
                return nw_fail(w, "%s without its running statistics in the spec", cls);
            char pm[64], pv[64];
            emit_param(w, mk, chan, pm, sizeof pm);
            emit_param(w, vk, chan, pv, sizeof pv);
            rc = emit_standardise(w, nname, x->name, 0, false, eps, wk, bk, chan, pm, pv, cls);
            snprintf(w->what, sizeof w->what, "%s in eval mode (running statistics)", cls);
        } else if (bn) {
            return nw_fail(w, "%s with batch statistics (reduced over dims that are not adjacent)", cls);
        } else {
            rc = emit_standardise(w, nname, x->name, last_dims(nd, sp), false, eps, wk, bk, chan, NULL, NULL, cls);
            snprintf(w->what, sizeof w->what, "%s over the last %d dim%s", cls, sp, sp > 1 ? "s" : "");
        }
        if (!rc && repr_flag(repr, "affine=", bn) && wk < 0)
            return nw_fail(w, "%s is affine but its weight is not in the spec", cls);
    }
    if (!rc)
        set_tensor(w, nname, x->ndim, x->shape);
    return rc;
}

/* F.normalize(x, p, dim, eps), F.layer_norm(x, shape, w, b, eps), F.rms_norm(x, shape, w, eps). */
static int norm_function(struct nwalk *w, const char *name, const json_t *node)
{
    bool normalize = !strcmp(name, "normalize"), layer = !strcmp(name, "layer_norm"),
         rms = !strcmp(name, "rms_norm");
    if (!normalize && !layer && !rms)
        return -2;
    const char *nname = json_string_value(json_object_get(node, "name"));
    struct nval *xp = operand_of(w, node, false, name), xv;
    if (!xp)
        return 1;
    xv = *xp; /* w->vals moves as values are added */
    const struct nval *x = &xv;
    if (x->kind != NV_TENSOR || x->ndim != w->out_nd ||
        memcmp(x->shape, w->out_shape, (size_t)x->ndim * sizeof *x->shape)) {
        w->foreign = true;
        return nw_fail(w, "%s of a tensor that is not the output's shape", name);
    }
    int rc = 0;
    if (normalize) {
        double p, eps = 1e-12;
        if (norm_p(w, arg_at(node, 1, "p"), &p, name))
            return 1;
        const json_t *da = arg_at(node, 2, "dim"), *ea = arg_at(node, 3, "eps");
        unsigned mask;
        if (!da)
            mask = 1u << 1; /* F.normalize's default dim=1 */
        else if (dims_arg(w, da, x->ndim, &mask, name))
            return 1;
        if (ea && json_is_number(ea))
            eps = json_number_value(ea);
        char *nrm = fresh_name(w), *cl = fresh_name(w);
        rc = emit_norm(w, nrm, x->name, p, mask, name);
        if (!rc) {
            char ra[100];
            snprintf(ra, sizeof ra, "%%%s", nrm);
            emit(w, cl, "call_function", "torch.clamp", json_pack("[s]", ra), json_pack("{s:f}", "min", eps));
            emit_bin(w, nname, "_operator.truediv", x->name, cl, 0);
            snprintf(w->what, sizeof w->what, "F.normalize (p=%g)", p);
        }
        free(nrm);
        free(cl);
    } else {
        const json_t *sa = arg_at(node, 1, "normalized_shape");
        int k = json_is_array(sa) ? (int)json_array_size(sa) : json_is_integer(sa) ? 1 : 0;
        if (k <= 0 || k > x->ndim)
            return nw_fail(w, "%s with a normalized_shape that is not a constant", name);
        const json_t *wa = arg_at(node, 2, "weight"), *ba = rms ? NULL : arg_at(node, 3, "bias");
        const json_t *ea = arg_at(node, rms ? 3 : 4, "eps");
        double eps = layer ? 1e-5 : !strcmp(w->out_dtype, "float16") ? 0.0009765625
                   : !strcmp(w->out_dtype, "bfloat16") ? 0.0078125 : 1.1920928955078125e-07;
        if (ea && json_is_number(ea))
            eps = json_number_value(ea);
        struct nval *wp = ref_of(w, wa), *bp = ref_of(w, ba), wvv, bvv;
        if ((wa && !json_is_null(wa) && !wp) || (ba && !json_is_null(ba) && !bp))
            return nw_fail(w, "%s with a weight or bias that is not a graph value", name);
        if (wp)
            wvv = *wp;
        if (bp)
            bvv = *bp;
        const struct nval *wv = wp ? &wvv : NULL, *bv = bp ? &bvv : NULL;
        if (rms) {
            rc = emit_rms(w, nname, x->name, last_dims(x->ndim, k), eps, -1, wv ? wv->name : NULL, name);
        } else {
            /* the weight and bias are graph values here: multiply and add them as such */
            char *nrm = fresh_name(w), *wn = fresh_name(w);
            const char *last = wv || bv ? nrm : nname;
            rc = emit_standardise(w, last, x->name, last_dims(x->ndim, k), false, eps, -1, -1, -1, NULL,
                                  NULL, name);
            if (!rc && wv)
                emit_bin(w, bv ? wn : nname, "_operator.mul", nrm, wv->name, 0);
            if (!rc && bv)
                emit_bin(w, nname, "_operator.add", wv ? wn : nrm, bv->name, 0);
            free(nrm);
            free(wn);
        }
        snprintf(w->what, sizeof w->what, "%s over the last %d dim%s", name, k, k > 1 ? "s" : "");
    }
    if (!rc)
        set_tensor(w, nname, x->ndim, x->shape);
    return rc;
}

/* Modules and functions whose names fx may print for the reductions handled here. */
static bool torch_module(const char *target, const char **fname)
{
    static const char *mods[] = { "torch", "torch.nn.functional", "torch._C._nn", "torch.functional",
                                  "torch.linalg", "torch._C._linalg", "torch._C._VariableFunctions",
                                  "torch.Tensor", "torch._tensor", "_operator", "operator", "builtins" };
    const char *dot = strrchr(target, '.');
    *fname = dot ? dot + 1 : target;
    if (!dot)
        return true;
    for (size_t i = 0; i < sizeof mods / sizeof mods[0]; i++)
        if (strlen(mods[i]) == (size_t)(dot - target) && !strncmp(mods[i], target, (size_t)(dot - target)))
            return true;
    return false;
}

/* Operators that change shapes (views, matrix products, modules other than activations). */
static bool shape_changing(const char *op, const char *fname, const json_t *node)
{
    if (!strcmp(op, "call_module")) {
        static const char *act[] = { "ReLU", "ReLU6", "Sigmoid", "Tanh", "SELU", "SiLU", "Mish", "Softsign",
                                     "Hardsigmoid", "Hardswish", "LogSigmoid", "GELU", "LeakyReLU", "ELU",
                                     "Hardtanh", "Softplus", "Identity", "Dropout", "CELU" };
        const char *cls = json_string_value(json_object_get(node, "module"));
        for (size_t i = 0; cls && i < sizeof act / sizeof act[0]; i++)
            if (!strcmp(cls, act[i]))
                return false;
        return true;
    }
    static const char *ops[] = { "view", "reshape", "flatten", "unflatten", "squeeze", "unsqueeze", "permute",
                                 "transpose", "t", "expand", "expand_as", "repeat", "contiguous", "matmul", "mm",
                                 "bmm", "linear", "conv1d", "conv2d", "conv3d", "einsum", "cat", "stack", "split",
                                 "chunk", "narrow", "select", "index_select", "gather", "flip", "roll", "cumsum",
                                 "cumprod", "softmax", "log_softmax", "getitem", "getattr", "size", "pad",
                                 "interpolate", "max_pool2d", "avg_pool2d" };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (!strcmp(fname, ops[i]))
            return true;
    return false;
}

static int walk_one(struct nwalk *w, const json_t *node)
{
    const char *op = json_string_value(json_object_get(node, "op"));
    const char *target = json_string_value(json_object_get(node, "target"));
    const char *name = json_string_value(json_object_get(node, "name"));
    if (!op || !target || !name)
        return nw_fail(w, "%s", "a graph node without op, target or name");
    if (!strcmp(op, "placeholder")) {
        int k = w->placeholders++;
        struct nval *v = nv_add(w, name);
        if (k < (int)json_array_size(w->inputs))
            tensor_shape(json_array_get(w->inputs, (size_t)k), v);
        json_array_append(w->g2, (json_t *)node);
        return 0;
    }
    if (!strcmp(op, "get_attr")) {
        struct nval *v = nv_add(w, name);
        int k = input_index(w->inputs, target);
        if (k >= 0)
            tensor_shape(json_array_get(w->inputs, (size_t)k), v);
        json_array_append(w->g2, (json_t *)node);
        return 0;
    }
    if (!strcmp(op, "output")) {
        json_array_append(w->g2, (json_t *)node);
        return 0;
    }
    const char *fname = target;
    int rc = -2;
    if (!strcmp(op, "call_module")) {
        const char *cls = json_string_value(json_object_get(node, "module"));
        if (cls)
            rc = norm_module(w, cls, node);
    } else if (!strcmp(op, "call_function") || !strcmp(op, "call_method")) {
        bool known = true;
        if (!strcmp(op, "call_function"))
            known = torch_module(target, &fname);
        if (known && (!strcmp(fname, "getitem") || !strcmp(fname, "getattr"))) {
            struct nval *pair = ref_of(w, arg_at(node, 0, NULL));
            if (pair && pair->kind == NV_PAIR)
                return pair_item(w, node, fname, pair);
        }
        if (known)
            rc = reduction(w, fname, node);
        if (known && rc == -2)
            rc = norm_function(w, fname, node);
    }
    if (rc != -2)
        return rc;
    /* anything else: elementwise as far as shapes go (the pointwise recogniser decides),
     * except what changes shapes: then the value's shape is unknown, and a norm or a
     * reduction of it is not ours (the other families' reason stands) */
    struct nval v;
    memset(&v, 0, sizeof v);
    bool any = false, bad = shape_changing(op, fname, node);
    elementwise_shape(w, json_object_get(node, "args"), &v, &any, &bad);
    elementwise_shape(w, json_object_get(node, "kwargs"), &v, &any, &bad);
    struct nval *nv = nv_add(w, name);
    if (any && !bad) {
        nv->kind = NV_TENSOR;
        nv->ndim = v.ndim;
        memcpy(nv->shape, v.shape, sizeof v.shape);
    } else {
        nv->kind = any ? NV_OTHER : NV_CONST;
    }
    json_array_append(w->g2, (json_t *)node);
    return 0;
}

/* ================================================================== the view and the sub-specs */

/* Maps original dims to view dims: GroupNorm splits dim gn_dim into (groups, rest). */
static int view_nd(const struct nwalk *w)
{
    return w->out_nd + (w->gn_groups ? 1 : 0);
}

static unsigned view_mask(const struct nwalk *w, const struct stat_src *s)
{
    if (!w->gn_groups)
        return s->mask;
    if (s->gn) {
        unsigned m = 0;
        for (int d = w->gn_dim + 1; d < view_nd(w); d++)
            m |= 1u << d;
        return m;
    }
    unsigned m = 0;
    for (int d = 0; d < w->out_nd; d++) {
        if (!(s->mask & (1u << d)))
            continue;
        if (d < w->gn_dim)
            m |= 1u << d;
        else if (d == w->gn_dim)
            m |= 3u << d;
        else
            m |= 1u << (d + 1);
    }
    return m;
}

/*
 * The view of a tensor right-aligned to the output (nd dims, shape, strides in elements),
 * placed along chan when chan >= 0 (a 1-D channel parameter), with the GroupNorm split.
 */
static void view_tensor(const struct nwalk *w, int nd, const int64_t *shape, const int64_t *stride, int chan,
                        int *vnd, int64_t *vshape, int64_t *vstride)
{
    int64_t s[RECIPE_NORM_VIEW_DIMS], st[RECIPE_NORM_VIEW_DIMS];
    int n = nd;
    memcpy(s, shape, (size_t)nd * sizeof *s);
    memcpy(st, stride, (size_t)nd * sizeof *st);
    if (chan >= 0 && nd == 1) {
        /* (C,) along dim chan of the output: (C, 1, ..., 1) */
        n = w->out_nd - chan;
        for (int d = 1; d < n; d++) {
            s[d] = 1;
            st[d] = 0;
        }
    }
    *vnd = 0;
    int lead = w->out_nd - n;
    for (int j = 0; j < n; j++) {
        int d = j + lead;
        if (w->gn_groups && d == w->gn_dim) {
            int64_t g = s[j] == 1 ? 1 : w->gn_groups;
            vshape[*vnd] = g;
            vstride[(*vnd)++] = st[j] * (s[j] / g);
            vshape[*vnd] = s[j] / g;
            vstride[(*vnd)++] = st[j];
        } else {
            vshape[*vnd] = s[j];
            vstride[(*vnd)++] = st[j];
        }
    }
}

static json_t *int_array(int n, const int64_t *v)
{
    json_t *a = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(a, json_integer(v[i]));
    return a;
}

/* A tensor entry of the sub-specs: the spec's, viewed. */
static json_t *view_entry(const struct nwalk *w, const json_t *t, int chan)
{
    json_t *c = json_deep_copy(t);
    const json_t *shape = json_object_get(t, "shape"), *stride = json_object_get(t, "stride");
    int nd = (int)json_array_size(shape);
    int64_t s[RECIPE_MAX_DIMS], st[RECIPE_MAX_DIMS], acc = 1;
    for (int d = nd - 1; d >= 0; d--) {
        s[d] = json_integer_value(json_array_get(shape, (size_t)d));
        const json_t *sd = json_is_array(stride) ? json_array_get(stride, (size_t)d) : NULL;
        st[d] = sd ? json_integer_value(sd) : acc;
        acc *= s[d];
    }
    if (nd > w->out_nd)
        return c; /* larger than the output: the pointwise recogniser refuses it */
    int vnd;
    int64_t vs[RECIPE_NORM_VIEW_DIMS], vst[RECIPE_NORM_VIEW_DIMS];
    view_tensor(w, nd, s, st, chan, &vnd, vs, vst);
    json_object_set_new(c, "shape", int_array(vnd, vs));
    json_object_set_new(c, "stride", int_array(vnd, vst));
    return c;
}

/* The sub-spec: the spec with viewed tensors, the pseudo-inputs, and graph ending in
 * `graph`'s nodes up to (not including) index `cut` followed by output(%result). */
static json_t *sub_spec(const struct nwalk *w, size_t cut, const char *result)
{
    json_t *s = json_object();
    json_t *ins = json_array();
    for (size_t i = 0; i < json_array_size(w->inputs); i++)
        json_array_append_new(ins, view_entry(w, json_array_get(w->inputs, i), w->chan_dim[i]));
    /* the statistics: the output's view with the reduced block kept as 1 */
    int vnd = view_nd(w);
    int64_t one[RECIPE_NORM_VIEW_DIMS];
    for (int k = 0; k < w->n_st; k++) {
        unsigned m = view_mask(w, &w->st[k]);
        int onnd;
        int64_t os[RECIPE_NORM_VIEW_DIMS], ost[RECIPE_NORM_VIEW_DIMS], ostr[RECIPE_MAX_DIMS];
        for (int d = 0; d < w->out_nd; d++)
            ostr[d] = 0;
        view_tensor(w, w->out_nd, w->out_shape, ostr, -1, &onnd, os, ost);
        for (int d = 0; d < vnd; d++)
            one[d] = (m & (1u << d)) ? 1 : os[d];
        int64_t acc = 1, cst[RECIPE_NORM_VIEW_DIMS];
        for (int d = vnd - 1; d >= 0; d--) {
            cst[d] = acc;
            acc *= one[d];
        }
        int nsl = w->st[k].kind == NS_VAR ? 2 : 1;
        for (int j = 0; j < nsl; j++) {
            char name[32];
            snprintf(name, sizeof name, "__stat%d", w->st[k].slot + j);
            json_array_append_new(ins, json_pack("{s:s, s:s, s:s, s:o, s:o}", "name", name, "kind", "param",
                                                 "dtype", w->out_dtype, "shape", int_array(vnd, one),
                                                 "stride", int_array(vnd, cst)));
        }
    }
    json_object_set_new(s, "inputs", ins);
    /* the output (for a prologue: the operand, which has the output's shape and dtype) */
    json_t *out = view_entry(w, json_array_get(json_object_get(w->spec, "outputs"), 0), -1);
    json_object_set_new(s, "outputs", json_pack("[o]", out));
    json_t *g = json_array();
    for (size_t i = 0; i < cut && i < json_array_size(w->g2); i++)
        json_array_append(g, json_array_get(w->g2, i));
    if (result) {
        char ref[100];
        snprintf(ref, sizeof ref, "%%%s", result);
        json_array_append_new(g, json_pack("{s:s, s:s, s:s, s:[s], s:{}}", "name", "output", "op", "output",
                                           "target", "output", "args", ref, "kwargs"));
    }
    json_object_set_new(s, "graph", g);
    json_object_set_new(s, "graph_error", json_null());
    json_object_set_new(s, "__norm_sub", json_true());
    return s;
}

/* Index in g2 of the node named name, or the size when absent. */
static size_t g2_index(const struct nwalk *w, const char *name)
{
    for (size_t i = 0; i < json_array_size(w->g2); i++) {
        const char *n = json_string_value(json_object_get(json_array_get(w->g2, i), "name"));
        if (n && !strcmp(n, name))
            return i;
    }
    return json_array_size(w->g2);
}

/* Recognises a sub-spec as a pointwise expression; appends its nodes to p. Returns the
 * root's index in p, or -1 (why says why). */
static int sub_expr(const json_t *sub, recipe_plan *p, enum recipe_in_kind *kinds, int n_real, strbuf *why)
{
    recipe_plan q;
    recipe_plan_init(&q);
    strbuf r = STRBUF_INIT;
    int rc = recipe_recognise(sub, &q, &r);
    int root = -1;
    if (rc == 0 && q.family != RECIPE_POINTWISE) {
        strbuf_reset(why);
        strbuf_adds(why, "not covered: a statistic's operand or the normalised output is not pointwise");
    } else if (rc != 0) {
        strbuf_reset(why);
        strbuf_add(why, r.buf, r.len);
    } else {
        int off = p->n_nodes;
        if (p->n_nodes + q.n_nodes > p->alloc) {
            p->alloc = p->n_nodes + q.n_nodes + 16;
            p->nodes = xrealloc(p->nodes, (size_t)p->alloc * sizeof *p->nodes);
        }
        for (int i = 0; i < q.n_nodes; i++) {
            rx_node n = q.nodes[i];
            if (n.a >= 0)
                n.a += off;
            if (n.b >= 0)
                n.b += off;
            p->nodes[p->n_nodes++] = n;
        }
        root = q.root + off;
        for (int i = 0; i < n_real; i++)
            if (q.kind[i] != RK_UNUSED)
                kinds[i] = q.kind[i];
    }
    strbuf_release(&r);
    recipe_plan_release(&q);
    return root;
}

/* The slots node n reads, as a bit mask. */
static unsigned slots_read(const recipe_plan *p, int n, int n_inputs)
{
    if (n < 0)
        return 0;
    const rx_node *x = &p->nodes[n];
    unsigned m = x->op == RX_INPUT && x->input >= n_inputs ? 1u << (x->input - n_inputs) : 0;
    return m | slots_read(p, x->a, n_inputs) | slots_read(p, x->b, n_inputs);
}

static int elem_size(const char *dtype)
{
    return (!strcmp(dtype, "float16") || !strcmp(dtype, "bfloat16")) ? 2 : 4;
}

/* Fills the plan's view, strides and access patterns; 1 not covered. */
static int finish_view(const struct nwalk *w, recipe_plan *p, recipe_norm *nm, strbuf *why)
{
    int64_t zero[RECIPE_MAX_DIMS] = { 0 }, ost[RECIPE_NORM_VIEW_DIMS];
    view_tensor(w, w->out_nd, w->out_shape, zero, -1, &nm->ndim, nm->shape, ost);
    unsigned m = nm->n_stats ? view_mask(w, &w->st[0]) : 0;
    for (int k = 1; k < w->n_st; k++)
        if (view_mask(w, &w->st[k]) != m) {
            strbuf_adds(why, "not covered: statistics over different dims");
            return 1;
        }
    if (m == 0) {
        nm->d0 = nm->d1 = nm->ndim;
    } else {
        nm->d0 = __builtin_ctz(m);
        nm->d1 = nm->d0;
        while (nm->d1 < nm->ndim && (m & (1u << nm->d1)))
            nm->d1++;
        if (m >> nm->d1) {
            strbuf_adds(why, "not covered: a reduction over dims that are not adjacent");
            return 1;
        }
    }
    p->outer = p->r = p->inner = 1;
    for (int d = 0; d < nm->ndim; d++) {
        if (d < nm->d0)
            p->outer *= nm->shape[d];
        else if (d < nm->d1)
            p->r *= nm->shape[d];
        else
            p->inner *= nm->shape[d];
    }
    int vec = 16 / elem_size(p->output.dtype);
    int last = nm->ndim - 1;
    for (int i = 0; i < p->n_inputs; i++) {
        const recipe_tensor *t = &p->inputs[i];
        int vnd;
        int64_t vs[RECIPE_NORM_VIEW_DIMS], vst[RECIPE_NORM_VIEW_DIMS];
        view_tensor(w, t->ndim, t->shape, t->stride, w->chan_dim[i], &vnd, vs, vst);
        int lead = nm->ndim - vnd;
        for (int d = 0; d < nm->ndim; d++) {
            int j = d - lead;
            nm->vstride[i][d] = (j < 0 || vs[j] == 1) ? 0 : vst[j];
        }
        nm->access[i] = NA_ELEM;
        if (p->kind[i] != RK_BCAST || nm->ndim == 0 || nm->shape[last] % vec)
            continue;
        if (nm->vstride[i][last] == 0) {
            nm->access[i] = NA_UNIFORM;
        } else if (nm->vstride[i][last] == 1 && elem_size(t->dtype) == elem_size(p->output.dtype)) {
            bool ok = true;
            for (int d = 0; d < last; d++)
                ok = ok && nm->vstride[i][d] % vec == 0;
            if (ok)
                nm->access[i] = NA_VECTOR;
        }
    }
    /* the kernels read full-size inputs as the output's flat layout */
    for (int i = 0; i < p->n_inputs; i++) {
        if (p->kind[i] != RK_FULL)
            continue;
        int64_t expect = 1;
        for (int d = p->inputs[i].ndim - 1; d >= 0; d--) {
            if (p->inputs[i].shape[d] != 1 && p->inputs[i].stride[d] != expect) {
                strbuf_addf(why, "not covered: input '%s' is not contiguous", p->inputs[i].name);
                return 1;
            }
            expect *= p->inputs[i].shape[d];
        }
    }
    return 0;
}

int recipe_norm_recognise(const json_t *spec, recipe_plan *p, strbuf *why)
{
    if (json_is_true(json_object_get(spec, "__norm_sub")))
        return 2;
    const json_t *graph = json_object_get(spec, "graph");
    const json_t *ins = json_object_get(spec, "inputs"), *outs = json_object_get(spec, "outputs");
    if (!json_is_array(graph) || !json_is_array(ins) || json_array_size(outs) != 1 ||
        json_array_size(ins) > RECIPE_MAX_INPUTS)
        return 2;
    const json_t *o = json_array_get(outs, 0);
    const char *odt = json_string_value(json_object_get(o, "dtype"));
    const json_t *oshape = json_object_get(o, "shape");
    if (!odt || !json_is_array(oshape) || json_array_size(oshape) > RECIPE_MAX_DIMS)
        return 2;

    struct nwalk w;
    memset(&w, 0, sizeof w);
    w.spec = spec;
    w.inputs = ins;
    w.why = why;
    w.g2 = json_array();
    w.out_dtype = odt;
    w.out_nd = (int)json_array_size(oshape);
    for (int d = 0; d < w.out_nd; d++)
        w.out_shape[d] = json_integer_value(json_array_get(oshape, (size_t)d));
    for (int i = 0; i < RECIPE_MAX_INPUTS; i++)
        w.chan_dim[i] = -1;
    strbuf saved = STRBUF_INIT;
    strbuf_add(&saved, why->buf, why->len);

    int rc = 0;
    for (size_t i = 0; i < json_array_size(graph) && rc == 0; i++)
        rc = walk_one(&w, json_array_get(graph, i));
    if ((rc == 1 && w.foreign) || (rc == 0 && w.n_st == 0 && w.modules == 0)) {
        /* nothing normalised here: the other families' reason stands */
        strbuf_reset(why);
        strbuf_add(why, saved.buf, saved.len);
        rc = 2;
    }
    if (rc == 0 && strcmp(odt, "float32") && strcmp(odt, "float16") && strcmp(odt, "bfloat16"))
        rc = nw_fail(&w, "a normalisation whose output is %s", odt);

    recipe_norm *nm = NULL;
    if (rc == 0) {
        recipe_plan_release(p);
        nm = xcalloc(1, sizeof *nm);
        p->norm = nm;
        p->n_inputs = (int)json_array_size(ins);
        for (int i = 0; i < p->n_inputs && rc == 0; i++)
            rc = recipe_read_tensor(json_array_get(ins, (size_t)i), &p->inputs[i], why);
        if (rc == 0)
            rc = recipe_read_tensor(o, &p->output, why);
    }
    enum recipe_in_kind kinds[RECIPE_MAX_INPUTS] = { RK_UNUSED };
    if (rc == 0) {
        /* the output, then each statistic's prologue */
        json_t *sub = sub_spec(&w, json_array_size(w.g2), NULL);
        p->root = sub_expr(sub, p, kinds, p->n_inputs, why);
        json_decref(sub);
        if (p->root < 0)
            rc = 1;
        for (int k = 0; k < w.n_st && rc == 0; k++) {
            sub = sub_spec(&w, g2_index(&w, w.st[k].operand) + 1, w.st[k].operand);
            int root = sub_expr(sub, p, kinds, p->n_inputs, why);
            json_decref(sub);
            if (root < 0) {
                rc = 1;
                break;
            }
            norm_stat *s = &nm->stat[k];
            s->kind = w.st[k].kind;
            s->root = root;
            s->slot = w.st[k].slot;
            unsigned reads = slots_read(p, root, p->n_inputs);
            s->level = 0;
            for (int j = 0; j < k; j++)
                if ((reads >> nm->stat[j].slot) & (nm->stat[j].kind == NS_VAR ? 3u : 1u))
                    s->level = s->level > nm->stat[j].level + 1 ? s->level : nm->stat[j].level + 1;
            if (s->level > 1)
                rc = nw_fail(&w, "%s", "statistics of statistics of statistics (three levels)");
            if (s->level + 1 > nm->levels)
                nm->levels = s->level + 1;
        }
    }
    if (rc == 0) {
        nm->n_stats = w.n_st;
        nm->n_slots = w.n_slots;
        memcpy(nm->slot_name, w.slot_name, sizeof nm->slot_name);
        snprintf(nm->what, sizeof nm->what, "%s", w.what[0] ? w.what : "statistics broadcast back");
        memcpy(p->kind, kinds, sizeof kinds);
        p->family = RECIPE_NORM;
        rc = finish_view(&w, p, nm, why);
    }
    if (rc == 0)
        strbuf_reset(why);
    else if (rc != 2)
        p->family = RECIPE_NONE;
    strbuf_release(&saved);
    json_decref(w.g2);
    free(w.vals);
    return rc;
}

/* ================================================================== describing */

static const char *stat_kind_name(enum norm_stat_kind k)
{
    static const char *names[] = { "sum", "max", "min", "mean and variance" };
    return (unsigned)k < 4 ? names[k] : "?";
}

static void view_text(const recipe_norm *nm, strbuf *out)
{
    strbuf_addc(out, '[');
    for (int d = 0; d < nm->ndim; d++)
        strbuf_addf(out, "%s%lld", d ? ", " : "", (long long)nm->shape[d]);
    strbuf_addc(out, ']');
}

static void tensor_text(const recipe_tensor *t, strbuf *out)
{
    strbuf_addf(out, "%s %s [", t->name, t->dtype);
    for (int d = 0; d < t->ndim; d++)
        strbuf_addf(out, "%s%lld", d ? ", " : "", (long long)t->shape[d]);
    strbuf_addc(out, ']');
}

static void slots_text(const recipe_norm *nm, const norm_stat *s, strbuf *out)
{
    strbuf_adds(out, nm->slot_name[s->slot]);
    if (s->kind == NS_VAR)
        strbuf_addf(out, ", %s", nm->slot_name[s->slot + 1]);
}

/* More than any GPU holds on chip (an H200: 50 MB of L2, ~30 MB of shared memory and ~34 MB
 * of registers; a B200 about twice that). */
#define NORM_ONCHIP_BYTES (256.0 * 1024 * 1024)

static double tensor_bytes(const recipe_tensor *t)
{
    double n = elem_size(t->dtype);
    for (int d = 0; d < t->ndim; d++)
        n *= (double)t->shape[d];
    return n;
}

/* The statistics of a block of r elements come before any of its outputs. A block larger
 * than on-chip memory is read again for its outputs, whatever the kernel: the traffic
 * floor is then the full-size inputs twice, not once, and the speed of light taken over
 * the inputs and outputs once is out of reach by that ratio. Says so, with the ratio. */
static void traffic_text(const recipe_plan *p, strbuf *out)
{
    double block = (double)p->r * elem_size(p->output.dtype), once = tensor_bytes(&p->output), full = 0;
    if (block <= NORM_ONCHIP_BYTES)
        return;
    for (int i = 0; i < p->n_inputs; i++) {
        if (p->kind[i] == RK_UNUSED)
            continue;
        once += tensor_bytes(&p->inputs[i]);
        if (p->kind[i] == RK_FULL)
            full += tensor_bytes(&p->inputs[i]);
    }
    strbuf_addf(out, "traffic: a statistic's block is %.0f MiB, more than a GPU holds on chip, and its "
                     "statistics come before its outputs: its full-size inputs are read twice whatever the "
                     "kernel (%.0f%% of the speed of light over inputs and outputs once at best)\n",
                block / (1024.0 * 1024.0), 100.0 * once / (once + full));
}

void recipe_norm_describe(const recipe_plan *p, strbuf *out)
{
    static const char *kinds[] = { "unused", "full (16-byte vectors)", "scalar (one element)",
                                   "broadcast (by strides)" };
    static const char *access[] = { "", ", an element at a time", ", one element a vector",
                                    ", 16-byte vectors" };
    const recipe_norm *nm = p->norm;
    strbuf_addf(out, "family: norm (%s)\n", nm->what);
    for (int i = 0; i < p->n_inputs; i++) {
        strbuf_addf(out, "input %d: ", i);
        tensor_text(&p->inputs[i], out);
        strbuf_addf(out, ": %s%s\n", kinds[p->kind[i]], p->kind[i] == RK_BCAST ? access[nm->access[i] + 1] : "");
    }
    strbuf_adds(out, "output: ");
    tensor_text(&p->output, out);
    strbuf_adds(out, "\nview: ");
    view_text(nm, out);
    if (nm->n_stats)
        strbuf_addf(out, ", statistics over dims [%d, %d): (outer %lld, r %lld, inner %lld), %s\n", nm->d0, nm->d1,
                    (long long)p->outer, (long long)p->r, (long long)p->inner,
                    p->inner == 1 ? "rows along the last dims" : "columns (strided)");
    else
        strbuf_adds(out, ", no statistics: one pointwise pass\n");
    for (int k = 0; k < nm->n_stats; k++) {
        const norm_stat *s = &nm->stat[k];
        strbuf_addf(out, "statistic %d (pass %d): ", k, s->level);
        slots_text(nm, s, out);
        strbuf_addf(out, " = %s of ", stat_kind_name(s->kind));
        rx_format(p, s->root, out);
        strbuf_addc(out, '\n');
    }
    strbuf_adds(out, "output = ");
    rx_format(p, p->root, out);
    strbuf_addc(out, '\n');
    if (nm->n_stats)
        traffic_text(p, out);
}

void recipe_norm_summary(const recipe_plan *p, strbuf *out)
{
    const recipe_norm *nm = p->norm;
    strbuf_addf(out, "norm %s: ", nm->what);
    for (int k = 0; k < nm->n_stats; k++) {
        const norm_stat *s = &nm->stat[k];
        slots_text(nm, s, out);
        strbuf_addf(out, " = %s of ", stat_kind_name(s->kind));
        rx_format(p, s->root, out);
        strbuf_adds(out, "; ");
    }
    if (nm->n_stats)
        strbuf_addf(out, "over dims [%d, %d) of ", nm->d0, nm->d1);
    else
        strbuf_adds(out, "no statistics, ");
    view_text(nm, out);
    strbuf_adds(out, "; out = ");
    rx_format(p, p->root, out);
    strbuf_addf(out, " -> %s [", p->output.dtype);
    for (int d = 0; d < p->output.ndim; d++)
        strbuf_addf(out, "%s%lld", d ? ", " : "", (long long)p->output.shape[d]);
    strbuf_addc(out, ']');
}

/* ================================================================== CPU evaluation */

/* Fills x[0..n_inputs) with the inputs' values at flat output index idx. */
static void gather(const recipe_plan *p, const float *const *in, int64_t idx, float *x)
{
    const recipe_norm *nm = p->norm;
    int64_t coord[RECIPE_NORM_VIEW_DIMS], rest = idx;
    for (int d = nm->ndim - 1; d >= 0; d--) {
        coord[d] = rest % nm->shape[d];
        rest /= nm->shape[d];
    }
    for (int i = 0; i < p->n_inputs; i++) {
        x[i] = 0.f;
        if (p->kind[i] == RK_FULL) {
            x[i] = in[i][idx];
        } else if (p->kind[i] == RK_SCALAR) {
            x[i] = in[i][0];
        } else if (p->kind[i] == RK_BCAST) {
            int64_t off = 0;
            for (int d = 0; d < nm->ndim; d++)
                off += coord[d] * nm->vstride[i][d];
            x[i] = in[i][off];
        }
    }
}

void recipe_norm_eval_slots(const recipe_plan *p, const float *const *in, int64_t o, int64_t n, float *slots)
{
    const recipe_norm *nm = p->norm;
    float x[RECIPE_MAX_INPUTS + RECIPE_NORM_MAX_SLOTS];
    for (int s = 0; s < nm->n_slots; s++)
        slots[s] = 0.f;
    for (int level = 0; level < nm->levels; level++) {
        for (int k = 0; k < nm->n_stats; k++) {
            const norm_stat *st = &nm->stat[k];
            if (st->level != level)
                continue;
            double acc = st->kind == NS_MAX ? -INFINITY : st->kind == NS_MIN ? INFINITY : 0.0, m2 = 0.0;
            for (int pass = 0; pass < (st->kind == NS_VAR ? 2 : 1); pass++) {
                for (int64_t r = 0; r < p->r; r++) {
                    gather(p, in, (o * p->r + r) * p->inner + n, x);
                    memcpy(x + p->n_inputs, slots, (size_t)nm->n_slots * sizeof *slots);
                    double v = rx_eval(p, st->root, x, 0.f);
                    if (st->kind == NS_SUM || (st->kind == NS_VAR && pass == 0))
                        acc += v;
                    else if (st->kind == NS_VAR)
                        m2 += (v - acc) * (v - acc);
                    else if (st->kind == NS_MAX)
                        acc = (v != v || v > acc) ? v : acc;
                    else
                        acc = (v != v || v < acc) ? v : acc;
                }
                if (st->kind == NS_VAR && pass == 0)
                    acc /= (double)p->r;
            }
            slots[st->slot] = (float)acc;
            if (st->kind == NS_VAR)
                slots[st->slot + 1] = (float)(m2 / (double)p->r);
        }
    }
}

float recipe_norm_eval_out(const recipe_plan *p, const float *const *in, int64_t idx)
{
    const recipe_norm *nm = p->norm;
    float x[RECIPE_MAX_INPUTS + RECIPE_NORM_MAX_SLOTS], slots[RECIPE_NORM_MAX_SLOTS];
    int64_t n = idx % p->inner, o = idx / (p->r * p->inner);
    recipe_norm_eval_slots(p, in, o, n, slots);
    gather(p, in, idx, x);
    memcpy(x + p->n_inputs, slots, (size_t)nm->n_slots * sizeof *slots);
    return rx_eval(p, p->root, x, 0.f);
}

/* ================================================================== variants and generation */

enum norm_mode recipe_norm_mode(const recipe_plan *p, const recipe_params *k)
{
    if (p->norm->n_stats == 0)
        return NM_POINTWISE;
    if (k->split > 1)
        return k->cache > 0 && p->inner == 1 ? NM_HOLD : NM_SPLIT;
    return p->inner == 1 ? NM_ROWS : NM_COLS;
}

static int plan_vec(const recipe_plan *p)
{
    return 16 / elem_size(p->output.dtype);
}

static int n_full(const recipe_plan *p)
{
    int n = 0;
    for (int i = 0; i < p->n_inputs; i++)
        n += p->kind[i] == RK_FULL;
    return n > 0 ? n : 1;
}

/* 16-byte vectors of a row, at most (a row that does not start on a vector boundary
 * touches one more). */
static int64_t row_vecs(const recipe_plan *p)
{
    int64_t vec = plan_vec(p);
    return p->r % vec == 0 ? p->r / vec : (p->r + 2 * vec - 2) / vec;
}

/* 32-bit registers a thread may spend on held data at this CTA size: at 1024 threads
 * the cap is 64 registers a thread, at 512 it is 128, at 256 two CTAs an SM leave 128. */
static int reg_budget(int threads)
{
    return threads >= 1024 ? 32 : threads >= 512 ? 80 : 96;
}

/* Whether a row of `chunks` chunks can be held by persistent CTAs of `threads` threads (a
 * CTA holds two chunks, 768 / threads CTAs an SM): its chunks fit twice those CTAs. */
static bool persistent_fits(int64_t chunks, int threads, int sms)
{
    return threads <= 256 && chunks <= (int64_t)2 * (768 / threads) * sms;
}

static int push_k(recipe_params *out, int n, int max, recipe_params k)
{
    for (int i = 0; i < n; i++)
        if (!memcmp(&out[i], &k, sizeof k))
            return n;
    if (n < max)
        out[n++] = k;
    return n;
}

static int pow2_ge(int64_t v)
{
    int r = 1;
    while (r < v && r < (1 << 20))
        r <<= 1;
    return r;
}

/*
 * The variants, best guess first (docs/recipes.md, "Variants and pruning"):
 * - no statistics: the pointwise pass, (threads, unroll) as the pointwise family;
 * - rows: a warp a row holding it in registers (short rows), a CTA a row holding it, a
 *   cluster of 2-8 CTAs holding it (sm_90; rows too long for one CTA), the row split
 *   over CTAs that hold it, taking its chunks in order (rows too long for a cluster), the
 *   row split over CTAs through the workspace (fewer rows than 2 CTAs an SM), and a CTA
 *   a row streaming it; registers held per thread stay within reg_budget();
 * - columns: a thread a column holding it (R <= 64), streaming it, and split over CTAs
 *   when there are too few columns for the GPU.
 */
int recipe_norm_variants(const recipe_plan *p, const recipe_hw *hw, recipe_params *out, int max)
{
    int n = 0;
    const int vec = plan_vec(p), nf = n_full(p), sms = hw->sms > 0 ? hw->sms : 132;
    const int tmax = hw->max_threads_per_sm < 1024 ? hw->max_threads_per_sm : 1024;
    if (p->norm->n_stats == 0) {
        static const int cand[][2] = { { 256, 4 }, { 512, 2 }, { 128, 8 }, { 256, 2 } };
        int64_t elems = p->outer * p->r * p->inner;
        for (size_t c = 0; c < sizeof cand / sizeof cand[0]; c++) {
            recipe_params k = { .threads = cand[c][0], .unroll = cand[c][1], .split = 1 };
            int64_t tile = (int64_t)k.threads * k.unroll * vec;
            if (k.threads > tmax || k.unroll * 4 * (nf + 1) > 96 || ((elems + tile - 1) / tile < 2 * sms && n > 0))
                continue;
            n = push_k(out, n, max, k);
        }
        if (n == 0)
            n = push_k(out, n, max, (recipe_params){ .threads = 128, .unroll = 1, .split = 1 });
        return n;
    }
    if (p->inner == 1) {
        const int64_t nv = row_vecs(p), rows = p->outer;
        /* a warp a row */
        if (nv <= 32 * 16)
            for (int t = 256; t >= 128; t /= 2) {
                int vecs = (int)((nv + 31) / 32);
                if (t <= tmax && vecs * 4 * nf <= reg_budget(t))
                    n = push_k(out, n, max, (recipe_params){ .threads = t, .row_threads = 32, .split = 1, .cache = vecs });
            }
        /* a CTA a row */
        static const int cta[] = { 256, 512, 1024 };
        bool fits_cta = false;
        for (size_t c = 0; c < 3; c++) {
            int t = cta[c];
            int64_t vecs = (nv + t - 1) / t;
            if (t > tmax || vecs * 4 * nf > reg_budget(t) || (vecs < 2 && t > 256 && fits_cta))
                continue;
            fits_cta = true;
            n = push_k(out, n, max, (recipe_params){ .threads = t, .row_threads = t, .split = 1, .cache = (int)vecs });
        }
        /* a cluster a row: only for rows one CTA cannot hold; first the shapes that leave
         * a thread few vectors (<= 12) so that two CTAs fit an SM (one CTA's loads overlap
         * the other's stores), then one CTA an SM */
        recipe_params cl_k[8], hold_k[4], pf_k[2], late_persist = { 0 };
        int ncl = 0, nhold = 0, light = 0, npf = 0;
        if (!fits_cta && hw->sm >= 90 && rows * 8 <= 0x7fffffff) {
            static const int ct[][3] = { { 256, 8, 2 }, { 256, 4, 2 }, { 512, 2, 1 }, { 512, 4, 1 }, { 256, 4, 1 },
                                         { 1024, 4, 1 }, { 512, 8, 1 }, { 256, 8, 1 }, { 1024, 8, 1 } };
            for (size_t c = 0; c < sizeof ct / sizeof ct[0] && ncl < 4 + light; c++) {
                int t = ct[c][0], cl = ct[c][1], mb = ct[c][2];
                int64_t vecs = (nv + (int64_t)cl * t - 1) / ((int64_t)cl * t);
                if (t > tmax || vecs * 4 * nf > reg_budget(t) || (mb > 1 && vecs * 4 * nf > 48))
                    continue;
                light += mb > 1;
                cl_k[ncl++] = (recipe_params){ .threads = t, .row_threads = t, .split = 1, .cache = (int)vecs,
                                               .cluster = cl, .min_blocks = mb };
            }
            /* persistent clusters of 8 holding a row in registers, the next row's chunks
             * bulk-copied to shared memory meanwhile: rows of exactly their registers.
             * H200 (docs/perf.md, lab round 11, 34_InstanceNorm, rows of 1 MB): 512
             * threads 3.901 ms, 1024 threads 3.967, persistent held chunks 4.874 */
            static const int pt[] = { 512, 1024 };
            for (size_t c = 0; c < 2 && p->r % vec == 0; c++) {
                int64_t vecs = nv / (8 * (int64_t)pt[c]);
                if (pt[c] > tmax || vecs < 1 || vecs * 8 * pt[c] != nv || vecs * 4 * nf > reg_budget(pt[c]) ||
                    (int64_t)nf * pt[c] * vecs * 16 > hw->smem_per_block - 1024)
                    continue;
                pf_k[npf++] = (recipe_params){ .threads = pt[c], .row_threads = pt[c], .split = 1, .cache = (int)vecs,
                                               .cluster = 8, .prefetch = 1 };
            }
        }
        /* a row longer than a prefetching cluster of 8 holds, held by a group of persistent
         * CTAs (one an SM, 512 threads) exchanging partial statistics through the
         * workspace, each bulk-copying its chunk of its group's next row meanwhile: rows of
         * exactly the group's registers, 8 < group <= SMs (all resident: a cooperative
         * launch); the fewest CTAs a group (the most groups) first. H200 (docs/perf.md, lab
         * round 15): not faster than the forms it was meant to beat (35_GroupNorm_ groups of
         * 64 5.063 ms against persistent held chunks 4.984; 40_LayerNorm a group of 128
         * 0.343 against split 64 0.230, its weights read again each row), so it comes after
         * them */
        recipe_params grp_k = { 0 };
        if (!fits_cta && npf == 0 && hw->sm >= 90 && p->r % vec == 0 && 512 <= tmax)
            for (int v = 16; v >= 4 && !grp_k.group; v--) {
                int64_t g = nv / (512 * (int64_t)v);
                if (g * 512 * v != nv || g <= 8 || g > sms || v * 4 * nf > reg_budget(512) ||
                    (int64_t)nf * 512 * v * 16 > hw->smem_per_block - 1024)
                    continue;
                grp_k = (recipe_params){ .threads = 512, .row_threads = 512, .split = 1, .cache = v, .prefetch = 1,
                                         .group = (int)g };
            }
        /* a row too long for a CTA (or a cluster) held by CTAs that take its chunks in order;
         * a row's chunks must fit the GPU at once: at most half of what __launch_bounds__
         * guarantees (1024 / threads CTAs an SM), and 64 registers a thread at most */
        if (!fits_cta) {
            static const int ht[][2] = { { 256, 8 }, { 512, 8 }, { 256, 4 } };
            for (size_t c = 0; c < sizeof ht / sizeof ht[0]; c++) {
                int t = ht[c][0], u = ht[c][1];
                int64_t chunks = (nv + (int64_t)t * u - 1) / ((int64_t)t * u);
                if (t > tmax || u * 4 * nf > 32 || chunks < 2 || chunks > (int64_t)(1024 / t) * sms / 2 ||
                    rows * chunks > 0x7fffffff)
                    continue;
                hold_k[nhold++] = (recipe_params){ .threads = t, .row_threads = t, .split = (int)chunks, .cache = u };
            }
        }
        /* the first chunk shape again with persistent CTAs (one pass of statistics, 256
         * threads or fewer): a CTA holds two chunks, 768 / threads CTAs an SM, and a row's
         * chunks must fit twice those. H200 (docs/perf.md, lab round 7): 256 x 8 vectors at
         * 3 CTAs an SM ran 1.8% (InstanceNorm, 4.875 vs 4.963 ms) and 5.1% (GroupNorm, 5.910
         * vs 6.228 ms) faster than one CTA a chunk; at 2 CTAs an SM, or 512 threads, slower.
         * So it comes second, after the first held shape, for the tuner to choose. */
        if (nhold > 0 && p->norm->levels <= 1 && persistent_fits(hold_k[0].split, hold_k[0].threads, sms)) {
            memmove(&hold_k[2], &hold_k[1], (size_t)(nhold - 1) * sizeof hold_k[0]);
            hold_k[1] = hold_k[0];
            hold_k[1].persist = 1;
            hold_k[1].min_blocks = 768 / hold_k[0].threads;
            nhold++;
        }
        /* rows whose 256 x 8 chunks are too many for one CTA a chunk but fit twice the
         * persistent CTAs (LayerNorm's 16 rows of 4 Mi: 512 chunks, 792 on 132 SMs): the
         * persistent form alone, offered after the split forms (not yet measured) */
        int64_t pchunks = (nv + 2047) / 2048;
        if (!fits_cta && nhold == 0 && p->norm->levels <= 1 && 8 * 4 * nf <= 32 && pchunks >= 2 &&
            persistent_fits(pchunks, 256, sms) && rows * pchunks <= 0x7fffffff && 256 <= tmax)
            late_persist = (recipe_params){ .threads = 256, .row_threads = 256, .split = (int)pchunks, .cache = 8,
                                            .persist = 1, .min_blocks = 3 };
        /* rows too long for a CTA, with a lag: persistent CTAs publish the statistics of
         * chunk t and write chunk t - lag, re-read from L2 (x read from memory once, and
         * nothing waits for a row in the steady state; the kernel sets the lag to a row
         * plus twice its CTAs, 4 an SM): when that many chunks of the full-size inputs fit
         * half the L2; two chunks a thread in registers (32 at most). H200 (docs/perf.md,
         * lab rounds 18-19): slower than the forms it was meant to beat (GroupNorm 6.44 ms
         * against 4.94 persistent held chunks, InstanceNorm 6.56 against 4.02, LayerNorm
         * 0.336 against 0.230; ncu: 69% of DRAM peak, 37% L2 hits), so it is offered last */
        recipe_params lag_k = { 0 };
        const int lag_cache = nf == 1 ? 4 : 2;
        const int64_t lag_chunks = (nv + 256 * lag_cache - 1) / (256 * lag_cache);
        const int64_t lag_bytes = (lag_chunks + 2 * 4 * (int64_t)sms) * 256 * lag_cache * 16 * nf;
        if (!fits_cta && rows >= 2 && p->norm->levels <= 1 && 2 * lag_cache * 4 * nf <= 32 && 256 <= tmax &&
            lag_bytes <= hw->l2_bytes / 2 && (rows + 1) * lag_chunks + 16 * (int64_t)sms <= 0x7fffffff)
            lag_k = (recipe_params){ .threads = 256, .row_threads = 256, .split = (int)lag_chunks, .cache = lag_cache,
                                     .lag = 1 };
        /* split long rows when there are too few of them for the SMs; rows of 1 Mi or
         * more also when there are many: statistics, then the output, in separate kernels
         * (x read twice, as torch.compile's GroupNorm does). For rows of 1 Mi or more,
         * when they are many (2 x SMs or more), the persistent held chunks come first and
         * these next: H200 (docs/perf.md, lab round 13, 35_GroupNorm_) 4.980 ms
         * persistent, 5.511 split 4, 5.556 split 2 (before round 13's shared rsqrt: 5.908,
         * 5.572, 5.541); when they are few (LayerNorm's 16), these first */
        recipe_params split_k[3];
        int nsplit = 0, si = 0;
        if ((rows < 2 * sms || p->r >= (1 << 20)) && p->r >= 16384) {
            int split = pow2_ge((4 * sms + rows - 1) / rows);
            if (split < 4 && p->r >= (1 << 20))
                split = 4;
            while (split > 1 && p->r / split < 4096)
                split >>= 1;
            if (split > 4096)
                split = 4096;
            for (int s = split; s >= 2 && s >= split / 4; s /= 2)
                split_k[nsplit++] = (recipe_params){ .threads = 256, .unroll = 4, .row_threads = 256, .split = s };
        }
        if (p->r >= (1 << 20)) {
            bool held_first = false;
            for (int i = 0; i < nhold && rows >= 2 * sms; i++)
                held_first |= hold_k[i].persist != 0;
            /* the group's ring (a row in shared memory, its pieces streaming through six
             * stages of a quarter chunk) before the persistent held chunks: H200
             * (docs/perf.md, lab rounds 21-29, 35_GroupNorm_) 4.74-4.76 ms in five runs
             * against their 4.95-5.21 */
            recipe_params ring_k = grp_k;
            ring_k.ring = 6;
            ring_k.ring_pieces = 4;
            if (held_first && grp_k.group && grp_k.cache % 4 == 0 &&
                (int64_t)nf * 512 * grp_k.cache * 16 / 4 * 6 <= hw->smem_per_block - 1024)
                n = push_k(out, n, max, ring_k);
            for (int i = 0; i < nhold && held_first; i++)
                if (hold_k[i].persist)
                    n = push_k(out, n, max, hold_k[i]);
            if (grp_k.group && held_first)
                n = push_k(out, n, max, grp_k);
            while (si < nsplit)
                n = push_k(out, n, max, split_k[si++]);
        }
        /* H200 (docs/perf.md): rows of 256 KB (L1/L2 norm) ran fastest as a cluster of 8 at
         * 2 CTAs an SM (4.65 ms; held chunks 5.81); rows of 1 MB (InstanceNorm), where no
         * cluster leaves two CTAs an SM, as held chunks of 256 x 8 vectors (4.99 ms; a
         * cluster of 8 at 1 an SM 5.31). So: the light clusters, the first persistent
         * prefetching cluster (lab round 13: 4.03 ms on InstanceNorm), then (when there
         * were no light clusters) the first held-chunk shape and its persistent form, then
         * the other prefetching clusters, the other clusters and chunk shapes, the split
         * forms, the late persistent form. */
        int ci = 0, hi = 0, pi = 0;
        while (ci < light)
            n = push_k(out, n, max, cl_k[ci++]);
        if (pi < npf)
            n = push_k(out, n, max, pf_k[pi++]);
        if (!light)
            while (hi < nhold && (hi == 0 || hold_k[hi].persist))
                n = push_k(out, n, max, hold_k[hi++]);
        while (pi < npf)
            n = push_k(out, n, max, pf_k[pi++]);
        while (ci < ncl)
            n = push_k(out, n, max, cl_k[ci++]);
        while (hi < nhold)
            n = push_k(out, n, max, hold_k[hi++]);
        while (si < nsplit)
            n = push_k(out, n, max, split_k[si++]);
        if (late_persist.persist)
            n = push_k(out, n, max, late_persist);
        if (grp_k.group)
            n = push_k(out, n, max, grp_k);
        if (lag_k.lag)
            n = push_k(out, n, max, lag_k);
        /* a CTA a row, streaming it (always possible) */
        if (rows >= sms || n == 0)
            for (int t = 512; t <= 1024; t *= 2)
                if (t <= tmax)
                    n = push_k(out, n, max, (recipe_params){ .threads = t, .row_threads = t, .split = 1 });
        if (n == 0)
            n = push_k(out, n, max, (recipe_params){ .threads = 256, .row_threads = 256, .split = 1 });
        return n;
    }
    /* columns */
    const int64_t cols = p->outer * p->inner;
    static const int ct[] = { 256, 128, 512 };
    if (p->r <= 64 && p->r * nf <= 64)
        for (size_t c = 0; c < 3; c++)
            if (ct[c] <= tmax)
                n = push_k(out, n, max, (recipe_params){ .threads = ct[c], .row_threads = ct[c], .split = 1, .cache = (int)p->r });
    if (cols < (int64_t)sms * 1024 && p->r >= 1024) {
        int split = pow2_ge(((int64_t)sms * 1024 + cols - 1) / cols);
        while (split > 1 && p->r / split < 256)
            split >>= 1;
        if (split > 4096)
            split = 4096;
        for (int s = split; s >= 2 && s >= split / 2; s /= 2)
            n = push_k(out, n, max, (recipe_params){ .threads = 256, .unroll = 4, .row_threads = 256, .split = s });
    }
    for (size_t c = 0; c < 3; c++)
        if (ct[c] <= tmax)
            n = push_k(out, n, max, (recipe_params){ .threads = ct[c], .row_threads = ct[c], .split = 1 });
    return n;
}

/* ------------------------------------------------------------------ the parameter block */

static const char *ctype(const char *dtype)
{
    if (!strcmp(dtype, "float16")) return "__half";
    if (!strcmp(dtype, "bfloat16")) return "__nv_bfloat16";
    if (!strcmp(dtype, "int64")) return "int64_t";
    if (!strcmp(dtype, "bool")) return "bool";
    return "float";
}

static const char *cgdtype(const char *dtype)
{
    if (!strcmp(dtype, "float16")) return "CG_FLOAT16";
    if (!strcmp(dtype, "bfloat16")) return "CG_BFLOAT16";
    if (!strcmp(dtype, "int64")) return "CG_INT64";
    if (!strcmp(dtype, "bool")) return "CG_BOOL";
    return "CG_FLOAT32";
}

static void dims_list(strbuf *sb, int nd, const int64_t *v, int64_t empty)
{
    strbuf_addc(sb, '{');
    for (int d = 0; d < nd; d++)
        strbuf_addf(sb, "%s%lld", d ? ", " : "", (long long)v[d]);
    if (nd == 0)
        strbuf_addf(sb, "%lld", (long long)empty);
    strbuf_addc(sb, '}');
}

/* The offset term of view dims [a, b) indexed by variable v (0..prod-1) for input i. */
static void offset_term(const recipe_norm *nm, int i, int a, int b, const char *v, const char *u, strbuf *sb, bool *any)
{
    int last = -1, first = -1;
    for (int d = a; d < b; d++)
        if (nm->shape[d] > 1) {
            last = d;
            if (first < 0)
                first = d;
        }
    if (last < 0)
        return;
    bool zero = true;
    for (int d = a; d < b; d++)
        zero = zero && (nm->shape[d] == 1 || nm->vstride[i][d] == 0);
    if (zero)
        return;
    /* v * S when the dims are laid out densely (in this input) in the view's order */
    int64_t s_in = nm->vstride[i][last], span = 1;
    bool dense = s_in != 0;
    for (int d = b - 1; d >= a && dense; d--) {
        if (nm->shape[d] > 1 && nm->vstride[i][d] != s_in * span)
            dense = false;
        span *= nm->shape[d];
    }
    if (dense) {
        strbuf_addf(sb, "%s%s * %lld%s", *any ? " + " : "", v, (long long)s_in, u);
        *any = true;
        return;
    }
    for (int d = a; d < b; d++) {
        if (nm->shape[d] == 1 || nm->vstride[i][d] == 0)
            continue;
        int64_t below = 1;
        for (int e = d + 1; e < b; e++)
            below *= nm->shape[e];
        strbuf_adds(sb, *any ? " + " : "");
        strbuf_addc(sb, '(');
        if (below > 1)
            strbuf_addf(sb, "%s / %lld%s", v, (long long)below, u);
        else
            strbuf_adds(sb, v);
        if (d != first)
            strbuf_addf(sb, " %% %lld%s", (long long)nm->shape[d], u);
        strbuf_addf(sb, ") * %lld%s", (long long)nm->vstride[i][d], u);
        *any = true;
    }
}

/* Whether the broadcast inputs' offsets can be computed in 32 bits: the view's indices
 * (outer, r, inner as the mode sees them) fit 32 unsigned bits and every offset 31 (strides
 * not negative). 64-bit divisions and products cost a norm's inner loops a third of their
 * instructions (GroupNorm's ring, docs/perf.md lab round 48). */
static bool offsets_fit_32(const recipe_plan *p, int64_t outer, int64_t r, int64_t inner)
{
    const recipe_norm *nm = p->norm;
    const int64_t lim = (int64_t)1 << 32;
    if (outer >= lim || r >= lim || inner >= lim)
        return false;
    for (int i = 0; i < p->n_inputs; i++) {
        if (p->kind[i] != RK_BCAST)
            continue;
        int64_t max = 0;
        for (int d = 0; d < nm->ndim; d++) {
            if (nm->vstride[i][d] < 0)
                return false;
            max += (nm->shape[d] - 1) * nm->vstride[i][d];
        }
        if (max >= ((int64_t)1 << 31))
            return false;
    }
    return true;
}

/* How many elements along r (dims [d0, d1) of the view, r of them in all), from a multiple
 * of the count, broadcast input i's offset stays the same: the elements below its
 * innermost r-dim with a stride (the whole row when it has none). */
static int64_t bcast_run(const recipe_norm *nm, int i, int d0, int d1, int64_t r)
{
    int64_t run = r, below = 1;
    for (int d = d1 - 1; d >= d0; d--) {
        if (nm->shape[d] > 1 && nm->vstride[i][d] != 0 && below < run)
            run = below;
        below *= nm->shape[d];
    }
    return run;
}

static void emit_constexpr_fn(strbuf *sb, const char *name, const char *arg, int n, const int *v)
{
    strbuf_addf(sb, "__host__ __device__ constexpr int %s(int %s) { return ", name, arg);
    for (int k = 0; k < n; k++)
        strbuf_addf(sb, "%s == %d ? %d : ", arg, k, v[k]);
    strbuf_addf(sb, "0 * %s; }\n", arg);
}

void recipe_norm_emit_params(const recipe_plan *p, const recipe_params *k, strbuf *sb)
{
    const recipe_norm *nm = p->norm;
    enum norm_mode mode = recipe_norm_mode(p, k);
    int64_t outer = p->outer, r = p->r, inner = p->inner;
    int d0 = nm->d0, d1 = nm->d1;
    if (mode == NM_POINTWISE) {
        /* one row of everything: offsets in terms of the flat index */
        outer = inner = 1;
        r = p->outer * p->r * p->inner;
        d0 = 0;
        d1 = nm->ndim;
    }
    strbuf_adds(sb, "#define CGR_GENERATED 1\n");
    strbuf_addf(sb, "#define CGR_T %s\n#define CGR_OUT_DTYPE %s\n", ctype(p->output.dtype), cgdtype(p->output.dtype));
    static const char *modes[] = { "pointwise", "rows", "columns", "split", "hold" };
    strbuf_addf(sb, "#define CGR_MODE %d  // %s\n", (int)mode, modes[mode]);
    strbuf_addf(sb, "#define CGR_OUTER %lld\n#define CGR_R %lld\n#define CGR_INNER %lld\n", (long long)outer,
                (long long)r, (long long)inner);
    /* A column held whole (a thread a column, its elements a row apart) keeps the
     * expressions as recognised: the rewritten form (a product by a derived reciprocal
     * where each element was divided) sends the column's row-scattered stores out back to
     * back and was slower (RMSNorm: 5.4% on the H200, lab round 48; 3.4% on the H100,
     * round 49, where the plain form matched the template before hoisting) */
    const bool column_held = mode == NM_COLS && k->cache > 0;
    recipe_hoist h;
    recipe_hoist_norm(p, recipe_plain_expressions() || column_held, &h);
    strbuf_addf(sb, "#define CGR_NSTAT %d\n#define CGR_NSLOT %d  // %d of the statistics, %d derived from them\n"
                    "#define CGR_LEVELS %d\n",
                nm->n_stats, nm->n_slots + h.n_derived, nm->n_slots, h.n_derived, nm->levels > 0 ? nm->levels : 1);
    strbuf_addf(sb, "#define CGR_THREADS %d\n#define CGR_ROW_THREADS %d\n#define CGR_CLUSTER %d\n", k->threads,
                k->row_threads > 0 ? k->row_threads : k->threads, k->cluster > 1 ? k->cluster : 1);
    strbuf_addf(sb, "#define CGR_MIN_BLOCKS %d\n", (mode == NM_ROWS || mode == NM_HOLD) && k->min_blocks > 1 ? k->min_blocks : 1);
    if (mode == NM_HOLD && k->persist)
        strbuf_adds(sb, "#define CGR_HOLD_PERSIST 1\n");
    if (mode == NM_HOLD && k->lag > 0)
        strbuf_addf(sb, "#define CGR_HOLD_LAG %d\n", k->lag);
    if (mode == NM_ROWS && k->prefetch)
        strbuf_adds(sb, "#define CGR_ROWS_PREFETCH 1\n");
    if (mode == NM_ROWS && k->prefetch && k->group > 1)
        strbuf_addf(sb, "#define CGR_GROUP %d\n", k->group);
    if (mode == NM_ROWS && k->prefetch && k->group > 1 && k->ring > 0)
        strbuf_addf(sb, "#define CGR_RING %d\n#define CGR_RING_PIECES %d\n", k->ring, k->ring_pieces);
    strbuf_addf(sb, "#define CGR_VECS %d\n#define CGR_SPLIT %d\n#define CGR_UNROLL %d\n",
                mode == NM_ROWS || mode == NM_COLS || mode == NM_HOLD ? k->cache : 0,
                mode == NM_SPLIT || mode == NM_HOLD ? k->split : 1, k->unroll > 0 ? k->unroll : 1);
    static const char *kind_names[] = { "CGR_UNUSED", "CGR_FULL", "CGR_SCALAR", "CGR_BCAST" };
    strbuf_addf(sb, "#define CGR_NIN %d\n#define CGR_INPUTS(X)", p->n_inputs);
    for (int i = 0; i < p->n_inputs; i++) {
        const char *dt = p->kind[i] == RK_UNUSED ? "float32" : p->inputs[i].dtype;
        strbuf_addf(sb, " \\\n    X(%d, %s, %s, %s)", i, ctype(dt), kind_names[p->kind[i]], cgdtype(dt));
    }
    strbuf_adds(sb, "\n#define CGR_IN_NDIMS {");
    for (int i = 0; i < p->n_inputs; i++)
        strbuf_addf(sb, "%s%d", i ? ", " : "", p->inputs[i].ndim);
    strbuf_adds(sb, "}\n#define CGR_IN_SHAPES {");
    for (int i = 0; i < p->n_inputs; i++) {
        strbuf_adds(sb, i ? ", " : "");
        dims_list(sb, p->inputs[i].ndim, p->inputs[i].shape, 1);
    }
    strbuf_adds(sb, "}\n#define CGR_IN_STRIDES {");
    for (int i = 0; i < p->n_inputs; i++) {
        strbuf_adds(sb, i ? ", " : "");
        dims_list(sb, p->inputs[i].ndim, p->inputs[i].stride, 0);
    }
    strbuf_addf(sb, "}\n#define CGR_OUT_NDIM %d\n#define CGR_OUT_SHAPE ", p->output.ndim);
    dims_list(sb, p->output.ndim, p->output.shape, 1);
    strbuf_adds(sb, "\n// statistics: kind (0 sum, 1 max, 2 min, 3 mean and variance), pass, first slot\n");
    int kinds[RECIPE_NORM_MAX_STATS], levels[RECIPE_NORM_MAX_STATS], slots[RECIPE_NORM_MAX_STATS];
    for (int s = 0; s < nm->n_stats; s++) {
        kinds[s] = (int)nm->stat[s].kind;
        levels[s] = nm->stat[s].level;
        slots[s] = nm->stat[s].slot;
    }
    emit_constexpr_fn(sb, "cgr_stat_kind", "k", nm->n_stats, kinds);
    emit_constexpr_fn(sb, "cgr_stat_level", "k", nm->n_stats, levels);
    emit_constexpr_fn(sb, "cgr_stat_slot", "k", nm->n_stats, slots);
    strbuf_adds(sb, "// broadcast inputs along a 16-byte vector: 0 element by element, 1 one element, 2 a vector\n");
    int access[RECIPE_MAX_INPUTS];
    for (int i = 0; i < p->n_inputs; i++)
        access[i] = p->kind[i] == RK_BCAST && mode != NM_COLS && p->inner == 1 ? (int)nm->access[i] : 0;
    emit_constexpr_fn(sb, "cgr_access", "i", p->n_inputs, access);
    strbuf_adds(sb, "// broadcast input i: elements along r (from a multiple of it) over which its offset stays the same\n"
                    "__host__ __device__ constexpr int64_t cgr_run(int i) { return ");
    for (int i = 0; i < p->n_inputs; i++)
        if (p->kind[i] == RK_BCAST)
            strbuf_addf(sb, "i == %d ? %lld : ", i, (long long)bcast_run(nm, i, d0, d1, r));
    strbuf_adds(sb, "1 + 0 * i; }\n");
    strbuf_addf(sb, "// offset of broadcast input i at (o, r, n) of the (outer, r, inner) view; the view is ");
    for (int d = 0; d < nm->ndim; d++)
        strbuf_addf(sb, "%s%lld", d ? "x" : "", (long long)nm->shape[d]);
    strbuf_addf(sb, ", r over dims [%d, %d)\n", d0, d1);
    const bool narrow = !recipe_plain_expressions() && offsets_fit_32(p, outer, r, inner);
    const char *ut = narrow ? "uint32_t" : "uint64_t", *u = narrow ? "u" : "ull";
    strbuf_addf(sb, "__device__ __forceinline__ int64_t cgr_off(int i, int64_t o, int64_t r, int64_t n)\n{\n"
                    "    const %s uo = %s(o), ur = %s(r), un = %s(n);\n"
                    "    (void)uo; (void)ur; (void)un;\n    switch (i) {\n",
                ut, ut, ut, ut);
    for (int i = 0; i < p->n_inputs; i++) {
        if (p->kind[i] != RK_BCAST)
            continue;
        strbuf_addf(sb, "    case %d: return int64_t(", i);
        bool any = false;
        offset_term(nm, i, 0, d0, "uo", u, sb, &any);
        offset_term(nm, i, d0, d1, "ur", u, sb, &any);
        offset_term(nm, i, d1, nm->ndim, "un", u, sb, &any);
        strbuf_addf(sb, "%s);  // %s\n", any ? "" : "0", p->inputs[i].name);
    }
    strbuf_adds(sb, "    default: return 0;\n    }\n}\n");
    for (int s = 0; s < nm->n_stats; s++) {
        char fn[32];
        snprintf(fn, sizeof fn, "cgr_pro_%d", s);
        recipe_hoist_emit_expr(&h, h.pro_root[s], fn, sb);
    }
    strbuf_adds(sb, "__device__ __forceinline__ float cgr_pro(int k, const float *x)\n{\n    switch (k) {\n");
    for (int s = 0; s < nm->n_stats; s++)
        strbuf_addf(sb, "    case %d: return cgr_pro_%d(x);\n", s, s);
    strbuf_adds(sb, "    default: (void)x; return 0.f;\n    }\n}\n");
    recipe_hoist_emit_derive(&h, sb);
    recipe_hoist_emit_expr(&h, h.root, "cgr_epi", sb);
    recipe_hoist_release(&h);
}
