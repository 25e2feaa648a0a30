/*
 * recipe_hoist.c: a NORM plan's expressions rewritten so that an element costs only what
 * depends on it: divisions by element-independent values as products by reciprocals,
 * element-independent factors multiplied together first, and the statistics' own
 * subexpressions (rsqrt(var + eps)) computed once a row as derived slots. See
 * recipe_hoist.h for why and what each rewrite may change.
 */
#include <stdlib.h>
#include <string.h>

#include "recipe_hoist.h"
#include "recipe_norm.h"
#include "util.h"

/* Copies p into h->plan with nodes of its own (room to grow). */
static void copy_plan(const recipe_plan *p, recipe_hoist *h)
{
    h->plan = *p;
    h->plan.alloc = p->n_nodes + 64;
    h->plan.nodes = xcalloc((size_t)h->plan.alloc, sizeof *h->plan.nodes);
    memcpy(h->plan.nodes, p->nodes, (size_t)p->n_nodes * sizeof *p->nodes);
}

static int add(recipe_hoist *h, enum rx_op op, int a, int b)
{
    recipe_plan *q = &h->plan;
    if (q->n_nodes == q->alloc) {
        q->alloc *= 2;
        q->nodes = xrealloc(q->nodes, (size_t)q->alloc * sizeof *q->nodes);
    }
    rx_node *n = &q->nodes[q->n_nodes];
    memset(n, 0, sizeof *n);
    n->op = op;
    n->a = a;
    n->b = b;
    n->input = -1;
    return q->n_nodes++;
}

/* Whether node n reads a full-size input (or the reduced value), or with bcast_too a
 * broadcast input as well: whether its value changes from element to element, or along the
 * row at all (slots, scalars and constants do not). */
static bool reads_varying(const recipe_plan *q, int n, bool bcast_too)
{
    if (n < 0)
        return false;
    const rx_node *x = &q->nodes[n];
    if (x->op == RX_ACC)
        return true;
    if (x->op == RX_INPUT)
        return x->input < q->n_inputs &&
               (q->kind[x->input] == RK_FULL || (bcast_too && q->kind[x->input] == RK_BCAST));
    return reads_varying(q, x->a, bcast_too) || reads_varying(q, x->b, bcast_too);
}

static bool varies(const recipe_plan *q, int n)
{
    return reads_varying(q, n, true);
}

static bool per_element(const recipe_plan *q, int n)
{
    return reads_varying(q, n, false);
}

/* Whether node n reads nothing but slots and constants, and at least one slot. */
static bool slots_only(const recipe_plan *q, int n, bool *any)
{
    if (n < 0)
        return true;
    const rx_node *x = &q->nodes[n];
    if (x->op == RX_ACC)
        return false;
    if (x->op == RX_INPUT) {
        if (x->input < q->n_inputs)
            return false;
        *any = true;
        return true;
    }
    return slots_only(q, x->a, any) && slots_only(q, x->b, any);
}

/* Rewrites 1 and 2 over the DAG under n, operands first; returns n's node in the new form
 * (memo: old node -> new node, -1 while not visited). */
static int rewrite(recipe_hoist *h, int n, int *memo)
{
    if (n < 0)
        return n;
    if (memo[n] >= 0)
        return memo[n];
    rx_node x = h->plan.nodes[n];
    int a = rewrite(h, x.a, memo), b = rewrite(h, x.b, memo);
    int out = n;
    if (a != x.a || b != x.b) {
        out = add(h, x.op, a, b);
        rx_node *y = &h->plan.nodes[out];
        y->p0 = x.p0;
        y->p1 = x.p1;
        y->input = x.input;
        y->unsq = x.unsq;
    }
    const recipe_plan *q = &h->plan;
    /* 1: a / u -> a * (1 / u) */
    if (x.op == RX_DIV && per_element(q, a) && !varies(q, b))
        out = add(h, RX_MUL, a, add(h, RX_RECIP, b, -1));
    /* 2: (e * u) * v -> e * (u * v), either operand order at both levels */
    if (q->nodes[out].op == RX_MUL) {
        int l = q->nodes[out].a, r = q->nodes[out].b;
        if (per_element(q, r) && !per_element(q, l)) {
            int t = l;
            l = r;
            r = t;
        }
        if (per_element(q, l) && !per_element(q, r) && q->nodes[l].op == RX_MUL) {
            int e = q->nodes[l].a, u = q->nodes[l].b;
            if (per_element(q, u) && !per_element(q, e)) {
                int t = e;
                e = u;
                u = t;
            }
            if (per_element(q, e) && !per_element(q, u))
                out = add(h, RX_MUL, e, add(h, RX_MUL, u, r));
        }
    }
    memo[n] = out;
    return out;
}

