/*
 * recipe_expand.c: composite fx calls (scaled_dot_product_attention) rewritten into the
 * chains of primitive nodes the recipe families recognise. See recipe_expand.h.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "recipe_expand.h"
#include "util.h"

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

int recipe_expand(const json_t *spec, json_t **out, strbuf *done, strbuf *why)
{
    *out = NULL;
    const json_t *graph = json_object_get(spec, "graph");
    size_t n = json_array_size(graph), found = 0;
    for (size_t i = 0; i < n; i++)
        found += is_sdpa(json_array_get(graph, i));
    if (!found)
        return 0;
    json_t *g = json_array();
    for (size_t i = 0; i < n; i++) {
        const json_t *node = json_array_get(graph, i);
        if (!is_sdpa(node)) {
            json_array_append(g, (json_t *)node);
        } else if (expand_sdpa(spec, graph, node, g, done, why)) {
            json_decref(g);
            return 1;
        }
    }
    *out = json_deep_copy(spec);
    json_object_set_new(*out, "graph", g);
    return 0;
}
