/*
 * recipe_expand.c: composite fx calls (scaled_dot_product_attention) rewritten into the
 * chains of primitive nodes the recipe families recognise. See recipe_expand.h.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "recipe_expand.h"
#include "util.h"

#define RECIPE_FOLD_MAX_DIMS 8

static const char *node_str(const json_t *node, const char *key)
{
    const char *s = json_string_value(json_object_get(node, key));
    return s ? s : "";
}

static bool is_sdpa(const json_t *node)
{
    const char *t = node_str(node, "target");
    return !strcmp(node_str(node, "op"), "call_function") &&
           (!strcmp(t, "torch._C._nn.scaled_dot_product_attention") ||
            !strcmp(t, "torch.nn.functional.scaled_dot_product_attention"));
}

/* Argument pos, or keyword kw: NULL when absent. */
static const json_t *arg_at(const json_t *node, size_t pos, const char *kw)
{
    const json_t *args = json_object_get(node, "args");
    if (json_is_array(args) && pos < json_array_size(args))
        return json_array_get(args, pos);
    return json_object_get(json_object_get(node, "kwargs"), kw);
}

static bool is_ref(const json_t *a)
{
    return json_is_string(a) && json_string_value(a)[0] == '%';
}

/* Whether an optional argument holds its default: absent, None, false or 0. */
static bool is_default(const json_t *a)
{
    return !a || json_is_null(a) || json_is_false(a) || (json_is_number(a) && json_number_value(a) == 0);
}

/* The last dim of the input a placeholder reference names (the k-th placeholder is
 * input k), or -1 when ref is not a placeholder or its shape is not in the spec. */
static int64_t placeholder_last_dim(const json_t *spec, const json_t *graph, const char *ref)
{
    int k = 0;
    for (size_t i = 0; i < json_array_size(graph); i++) {
        const json_t *node = json_array_get(graph, i);
        if (strcmp(node_str(node, "op"), "placeholder"))
            continue;
        if (!strcmp(node_str(node, "name"), ref + 1)) {
            const json_t *shape = json_object_get(json_array_get(json_object_get(spec, "inputs"), (size_t)k), "shape");
            size_t nd = json_array_size(shape);
            return nd ? json_integer_value(json_array_get(shape, nd - 1)) : -1;
        }
        k++;
    }
    return -1;
}

static bool name_taken(const json_t *graph, const char *name)
{
    for (size_t i = 0; i < json_array_size(graph); i++)
        if (!strcmp(node_str(json_array_get(graph, i), "name"), name))
            return true;
    return false;
}

static json_t *fx_node(const char *name, const char *op, const char *target, json_t *args, json_t *kwargs)
{
    return json_pack("{s:s, s:s, s:s, s:o, s:o}", "name", name, "op", op, "target", target, "args", args,
                     "kwargs", kwargs ? kwargs : json_object());
}

/* Appends the chain of node (softmax(q @ k^T * scale) @ v) to g, its last node keeping
 * node's name. 0, or 1 not covered (why says what). */