/* The statistic whose slots come last among those node n reads (by level, then index). */
static int last_stat(const recipe_plan *q, const recipe_norm *nm, int n, int best)
{
    if (n < 0)
        return best;
    const rx_node *x = &q->nodes[n];
    if (x->op == RX_INPUT && x->input >= q->n_inputs) {
        int slot = x->input - q->n_inputs;
        for (int k = 0; k < nm->n_stats; k++) {
            int width = nm->stat[k].kind == NS_VAR ? 2 : 1;
            if (slot < nm->stat[k].slot || slot >= nm->stat[k].slot + width)
                continue;
            if (best < 0 || nm->stat[k].level > nm->stat[best].level ||
                (nm->stat[k].level == nm->stat[best].level && k > best))
                best = k;
        }
        return best;
    }
    return last_stat(q, nm, x->b, last_stat(q, nm, x->a, best));
}

/* Rewrite 3 under n: each largest slots-only subexpression that is not a leaf becomes a
 * derived slot (up to RECIPE_HOIST_MAX_DERIVED; the rest stay per element). */
static void derive(recipe_hoist *h, int n, bool *seen)
{
    const recipe_plan *q = &h->plan;
    if (n < 0 || seen[n] || h->subst[n] >= 0)
        return;
    seen[n] = true;
    const rx_node *x = &q->nodes[n];
    bool any = false;
    if (x->op != RX_INPUT && x->op != RX_CONST && slots_only(q, n, &any) && any) {
        if (h->n_derived < RECIPE_HOIST_MAX_DERIVED) {
            int d = h->n_derived++;
            h->derived[d] = n;
            h->after[d] = last_stat(q, q->norm, n, -1);
            h->subst[n] = q->n_inputs + q->norm->n_slots + d;
        }
        return;
    }
    derive(h, x->a, seen);
    derive(h, x->b, seen);
}

void recipe_hoist_norm(const recipe_plan *p, bool plain, recipe_hoist *h)
{
    memset(h, 0, sizeof *h);
    copy_plan(p, h);
    const recipe_norm *nm = p->norm;
    h->root = p->root;
    for (int k = 0; k < nm->n_stats; k++)
        h->pro_root[k] = nm->stat[k].root;
    if (!plain) {
        int *memo = xmalloc((size_t)p->n_nodes * sizeof *memo);
        for (int i = 0; i < p->n_nodes; i++)
            memo[i] = -1;
        h->root = rewrite(h, p->root, memo);
        for (int k = 0; k < nm->n_stats; k++)
            if (nm->stat[k].level > 0) /* level-0 prologues read no slots: nothing to gain */
                h->pro_root[k] = rewrite(h, nm->stat[k].root, memo);
        free(memo);
    }
    h->subst = xmalloc((size_t)h->plan.n_nodes * sizeof *h->subst);
    for (int i = 0; i < h->plan.n_nodes; i++)
        h->subst[i] = -1;
    if (!plain) {
        bool *seen = xcalloc((size_t)h->plan.n_nodes, 1);
        /* the epilogue's root itself stays: a derived slot there would be a constant output */
        const rx_node *r = &h->plan.nodes[h->root];
        derive(h, r->a, seen);
        derive(h, r->b, seen);
        for (int k = 0; k < nm->n_stats; k++) {
            if (nm->stat[k].level == 0)
                continue;
            const rx_node *pr = &h->plan.nodes[h->pro_root[k]];
            derive(h, pr->a, seen);
            derive(h, pr->b, seen);
        }
        free(seen);
    }
}

bool recipe_plain_expressions(void)
{
    const char *v = getenv("CUTEGEN_RECIPE_PLAIN");
    return v && strcmp(v, "1") == 0;
}

void recipe_hoist_release(recipe_hoist *h)
{
    free(h->plan.nodes);
    free(h->subst);
    memset(h, 0, sizeof *h);
}

void recipe_hoist_emit_expr(const recipe_hoist *h, int root, const char *fn, strbuf *sb)
{
    recipe_emit_expr_subst(&h->plan, root, fn, "const float *x", h->subst, sb);
}

void recipe_hoist_emit_derive(const recipe_hoist *h, strbuf *sb)
{
    const recipe_plan *q = &h->plan;
    int n_x = q->n_inputs + q->norm->n_slots + h->n_derived;
    for (int d = 0; d < h->n_derived; d++) {
        char fn[32];
        snprintf(fn, sizeof fn, "cgr_derived_%d", d);
        recipe_emit_expr(q, h->derived[d], fn, "const float *x", sb);
    }
    strbuf_adds(sb, "// derived slots: computed once a row, after the last statistic they read\n"
                    "__device__ __forceinline__ void cgr_derive(int k, float *s)\n{\n");
    if (h->n_derived == 0) {
        strbuf_adds(sb, "    (void)k;\n    (void)s;\n}\n");
        return;
    }
    strbuf_addf(sb, "    float x[%d];\n    for (int i = 0; i < %d; ++i) x[%d + i] = s[i];\n", n_x,
                q->norm->n_slots, q->n_inputs);
    for (int d = 0; d < h->n_derived; d++)
        strbuf_addf(sb, "    if (k == %d) s[%d] = x[%d] = cgr_derived_%d(x);\n", h->after[d], q->norm->n_slots + d,
                    q->n_inputs + q->norm->n_slots + d, d);
    strbuf_adds(sb, "}\n");
}