static int expand_sdpa(const json_t *spec, const json_t *graph, const json_t *node, json_t *g, strbuf *done,
                       strbuf *why)
{
    static const struct { size_t pos; const char *kw, *what; } opts[] = {
        { 3, "attn_mask", "an attention mask" }, { 4, "dropout_p", "dropout" },
        { 5, "is_causal", "is_causal=True" }, { 99, "enable_gqa", "grouped-query attention (enable_gqa)" },
    };
    for (size_t i = 0; i < sizeof opts / sizeof *opts; i++)
        if (!is_default(arg_at(node, opts[i].pos, opts[i].kw))) {
            strbuf_addf(why, "not covered: scaled_dot_product_attention with %s", opts[i].what);
            return 1;
        }
    const json_t *q = arg_at(node, 0, "query"), *k = arg_at(node, 1, "key"), *v = arg_at(node, 2, "value");
    if (!is_ref(q) || !is_ref(k) || !is_ref(v)) {
        strbuf_adds(why, "not covered: scaled_dot_product_attention of something other than three tensors");
        return 1;
    }
    const json_t *sc = arg_at(node, 99, "scale");
    double scale;
    if (json_is_number(sc)) {
        scale = json_number_value(sc);
    } else if (!sc || json_is_null(sc)) {
        int64_t e = placeholder_last_dim(spec, graph, json_string_value(q));
        if (e <= 0) {
            strbuf_adds(why, "not covered: scaled_dot_product_attention of a computed query with no scale= given "
                             "(its last dim is not in the spec)");
            return 1;
        }
        scale = 1.0 / sqrt((double)e);
    } else {
        strbuf_adds(why, "not covered: scaled_dot_product_attention with a scale that is not a number");
        return 1;
    }
    const char *name = node_str(node, "name");
    char kt[128], scores[128], scaled[128], weights[128];
    snprintf(kt, sizeof kt, "%s_key_t", name);
    snprintf(scores, sizeof scores, "%s_scores", name);
    snprintf(scaled, sizeof scaled, "%s_scaled", name);
    snprintf(weights, sizeof weights, "%s_weights", name);
    const char *fresh[] = { kt, scores, scaled, weights };
    for (size_t i = 0; i < 4; i++)
        if (name_taken(graph, fresh[i])) {
            strbuf_addf(why, "not covered: scaled_dot_product_attention's expansion needs the node name '%s', "
                             "which the graph already uses", fresh[i]);
            return 1;
        }
    char r_kt[130], r_scores[130], r_scaled[130], r_weights[130];
    snprintf(r_kt, sizeof r_kt, "%%%s", kt);
    snprintf(r_scores, sizeof r_scores, "%%%s", scores);
    snprintf(r_scaled, sizeof r_scaled, "%%%s", scaled);
    snprintf(r_weights, sizeof r_weights, "%%%s", weights);
    json_array_append_new(g, fx_node(kt, "call_method", "transpose", json_pack("[O, i, i]", k, -2, -1), NULL));
    json_array_append_new(g, fx_node(scores, "call_function", "torch.matmul", json_pack("[O, s]", q, r_kt), NULL));
    json_array_append_new(g, fx_node(scaled, "call_function", "_operator.mul", json_pack("[s, f]", r_scores, scale),
                                     NULL));
    json_array_append_new(g, fx_node(weights, "call_function", "torch.softmax", json_pack("[s]", r_scaled),
                                     json_pack("{s:i}", "dim", -1)));
    json_array_append_new(g, fx_node(name, "call_function", "torch.matmul", json_pack("[s, O]", r_weights, v), NULL));
    if (done->len)
        strbuf_adds(done, "; ");
    strbuf_addf(done, "%s as softmax(%s @ %s^T * %.9g, dim=-1) @ %s", name, json_string_value(q) + 1,
                json_string_value(k) + 1, scale, json_string_value(v) + 1);
    return 0;
}

/* The graph with every placeholder's shape reads folded (the k-th placeholder is input
 * k, its shape in the spec): a new graph, or NULL when there were none. */
static json_t *fold_input_shapes(const json_t *spec, const json_t *graph, strbuf *done)
{
    json_t *g = NULL;
    const json_t *ins = json_object_get(spec, "inputs");
    size_t k = 0;
    for (size_t i = 0; i < json_array_size(graph); i++) {
        const json_t *node = json_array_get(g ? g : graph, i);
        if (strcmp(node_str(node, "op"), "placeholder"))
            continue;
        const json_t *shape = json_object_get(json_array_get(ins, k++), "shape");
        int64_t dims[RECIPE_FOLD_MAX_DIMS];
        size_t nd = json_array_size(shape);
        if (!json_is_array(shape) || nd > RECIPE_FOLD_MAX_DIMS)
            continue;
        for (size_t d = 0; d < nd; d++)
            dims[d] = json_integer_value(json_array_get(shape, d));
        json_t *f = recipe_fold_shape_reads(g ? g : graph, i, node_str(node, "name"), (int)nd, dims);
        if (f) {
            strbuf_addf(done, "%sthe shape of '%s' read as constants", done->len ? "; " : "", node_str(node, "name"));
            json_decref(g);
            g = f;
        }
    }
    return g;
}

int recipe_expand(const json_t *spec, json_t **out, strbuf *done, strbuf *why)
{
    *out = NULL;
    const json_t *graph = json_object_get(spec, "graph");
    json_t *folded = fold_input_shapes(spec, graph, done);
    if (folded)
        graph = folded;
    size_t n = json_array_size(graph), found = 0;
    for (size_t i = 0; i < n; i++)
        found += is_sdpa(json_array_get(graph, i));
    json_t *g = folded;
    if (found) {
        g = json_array();
        for (size_t i = 0; i < n; i++) {
            const json_t *node = json_array_get(graph, i);
            if (!is_sdpa(node)) {
                json_array_append(g, (json_t *)node);
            } else if (expand_sdpa(spec, graph, node, g, done, why)) {
                json_decref(g);
                json_decref(folded);
                return 1;
            }
        }
        json_decref(folded);
    }
    if (!g)
        return 0;
    *out = json_deep_copy(spec);
    json_object_set_new(*out, "graph", g);
    return 0;
}

/* ================================================================== shape reads */

static bool refers(const json_t *a, const char *name)
{
    const char *s = json_string_value(a);
    return s && s[0] == '%' && !strcmp(s + 1, name);
}

/* v with every "%name" that folded holds replaced by its constant (a new reference). */
static json_t *substitute(const json_t *v, const json_t *folded)
{
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        const json_t *c = s[0] == '%' ? json_object_get(folded, s + 1) : NULL;
        return json_deep_copy(c ? c : v);
    }
    if (json_is_array(v)) {
        json_t *a = json_array();
        for (size_t i = 0; i < json_array_size(v); i++)
            json_array_append_new(a, substitute(json_array_get(v, i), folded));
        return a;
    }
    if (json_is_object(v)) {
        json_t *o = json_object();
        const char *key;
        json_t *val;
        json_object_foreach((json_t *)v, key, val)
            json_object_set_new(o, key, substitute(val, folded));
        return o;
    }
    return json_deep_copy(v);
}

/* The constant node reads, or NULL when it reads no folded shape: x.shape, x.size(),
 * x.size(d) of name; shape[i] of a folded shape. */
static json_t *shape_read(const json_t *node, const char *name, int ndim, const int64_t *shape,
                          const json_t *folded)
{
    const char *op = node_str(node, "op"), *target = node_str(node, "target");
    const json_t *args = json_object_get(node, "args");
    const json_t *a0 = json_array_get(args, 0), *a1 = json_array_get(args, 1);
    json_t *whole = json_array();
    for (int d = 0; d < ndim; d++)
        json_array_append_new(whole, json_integer(shape[d]));
    json_t *r = NULL;
    if (!strcmp(op, "call_function") && !strcmp(target, "builtins.getattr") && refers(a0, name) &&
        json_array_size(args) == 2 && !strcmp(json_string_value(a1) ? json_string_value(a1) : "", "shape")) {
        r = json_incref(whole);
    } else if (!strcmp(op, "call_method") && !strcmp(target, "size") && refers(a0, name)) {
        const json_t *d = a1 ? a1 : json_object_get(json_object_get(node, "kwargs"), "dim");
        if (!d) {
            r = json_incref(whole);
        } else if (json_is_integer(d)) {
            json_int_t k = json_integer_value(d);
            k = k < 0 ? k + ndim : k;
            r = k >= 0 && k < ndim ? json_integer(shape[k]) : NULL;
        }
    } else if (!strcmp(op, "call_function") && !strcmp(target, "_operator.getitem") && json_array_size(args) == 2 &&
               json_is_string(a0) && json_string_value(a0)[0] == '%' && json_is_integer(a1)) {
        const json_t *t = json_object_get(folded, json_string_value(a0) + 1);
        json_int_t k = json_integer_value(a1);
        k = t && k < 0 ? k + (json_int_t)json_array_size(t) : k;
        if (json_is_array(t) && k >= 0 && (size_t)k < json_array_size(t))
            r = json_deep_copy(json_array_get(t, (size_t)k));
    }
    json_decref(whole);
    return r;
}

json_t *recipe_fold_shape_reads(const json_t *graph, size_t after, const char *name, int ndim,
                                const int64_t *shape)
{
    json_t *folded = json_object(), *g = json_array();
    for (size_t i = 0; i < json_array_size(graph); i++) {
        const json_t *node = json_array_get(graph, i);
        json_t *c = i > after ? shape_read(node, name, ndim, shape, folded) : NULL;
        if (c) {
            json_object_set_new(folded, node_str(node, "name"), c);
            continue;
        }
        if (i <= after || !json_object_size(folded)) {
            json_array_append(g, (json_t *)node);
            continue;
        }
        json_t *copy = json_deep_copy(node);
        json_object_set_new(copy, "args", substitute(json_object_get(node, "args"), folded));
        json_object_set_new(copy, "kwargs", substitute(json_object_get(node, "kwargs"), folded));
        json_array_append_new(g, copy);
    }
    bool any = json_object_size(folded) > 0;
    json_decref(folded);
    if (!any) {
        json_decref(g);
        return NULL;
    }
    return g;
}
