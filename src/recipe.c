/*
 * recipe.c: recognition of a task spec's fx graph into a recipe plan, the plan's
 * description, and the CPU evaluator of its expressions. See recipe.h for the design.
 *
 * The walk: every fx node becomes a value: an expression (a node of the plan's DAG), a
 * Python constant, or the (values, indices) pair of torch.max/min with a dim. Anything
 * else stops recognition with "not covered: <why>".
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "recipe.h"
#include "recipe_norm.h"
#include "recipe_rowloss.h"
#include "recipe_gemm.h"
#include "recipe_conv.h"
#include "recipe_expand.h"
#include "recipe_pool.h"
#include "recipe_stage.h"
#include "util.h"

/* ================================================================== plan */

void recipe_plan_init(recipe_plan *p)
{
    memset(p, 0, sizeof *p);
    p->root = -1;
    p->epi = -1;
}

void recipe_plan_release(recipe_plan *p)
{
    free(p->nodes);
    free(p->norm);
    recipe_staged_free(p->staged);
    recipe_plan_init(p);
}

static int add_node(recipe_plan *p, enum rx_op op, int a, int b, double p0, double p1)
{
    if (p->n_nodes == p->alloc) {
        p->alloc = p->alloc ? 2 * p->alloc : 32;
        p->nodes = xrealloc(p->nodes, (size_t)p->alloc * sizeof *p->nodes);
    }
    rx_node *n = &p->nodes[p->n_nodes];
    n->op = op;
    n->a = a;
    n->b = b;
    n->p0 = p0;
    n->p1 = p1;
    n->input = -1;
    n->unsq = 0;
    return p->n_nodes++;
}

const char *recipe_red_name(enum recipe_red r)
{
    static const char *names[] = { "sum", "mean", "max", "min", "prod", "argmax", "argmin",
                                   "softmax", "log_softmax", "logsumexp", "cumsum", "cumprod",
                                   "group_norm" };
    return (unsigned)r < sizeof names / sizeof names[0] ? names[r] : "?";
}

/* ================================================================== operator table */

struct op_info {
    const char *name; /* as fx spells the function or method */
    enum rx_op op;
    int arity;
};

static const struct op_info unary_ops[] = {
    { "relu", RX_RELU, 1 }, { "sigmoid", RX_SIGMOID, 1 }, { "tanh", RX_TANH, 1 },
    { "exp", RX_EXP, 1 }, { "log", RX_LOG, 1 }, { "abs", RX_ABS, 1 },
    { "absolute", RX_ABS, 1 }, { "neg", RX_NEG, 1 }, { "negative", RX_NEG, 1 },
    { "sqrt", RX_SQRT, 1 }, { "rsqrt", RX_RSQRT, 1 }, { "erf", RX_ERF, 1 },
    { "sin", RX_SIN, 1 }, { "cos", RX_COS, 1 }, { "reciprocal", RX_RECIP, 1 },
    { "log1p", RX_LOG1P, 1 }, { "expm1", RX_EXPM1, 1 }, { "square", RX_SQUARE, 1 },
    { "selu", RX_SELU, 1 }, { "silu", RX_SILU, 1 }, { "mish", RX_MISH, 1 },
    { "softsign", RX_SOFTSIGN, 1 }, { "hardsigmoid", RX_HARDSIGMOID, 1 },
    { "hardswish", RX_HARDSWISH, 1 }, { "logsigmoid", RX_LOGSIGMOID, 1 },
    { "expit", RX_SIGMOID, 1 },
    { "add", RX_ADD, 2 }, { "sub", RX_SUB, 2 }, { "subtract", RX_SUB, 2 },
    { "mul", RX_MUL, 2 }, { "multiply", RX_MUL, 2 }, { "div", RX_DIV, 2 },
    { "divide", RX_DIV, 2 }, { "true_divide", RX_DIV, 2 }, { "truediv", RX_DIV, 2 },
    { "pow", RX_POW, 2 }, { "maximum", RX_MAX, 2 }, { "minimum", RX_MIN, 2 },
    { "fmax", RX_MAX, 2 }, { "fmin", RX_MIN, 2 },
};

/* Modules whose functions fx may name: torch.relu is "torch.relu", F.gelu may be
 * "torch._C._nn.gelu", x * y is "_operator.mul". */
static bool known_module(const char *mod, size_t len)
{
    static const char *mods[] = { "torch", "torch.nn.functional", "torch._C._nn",
                                  "torch.special", "_operator", "operator",
                                  "torch._C._VariableFunctions", "torch._C._special",
                                  "torch.Tensor", "torch._tensor", "builtins" };
    for (size_t i = 0; i < sizeof mods / sizeof mods[0]; i++)
        if (strlen(mods[i]) == len && !strncmp(mods[i], mod, len))
            return true;
    return false;
}

/* ================================================================== walking the graph */

enum val_kind { V_NONE = 0, V_EXPR, V_CONST, V_PAIR, V_DEVICE /* x.device: only torch.tensor(c, device=) takes it */ };

struct value {
    char name[96];
    enum val_kind kind;
    int node;      /* V_EXPR */
    double num;    /* V_CONST */
    bool is_none;  /* V_CONST holding None */
    /* Layout, for the SCAN family: how the tensor relates to the DAG evaluated in index
     * order. Pointwise ops keep it (their operands must agree); reductions other than a
     * scan, and the output, take plain values only. */
    int flip;        /* 1 + the dim the tensor is flipped along; 0 none */
    int64_t narrow;  /* > 0: only the first `narrow` elements along narrow_dim */
    int narrow_dim;
    int slab;        /* 1 select(x, d, i) (dim d removed); 2 unsqueezed back at d (a
                        column of width 1); 3 zeros_like of such a column */
    int slab_dim;
};

static bool plain_layout(const struct value *v) { return !v->flip && !v->narrow && !v->slab; }

struct walk {
    recipe_plan *p;
    strbuf *why;
    struct value *vals;
    int n_vals;
    int n_reductions;
    int pair_operand; /* V_PAIR: the operand of torch.max/min(x, dim) */
    bool pair_is_max;
    int pair_dim;
    bool pair_keepdim;
    bool pair_identity;       /* V_PAIR over a dim of size 1 (size1_identity) */
    struct value pair_value;  /* its values: the operand */
    unsigned char *has_acc, *has_input; /* per plan node */
    int reduced_node; /* GEMM: the RX_ACC of the reduced value after a keepdim row
                         reduction (its row dim has size 1), or -1 */
};

static int not_covered(struct walk *w, const char *fmt, const char *arg)
{
    strbuf_reset(w->why);
    strbuf_adds(w->why, "not covered: ");
    strbuf_addf(w->why, fmt, arg);
    return 1;
}

static struct value *find_val(struct walk *w, const char *name)
{
    for (int i = 0; i < w->n_vals; i++)
        if (!strcmp(w->vals[i].name, name))
            return &w->vals[i];
    return NULL;
}

/* An fx argument: "%name" refers to a node, a number is a constant, null is None. */
static int arg_value(struct walk *w, const json_t *a, struct value *out, const char *what)
{
    memset(out, 0, sizeof *out);
    if (json_is_string(a) && json_string_value(a)[0] == '%') {
        struct value *v = find_val(w, json_string_value(a) + 1);
        if (!v)
            return not_covered(w, "argument '%s' names no earlier node", json_string_value(a));
        *out = *v;
        return 0;
    }
    if (json_is_integer(a) || json_is_real(a)) {
        out->kind = V_CONST;
        out->num = json_number_value(a);
        return 0;
    }
    if (json_is_boolean(a)) {
        out->kind = V_CONST;
        out->num = json_is_true(a) ? 1 : 0;
        return 0;
    }
    if (json_is_null(a)) {
        out->kind = V_CONST;
        out->is_none = true;
        return 0;
    }
    return not_covered(w, "an argument of %s is neither a tensor nor a number", what);
}

static const json_t *arg_at(const json_t *node, size_t pos, const char *kw)
{
    const json_t *args = json_object_get(node, "args");
    if (json_is_array(args) && pos < json_array_size(args))
        return json_array_get(args, pos);
    const json_t *kwargs = json_object_get(node, "kwargs");
    if (kw && json_is_object(kwargs))
        return json_object_get(kwargs, kw);
    return NULL;
}

static size_t n_args(const json_t *node)
{
    const json_t *args = json_object_get(node, "args");
    return json_is_array(args) ? json_array_size(args) : 0;
}

/* A numeric argument with a default; -1 not covered when it is a tensor. */
static int num_arg(struct walk *w, const json_t *node, size_t pos, const char *kw, double dflt,
                   double *out, const char *what)
{
    const json_t *a = arg_at(node, pos, kw);
    *out = dflt;
    if (!a)
        return 0;
    struct value v;
    if (arg_value(w, a, &v, what))
        return -1;
    if (v.kind != V_CONST) {
        not_covered(w, "%s with a tensor where a constant is expected", what);
        return -1;
    }
    if (!v.is_none)
        *out = v.num;
    return 0;
}

static void mark(struct walk *w, int n)
{
    w->has_acc = xrealloc(w->has_acc, (size_t)w->p->alloc);
    w->has_input = xrealloc(w->has_input, (size_t)w->p->alloc);
    const rx_node *x = &w->p->nodes[n];
    unsigned char acc = x->op == RX_ACC, inp = x->op == RX_INPUT;
    if (x->a >= 0) {
        acc |= w->has_acc[x->a];
        inp |= w->has_input[x->a];
    }
    if (x->b >= 0) {
        acc |= w->has_acc[x->b];
        inp |= w->has_input[x->b];
    }
    w->has_acc[n] = acc;
    w->has_input[n] = inp;
}

static int expr_of(struct walk *w, const struct value *v)
{
    if (v->kind == V_EXPR)
        return v->node;
    int n = add_node(w->p, RX_CONST, -1, -1, v->num, 0);
    mark(w, n);
    return n;
}

/* A new DAG node from operand values; its value in *out. Returns 0, 1 not covered. */
static int make_op(struct walk *w, enum rx_op op, const struct value *a, const struct value *b,
                   double p0, double p1, struct value *out, const char *what)
{
    if (a->kind == V_PAIR || (b && b->kind == V_PAIR))
        return not_covered(w, "%s of the (values, indices) pair itself", what);
    if (a->kind == V_DEVICE || (b && b->kind == V_DEVICE))
        return not_covered(w, "%s of a tensor's device", what);
    if (a->kind == V_CONST && a->is_none)
        return not_covered(w, "%s of None", what);
    if (a->slab || (b && b->slab))
        return not_covered(w, "%s of a slice (select) of a tensor", what);
    /* a flipped or narrowed tensor combines with constants and tensors laid out alike */
    const struct value *lay = a->kind == V_EXPR ? a : b;
    if (b && a->kind == V_EXPR && b->kind == V_EXPR &&
        (a->flip != b->flip || a->narrow != b->narrow || (a->narrow && a->narrow_dim != b->narrow_dim)))
        return not_covered(w, "%s of a flipped or narrowed tensor and one laid out otherwise", what);
    int ia = expr_of(w, a), ib = b ? expr_of(w, b) : -1;
    /* a GEMM's or a convolution's epilogue may combine its value with inputs (bias,
     * residual), and so may a scan's: its result has the inputs' shape */
    bool scan = w->p->red == RED_CUMSUM || w->p->red == RED_CUMPROD;
    if (ib >= 0 && w->p->family != RECIPE_GEMM && w->p->family != RECIPE_CONV && !scan &&
        ((w->has_acc[ia] && w->has_input[ib]) || (w->has_acc[ib] && w->has_input[ia])))
        return not_covered(w, "%s combines a reduced value with an input (an epilogue takes "
                              "constants only; a full-size tensor needs a broadcast back over "
                              "the reduced dim)", what);
    int n = add_node(w->p, op, ia, ib, p0, p1);
    mark(w, n);
    memset(out, 0, sizeof *out);
    out->kind = V_EXPR;
    out->node = n;
    if (lay && lay->kind == V_EXPR) {
        out->flip = lay->flip;
        out->narrow = lay->narrow;
        out->narrow_dim = lay->narrow_dim;
    }
    return 0;
}

/* Reads a repr such as "ELU(alpha=1.0)" for "alpha=": the number, else dflt. */
static double repr_num(const char *repr, const char *key, double dflt)
{
    const char *s = repr ? strstr(repr, key) : NULL;
    if (!s)
        return dflt;
    char *end;
    double v = strtod(s + strlen(key), &end);
    return end == s + strlen(key) ? dflt : v;
}

/* The dim argument: an int, or a list of one int. */
static int dim_arg(struct walk *w, const json_t *node, size_t pos, int *dim, bool *given)
{
    const json_t *a = arg_at(node, pos, "dim");
    *given = false;
    if (!a || json_is_null(a))
        return 0;
    if (json_is_array(a)) {
        if (json_array_size(a) != 1)
            return not_covered(w, "%s over several dims at once", "a reduction");
        a = json_array_get(a, 0);
    }
    if (!json_is_integer(a))
        return not_covered(w, "%s with a dim that is not a constant integer", "a reduction");
    *dim = (int)json_integer_value(a);
    *given = true;
    return 0;
}

/* The dims of sum/mean/amax/amin/prod: one, a list (kept in the plan; finish_reduce
 * checks that they are consecutive), or none (every dim). */
static int dims_arg(struct walk *w, const json_t *node, size_t pos, int *dim, bool *given)
{
    const json_t *a = arg_at(node, pos, "dim");
    if (!json_is_array(a) || json_array_size(a) <= 1)
        return dim_arg(w, node, pos, dim, given);
    size_t n = json_array_size(a);
    if (n > RECIPE_MAX_DIMS)
        return not_covered(w, "%s over more dims than a tensor may have here", "a reduction");
    for (size_t i = 0; i < n; i++) {
        const json_t *d = json_array_get(a, i);
        if (!json_is_integer(d))
            return not_covered(w, "%s with a dim that is not a constant integer", "a reduction");
        w->p->red_dims[i] = (int)json_integer_value(d);
    }
    w->p->n_dims = (int)n;
    *dim = w->p->red_dims[0];
    *given = true;
    return 0;
}

static int begin_reduction(struct walk *w, const struct value *x, const char *what)
{
    if (w->p->family == RECIPE_GEMM || w->p->family == RECIPE_CONV) {
        /* one reduction of the product's or the convolution's epilogue (over the product's
         * rows: recipe_gemm_finish; over the convolution's channels: recipe_conv_finish) */
        char msg[256];
        const char *of = w->p->family == RECIPE_GEMM ? "a matrix product" : "a convolution";
        if (w->n_reductions++) {
            snprintf(msg, sizeof msg, "more than one reduction after %s (%s is the second)", of, what);
            return not_covered(w, "%s", msg);
        }
        if (x->kind != V_EXPR || !w->has_acc[x->node]) {
            snprintf(msg, sizeof msg, "%s of something that does not depend on %s", what, of);
            return not_covered(w, "%s", msg);
        }
        return 0;
    }
    if (w->n_reductions++)
        return not_covered(w, "more than one reduction (%s is the second)", what);
    if (!plain_layout(x))
        return not_covered(w, "%s of a flipped, narrowed or sliced tensor", what);
    if (x->kind != V_EXPR || !w->has_input[x->node])
        return not_covered(w, "%s of something that is not a tensor expression of the inputs", what);
    if (w->has_acc[x->node])
        return not_covered(w, "%s of an already reduced value", what);
    return 0;
}

int rx_affine_degree(const recipe_plan *p, int n, bool (*coef)(const recipe_plan *p, int input, const void *ctx),
                     const void *ctx)
{
    const rx_node *x = &p->nodes[n];
    switch (x->op) {
    case RX_ACC: return 1;
    case RX_CONST: return 0;
    case RX_INPUT: return coef(p, x->input, ctx) ? 0 : -1;
    default: break;
    }
    int da = x->a >= 0 ? rx_affine_degree(p, x->a, coef, ctx) : 0;
    int db = x->b >= 0 ? rx_affine_degree(p, x->b, coef, ctx) : 0;
    if (da < 0 || db < 0)
        return -1;
    switch (x->op) {
    case RX_NEG: return da;
    case RX_ADD:
    case RX_SUB: return da > db ? da : db;
    case RX_MUL: return da + db <= 1 ? da + db : -1;
    case RX_DIV: return db == 0 ? da : -1;
    default: return da + db == 0 ? 0 : -1;
    }
}

bool rx_reaches(const recipe_plan *p, int n, int target)
{
    if (n < 0)
        return false;
    return n == target || rx_reaches(p, p->nodes[n].a, target) || rx_reaches(p, p->nodes[n].b, target);
}

/*
 * After a keepdim reduction over a product's rows, the row dim has size 1: sum, mean,
 * max, min, amax, amin, prod and logsumexp over it again (keepdim) are the value itself
 * (KernelBench level 2's 18: sum, then max, mean and two logsumexps of the (B, 1) sum).
 * True when x holds only the reduced value and (dim, keepdim) is such a reduction;
 * out is then x. Softmax-like reductions keep the row: never.
 */
static bool size1_identity(struct walk *w, const struct value *x, int dim, bool keepdim, struct value *out)
{
    recipe_plan *p = w->p;
    if (p->family != RECIPE_GEMM || w->reduced_node < 0 || !keepdim || x->kind != V_EXPR)
        return false;
    int nd = p->gemm.ndim;
    if (dim < -nd || dim >= nd || (dim < 0 ? dim + nd : dim) != nd - 1)
        return false;
    if (!rx_reaches(p, x->node, w->reduced_node) || rx_reaches(p, x->node, p->gemm.acc_node))
        return false;
    *out = *x;
    return true;
}

static int set_reduction(struct walk *w, enum recipe_red red, int operand, int dim, bool keepdim,
                         struct value *out)
{
    recipe_plan *p = w->p;
    if ((p->red_all || p->n_dims > 1) && p->family == RECIPE_GEMM)
        return not_covered(w, "%s over several dims after a matrix product", recipe_red_name(red));
    p->red = red;
    p->root = operand;
    p->dim = dim;
    p->keepdim = keepdim;
    int n = add_node(p, RX_ACC, -1, -1, 0, 0);
    mark(w, n);
    out->kind = V_EXPR;
    out->node = n;
    if (p->family == RECIPE_GEMM && keepdim && red != RED_SOFTMAX && red != RED_LOGSOFTMAX &&
        red != RED_GROUPNORM)
        w->reduced_node = n;
    return 0;
}

static const recipe_tensor *largest_input(const recipe_plan *p, int node);

/* The shape of the tensor a value holds before its layout (flip, narrow, select): its
 * largest input's, or after a scan the scanned operand's; NULL for constants. */
static const recipe_tensor *value_shape(const struct walk *w, const struct value *v)
{
    if (v->kind != V_EXPR)
        return NULL;
    if (w->has_acc[v->node])
        return w->p->root >= 0 ? largest_input(w->p, w->p->root) : NULL;
    return w->has_input[v->node] ? largest_input(w->p, v->node) : NULL;
}

/* The number of dims of the tensor a value holds, or 0. */
static int value_ndim(const struct walk *w, const struct value *v)
{
    const recipe_tensor *t = value_shape(w, v);
    int nd = t ? t->ndim : 0;
    return v->slab == 1 ? nd - 1 : nd;
}

/* A dim argument d of a tensor of nd dims, normalised into [0, nd); 1 not covered. */
static int norm_dim(struct walk *w, int d, int nd, const char *what, int *out)
{
    if (d < -nd || d >= nd)
        return not_covered(w, "%s with a dim out of range", what);
    *out = d < 0 ? d + nd : d;
    return 0;
}

/* cumsum/cumprod along one dim (SCAN); the operand may be flipped along that dim (a
 * reverse scan, flipped back later) or narrowed to all but its last element (made
 * exclusive by cat_op). */
static int scan(struct walk *w, const char *name, const json_t *node, const struct value *x, struct value *out)
{
    int dim = 0;
    bool given = false;
    if (dim_arg(w, node, 1, &dim, &given))
        return 1;
    if (!given)
        return not_covered(w, "%s without a dim", name);
    const json_t *dt = arg_at(node, 2, "dtype");
    if (dt && !json_is_null(dt))
        return not_covered(w, "%s with a dtype argument", name);
    enum recipe_family f = w->p->family;
    if (f == RECIPE_GEMM || f == RECIPE_CONV || f == RECIPE_POOL)
        return not_covered(w, "%s after a matrix product, convolution or pooling", name);
    if (x->slab)
        return not_covered(w, "%s of a slice (select) of a tensor", name);
    struct value plain = *x;
    plain.flip = 0;
    plain.narrow = 0;
    if (begin_reduction(w, &plain, name))
        return 1;
    if (norm_dim(w, dim, value_ndim(w, x), name, &dim))
        return 1;
    if (x->flip && x->flip - 1 != dim)
        return not_covered(w, "%s along a dim other than the one its operand is flipped along", name);
    if (x->narrow && x->narrow_dim != dim)
        return not_covered(w, "%s along a dim other than the one its operand is narrowed along", name);
    if (x->flip && x->narrow)
        return not_covered(w, "%s of a flipped and narrowed tensor", name);
    w->p->scan_reverse = x->flip != 0;
    if (set_reduction(w, !strcmp(name, "cumsum") ? RED_CUMSUM : RED_CUMPROD, x->node, dim, false, out))
        return 1;
    out->flip = x->flip;
    out->narrow = x->narrow;
    out->narrow_dim = x->narrow_dim;
    return 0;
}

/* Handles the reductions; returns -2 when name is not one. */
static int reduction(struct walk *w, const char *name, const json_t *node, const struct value *x,
                     const char *module_repr, bool is_module, struct value *out)
{
    bool soft = !strcmp(name, "softmax") || !strcmp(name, "log_softmax") ||
                !strcmp(name, "Softmax") || !strcmp(name, "LogSoftmax");
    static const struct { const char *n; enum recipe_red r; } plain[] = {
        { "sum", RED_SUM }, { "mean", RED_MEAN }, { "amax", RED_MAX }, { "amin", RED_MIN },
        { "prod", RED_PROD }, { "argmax", RED_ARGMAX }, { "argmin", RED_ARGMIN },
    };
    int dim = 0;
    bool given = false;
    if (soft) {
        enum recipe_red r = (name[0] == 'l' || name[0] == 'L') ? RED_LOGSOFTMAX : RED_SOFTMAX;
        if (is_module) {
            if (!module_repr || !strstr(module_repr, "dim="))
                return not_covered(w, "%s module without a dim (implicit dim is deprecated)", name);
            dim = (int)repr_num(module_repr, "dim=", 0);
            if (strstr(module_repr, "dim=None"))
                return not_covered(w, "%s module with dim=None", name);
        } else {
            if (dim_arg(w, node, 1, &dim, &given))
                return 1;
            if (!given)
                return not_covered(w, "%s without a dim", name);
            /* dtype: torch.softmax(x, dim, dtype) has it third, F.softmax(x, dim,
             * _stacklevel, dtype) fourth; fx prints a dtype as a string */
            const json_t *dt = arg_at(node, 99, "dtype");
            for (size_t i = 2; i < n_args(node); i++)
                if (json_is_string(arg_at(node, i, NULL)))
                    dt = arg_at(node, i, NULL);
            if (dt && !json_is_null(dt))
                return not_covered(w, "%s with a dtype argument", name);
        }
        if (begin_reduction(w, x, name))
            return 1;
        return set_reduction(w, r, x->node, dim, false, out);
    }
    if (is_module)
        return -2;
    if (!strcmp(name, "cumsum") || !strcmp(name, "cumprod"))
        return scan(w, name, node, x, out);
    if (!strcmp(name, "logsumexp")) { /* a GEMM's row reduction, or REDUCE (reduce.cu's LOGSUMEXP) */
        if (dim_arg(w, node, 1, &dim, &given))
            return 1;
        if (!given)
            return not_covered(w, "%s without a dim", name);
        const json_t *kd = arg_at(node, 2, "keepdim");
        if (size1_identity(w, x, dim, kd && json_is_true(kd), out))
            return 0;
        if (begin_reduction(w, x, name))
            return 1;
        return set_reduction(w, RED_LOGSUMEXP, x->node, dim, kd && json_is_true(kd), out);
    }
    if (!strcmp(name, "max") || !strcmp(name, "min")) {
        const json_t *a1 = arg_at(node, 1, "dim");
        if (!a1) { /* torch.max(x): the extreme of every element, a tensor (not a pair) */
            if (begin_reduction(w, x, name))
                return 1;
            w->p->red_all = true;
            return set_reduction(w, name[1] == 'a' ? RED_MAX : RED_MIN, x->node, 0, false, out);
        }
        if (json_is_string(a1) && json_string_value(a1)[0] == '%') {
            /* torch.max(x, y): elementwise */
            struct value y;
            if (arg_value(w, a1, &y, name))
                return 1;
            return make_op(w, name[1] == 'a' ? RX_MAX : RX_MIN, x, &y, 0, 0, out, name);
        }
        if (dim_arg(w, node, 1, &dim, &given))
            return 1;
        const json_t *kd = arg_at(node, 2, "keepdim");
        w->pair_identity = size1_identity(w, x, dim, kd && json_is_true(kd), &w->pair_value);
        if (w->pair_identity) {
            out->kind = V_PAIR;
            return 0;
        }
        if (begin_reduction(w, x, name))
            return 1;
        w->n_reductions--; /* counted when an element of the pair is taken */
        w->pair_operand = x->node;
        w->pair_is_max = name[1] == 'a';
        w->pair_dim = dim;
        w->pair_keepdim = kd && json_is_true(kd);
        out->kind = V_PAIR;
        return 0;
    }
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++) {
        if (strcmp(name, plain[i].n))
            continue;
        bool arg = plain[i].r == RED_ARGMAX || plain[i].r == RED_ARGMIN;
        if (arg ? dim_arg(w, node, 1, &dim, &given) : dims_arg(w, node, 1, &dim, &given))
            return 1;
        const json_t *kd = arg_at(node, 2, "keepdim");
        const json_t *dt = arg_at(node, 3, "dtype");
        if (!given) /* every element: argmax(x) gives the index into the flattened x */
            w->p->red_all = true;
        if (plain[i].r <= RED_MEAN || plain[i].r == RED_PROD) {
            if (dt && !json_is_null(dt))
                return not_covered(w, "%s with a dtype argument", name);
        }
        if (!arg && given && size1_identity(w, x, dim, kd && json_is_true(kd), out))
            return 0;
        if (begin_reduction(w, x, name))
            return 1;
        return set_reduction(w, plain[i].r, x->node, dim, kd && json_is_true(kd), out);
    }
    return -2;
}

/* x.size(d): a constant from the shape of the tensor x holds. */
static int size_op(struct walk *w, const json_t *node, const struct value *x, struct value *out)
{
    const json_t *a = arg_at(node, 1, "dim");
    if (!a)
        return not_covered(w, "%s", "x.size() without a dim (a shape tuple)");
    if (!json_is_integer(a))
        return not_covered(w, "%s", "x.size(d) with a d that is not a constant integer");
    if (x->slab || !value_shape(w, x))
        return not_covered(w, "%s", "x.size(d) of something that is not a tensor of the inputs");
    int d;
    if (norm_dim(w, (int)json_integer_value(a), value_ndim(w, x), "size", &d))
        return 1;
    memset(out, 0, sizeof *out);
    out->kind = V_CONST;
    out->num = (double)(x->narrow && x->narrow_dim == d ? x->narrow : value_shape(w, x)->shape[d]);
    return 0;
}

/* narrow(x, dim, 0, length): the first length elements along dim. */
static int narrow_op(struct walk *w, const json_t *node, const struct value *x, int d, struct value *out)
{
    const json_t *sa = arg_at(node, 2, "start"), *la = arg_at(node, 3, "length");
    struct value st, ln;
    if (!sa || !la)
        return not_covered(w, "%s", "narrow without a start and a length");
    if (arg_value(w, sa, &st, "narrow") || arg_value(w, la, &ln, "narrow"))
        return 1;
    if (st.kind != V_CONST || ln.kind != V_CONST || st.is_none || ln.is_none)
        return not_covered(w, "%s", "narrow with a start or length that is not a constant");
    if (!plain_layout(x))
        return not_covered(w, "%s", "narrow of a flipped or narrowed tensor");
    int64_t n = value_shape(w, x)->shape[d];
    if (st.num != 0)
        return not_covered(w, "%s", "narrow from other than the start of the dim");
    if (ln.num < 1 || ln.num > (double)n || ln.num != (double)(int64_t)ln.num)
        return not_covered(w, "%s", "narrow with a length out of range");
    *out = *x;
    if ((int64_t)ln.num < n) {
        out->narrow = (int64_t)ln.num;
        out->narrow_dim = d;
    }
    return 0;
}

static void input_value(struct walk *w, int k, struct value *out);

/* x.unsqueeze(d) of an input as read (A.unsqueeze(1) * B): another read of the input,
 * through a view with a size-1 dim inserted at d of the dims it had so far. */
static int unsqueeze_input(struct walk *w, const json_t *da, const struct value *x, struct value *out)
{
    recipe_plan *p = w->p;
    int k = p->nodes[x->node].input;
    unsigned m = p->nodes[x->node].unsq;
    int nd = p->inputs[k].ndim + __builtin_popcount(m), d = 0;
    if (norm_dim(w, (int)json_integer_value(da), nd + 1, "unsqueeze", &d))
        return 1;
    if (nd + 1 > RECIPE_MAX_DIMS)
        return not_covered(w, "%s", "unsqueeze to more dims than the kernels take");
    unsigned below = m & ((1u << d) - 1u), from = m & ~((1u << d) - 1u);
    input_value(w, k, out);
    p->nodes[out->node].unsq = below | from << 1 | 1u << d;
    return 0;
}

static int64_t numel(const recipe_tensor *t);

int recipe_view_args(const json_t *node, int64_t n_elems, int64_t *shape, int *ndim)
{
    const json_t *args = json_object_get(node, "args");
    size_t na = json_array_size(args), first = 1;
    const json_t *list = args;
    if (na == 2 && json_is_array(json_array_get(args, 1))) { /* x.view((1, -1, 1)) */
        list = json_array_get(args, 1);
        first = 0;
    }
    int nd = (int)(json_array_size(list) - first), minus = -1;
    if (nd < 1 || nd > RECIPE_MAX_DIMS || json_object_size(json_object_get(node, "kwargs")))
        return 1;
    int64_t known = 1;
    for (int d = 0; d < nd; d++) {
        const json_t *v = json_array_get(list, first + (size_t)d);
        if (!json_is_integer(v))
            return 1;
        shape[d] = json_integer_value(v);
        if (shape[d] == -1 && minus < 0)
            minus = d;
        else if (shape[d] < 0)
            return 1;
        else
            known *= shape[d];
    }
    if (minus >= 0) {
        if (known == 0 || n_elems % known)
            return 1;
        shape[minus] = n_elems / known;
    } else if (known != n_elems) {
        return 1;
    }
    *ndim = nd;
    return 0;
}

/* x.view(...) / x.reshape(...) of an input that only inserts size-1 dims
 * (bias.view(1, -1, 1, 1)): the input read unsqueezed there. -2 for any other view. */
static int view_input(struct walk *w, const json_t *node, const struct value *x, struct value *out)
{
    recipe_plan *p = w->p;
    if (x->kind != V_EXPR || p->nodes[x->node].op != RX_INPUT || p->nodes[x->node].unsq || !plain_layout(x))
        return -2;
    const recipe_tensor *t = &p->inputs[p->nodes[x->node].input];
    int64_t want[RECIPE_MAX_DIMS];
    int nd;
    if (recipe_view_args(node, numel(t), want, &nd))
        return -2;
    unsigned mask = 0;
    int i = 0;
    for (int d = 0; d < nd; d++) {
        if (i < t->ndim && want[d] == t->shape[i])
            i++;
        else if (want[d] == 1)
            mask |= 1u << d;
        else
            return -2;
    }
    if (i != t->ndim)
        return -2;
    input_value(w, p->nodes[x->node].input, out);
    p->nodes[out->node].unsq = mask;
    return 0;
}

/* The views a scan is written with: flip, narrow, select, unsqueeze (of a selected
 * column), zeros_like, size; and views of an input that insert size-1 dims (view_input).
 * -2 when name is none of them. */
static int layout_op(struct walk *w, const char *name, const json_t *node, const struct value *x, struct value *out)
{
    if (!strcmp(name, "size"))
        return size_op(w, node, x, out);
    if ((!strcmp(name, "view") || !strcmp(name, "reshape")) && w->p->family != RECIPE_GEMM &&
        w->p->family != RECIPE_CONV)
        return view_input(w, node, x, out);
    bool flip = !strcmp(name, "flip"), narrow = !strcmp(name, "narrow"), select = !strcmp(name, "select"),
         unsq = !strcmp(name, "unsqueeze"), zeros = !strcmp(name, "zeros_like");
    if (!flip && !narrow && !select && !unsq && !zeros)
        return -2;
    if (w->p->family == RECIPE_GEMM || w->p->family == RECIPE_CONV)
        return -2; /* views only serve scans here */
    if (!value_shape(w, x))
        return not_covered(w, "%s of something that is not a tensor of the inputs", name);
    if (zeros) {
        const json_t *kw = json_object_get(node, "kwargs");
        if (n_args(node) > 1 || (json_is_object(kw) && json_object_size(kw) > (json_object_get(kw, "input") ? 1u : 0u)))
            return not_covered(w, "%s with a dtype or other arguments", name);
        if (x->slab != 2 && !plain_layout(x))
            return not_covered(w, "%s of a flipped, narrowed or sliced tensor", name);
        memset(out, 0, sizeof *out);
        out->kind = V_CONST; /* zeros of x's shape: 0, broadcast */
        if (x->slab == 2) {
            out->slab = 3;
            out->slab_dim = x->slab_dim;
        }
        return 0;
    }
    const json_t *da = arg_at(node, 1, flip ? "dims" : "dim");
    if (flip && json_is_array(da)) {
        if (json_array_size(da) != 1)
            return not_covered(w, "%s of several dims", name);
        da = json_array_get(da, 0);
    }
    if (!da || !json_is_integer(da))
        return not_covered(w, "%s with a dim that is not a constant integer", name);
    int nd = value_ndim(w, x), d;
    if (unsq && x->kind == V_EXPR && w->p->nodes[x->node].op == RX_INPUT && plain_layout(x))
        return unsqueeze_input(w, da, x, out);
    if (unsq) {
        if (x->slab != 1)
            return not_covered(w, "%s (a view that changes the shape)", name);
        if (norm_dim(w, (int)json_integer_value(da), nd + 1, name, &d))
            return 1;
        if (d != x->slab_dim)
            return not_covered(w, "%s at a dim other than the one selected away", name);
        *out = *x;
        out->slab = 2;
        return 0;
    }
    if (x->slab)
        return not_covered(w, "%s of a slice (select) of a tensor", name);
    if (norm_dim(w, (int)json_integer_value(da), nd, name, &d))
        return 1;
    if (narrow)
        return narrow_op(w, node, x, d, out);
    *out = *x;
    if (select) {
        const json_t *ia = arg_at(node, 2, "index");
        if (!plain_layout(x))
            return not_covered(w, "%s of a flipped or narrowed tensor", name);
        if (!ia || !json_is_integer(ia))
            return not_covered(w, "%s with an index that is not a constant integer", name);
        out->slab = 1;
        out->slab_dim = d;
        return 0;
    }
    if (x->narrow)
        return not_covered(w, "%s of a narrowed tensor", name);
    if (x->flip && x->flip - 1 != d)
        return not_covered(w, "%s along a second dim", name);
    out->flip = x->flip ? 0 : d + 1; /* flipping twice is the identity */
    return 0;
}

/* cat((zeros column, scan of all but the last element), dim): the exclusive scan. */
static int cat_op(struct walk *w, const json_t *node, struct value *out)
{
    static const char *what = "cat other than of a zero column and a cumsum of all but the last "
                              "element along that dim (an exclusive scan)";
    const json_t *ts = arg_at(node, 0, "tensors");
    struct value a, b;
    if (!json_is_array(ts) || json_array_size(ts) != 2)
        return not_covered(w, "%s", what);
    if (arg_value(w, json_array_get(ts, 0), &a, "cat") || arg_value(w, json_array_get(ts, 1), &b, "cat"))
        return 1;
    const json_t *da = arg_at(node, 1, "dim");
    if (da && !json_is_integer(da))
        return not_covered(w, "%s", "cat with a dim that is not a constant integer");
    const recipe_plan *p = w->p;
    const recipe_tensor *t = p->root >= 0 ? largest_input(p, p->root) : NULL;
    bool is_scan = p->red == RED_CUMSUM && w->n_reductions == 1 && b.kind == V_EXPR &&
                   p->nodes[b.node].op == RX_ACC && t;
    int d = 0;
    if (!is_scan || a.slab != 3 || b.flip || !b.narrow)
        return not_covered(w, "%s", what);
    if (norm_dim(w, da ? (int)json_integer_value(da) : 0, t->ndim, "cat", &d))
        return 1;
    if (d != p->dim || a.slab_dim != d || b.narrow_dim != d || b.narrow != t->shape[d] - 1)
        return not_covered(w, "%s", what);
    *out = b;
    out->narrow = 0;
    w->p->scan_exclusive = true;
    return 0;
}

/* The value of spec input k as an expression. */
static void input_value(struct walk *w, int k, struct value *out)
{
    memset(out, 0, sizeof *out);
    out->kind = V_EXPR;
    out->node = add_node(w->p, RX_INPUT, -1, -1, 0, 0);
    w->p->nodes[out->node].input = k;
    mark(w, out->node);
}

static int input_named(const recipe_plan *p, const char *name);

/* BatchNorm in eval mode, from its running statistics: (x - running_mean) / sqrt(running_var
 * + eps) * weight + bias, a value a channel. On a GEMM's 2-D product (BatchNorm1d) the
 * channels are its columns, and the [N] parameters broadcast along them as they are; on a
 * convolution's output (BatchNorm1d/2d/3d) the channel is dim 1, so the parameters [COUT]
 * are marked as one value a channel (conv.chan_vec) for the epilogue to read by channel. */
static int eval_batchnorm(struct walk *w, const json_t *node, const struct value *x, const char *base,
                          const char *repr, struct value *out)
{
    recipe_plan *p = w->p;
    const char *target = json_string_value(json_object_get(node, "target"));
    if (p->family == RECIPE_GEMM && p->gemm.ndim != 2)
        return not_covered(w, "%s of a product that is not 2-D", base);
    if (!target || !repr || !strstr(repr, "track_running_stats=True"))
        return not_covered(w, "%s without running statistics (batch statistics)", base);
    char name[160];
    int k[4];
    static const char *parts[] = { "running_mean", "running_var", "weight", "bias" };
    for (int i = 0; i < 4; i++) {
        snprintf(name, sizeof name, "%s.%s", target, parts[i]);
        k[i] = input_named(p, name);
        if (k[i] < 0 && (i < 2 || strstr(repr, "affine=True"))) {
            snprintf(name, sizeof name, "%s without its %s among the inputs", base, parts[i]);
            return not_covered(w, "%s", name);
        }
        if (k[i] >= 0 && p->family == RECIPE_CONV) {
            const recipe_tensor *t = &p->inputs[k[i]];
            if (t->ndim != 1 || t->shape[0] != p->conv.cout)
                return not_covered(w, "%s whose parameters are not one value an output channel", base);
            p->conv.chan_vec |= 1u << k[i];
        }
    }
    struct value v[4], eps, t, d;
    for (int i = 0; i < 4; i++)
        if (k[i] >= 0)
            input_value(w, k[i], &v[i]);
    memset(&eps, 0, sizeof eps);
    eps.kind = V_CONST;
    eps.num = repr_num(repr, "eps=", 1e-5);
    if (make_op(w, RX_SUB, x, &v[0], 0, 0, &t, base) || make_op(w, RX_ADD, &v[1], &eps, 0, 0, &d, base) ||
        make_op(w, RX_RSQRT, &d, NULL, 0, 0, &d, base) || make_op(w, RX_MUL, &t, &d, 0, 0, &t, base))
        return 1;
    if (k[2] >= 0 && make_op(w, RX_MUL, &t, &v[2], 0, 0, &t, base))
        return 1;
    if (k[3] >= 0 && make_op(w, RX_ADD, &t, &v[3], 0, 0, &t, base))
        return 1;
    *out = t;
    return 0;
}

/* GroupNorm(G, C) of a 2-D product (rows, C = N): statistics over each group of N / G
 * columns of a row, a reduction of the product like softmax (the normalised value is the
 * RX_ACC of the epilogue), then the per-column affine weight and bias. */
static int gemm_groupnorm(struct walk *w, const json_t *node, const struct value *x, const char *repr,
                          struct value *out)
{
    recipe_plan *p = w->p;
    const char *target = json_string_value(json_object_get(node, "target"));
    long groups = 0, chans = 0;
    if (!target || !repr || sscanf(repr, "GroupNorm(%ld, %ld", &groups, &chans) != 2 || groups < 1)
        return not_covered(w, "%s without its groups and channels in the module's repr", "GroupNorm");
    if (p->gemm.ndim != 2 || !p->gemm.n_last)
        return not_covered(w, "%s of a product that is not 2-D (rows, columns)", "GroupNorm");
    if (chans != p->gemm.n || chans % groups)
        return not_covered(w, "%s whose channels are not the product's columns", "GroupNorm");
    bool affine = !strstr(repr, "affine=False");
    char name[160];
    int k[2] = { -1, -1 };
    static const char *parts[] = { "weight", "bias" };
    for (int i = 0; affine && i < 2; i++) {
        snprintf(name, sizeof name, "%s.%s", target, parts[i]);
        k[i] = input_named(p, name);
        if (k[i] < 0)
            return not_covered(w, "GroupNorm without its %s among the inputs", parts[i]);
    }
    if (begin_reduction(w, x, "GroupNorm"))
        return 1;
    p->gemm.gn_group = chans / groups;
    p->gemm.gn_eps = repr_num(repr, "eps=", 1e-5);
    struct value t, v;
    memset(&t, 0, sizeof t);
    if (set_reduction(w, RED_GROUPNORM, x->node, 1, false, &t))
        return 1;
    for (int i = 0; i < 2; i++) {
        if (k[i] < 0)
            continue;
        input_value(w, k[i], &v);
        if (make_op(w, i ? RX_ADD : RX_MUL, &t, &v, 0, 0, &t, "GroupNorm"))
            return 1;
    }
    *out = t;
    return 0;
}

static struct value const_value(double v)
{
    struct value c;
    memset(&c, 0, sizeof c);
    c.kind = V_CONST;
    c.num = v;
    return c;
}

/* The pointwise loss of d = input - target with threshold t, as min/max (there is no
 * select op): smooth_l1 = 0.5 min(|d|, t)^2 / t + max(|d| - t, 0), huber = t times that. */
static int threshold_loss(struct walk *w, const struct value *d, double t, double scale, struct value *out,
                          const char *what)
{
    struct value ad, lo, hi, tc = const_value(t), half = const_value(0.5 / t), sc = const_value(scale);
    if (make_op(w, RX_ABS, d, NULL, 0, 0, &ad, what) || make_op(w, RX_MIN, &ad, &tc, 0, 0, &lo, what) ||
        make_op(w, RX_SQUARE, &lo, NULL, 0, 0, &lo, what) || make_op(w, RX_MUL, &lo, &half, 0, 0, &lo, what) ||
        make_op(w, RX_SUB, &ad, &tc, 0, 0, &hi, what) || make_op(w, RX_RELU, &hi, NULL, 0, 0, &hi, what) ||
        make_op(w, RX_ADD, &lo, &hi, 0, 0, out, what))
        return 1;
    return scale != 1.0 ? make_op(w, RX_MUL, out, &sc, 0, 0, out, what) : 0;
}

/* Loss functions of torch.nn.functional over (input, target): the pointwise loss, then the
 * reduction its `reduction` names: 'mean' over every element, 'sum', 'batchmean' (kl_div:
 * the sum over the size of the first dim), 'none' (no reduction). kl_div(input, target) =
 * target (log target - input), with target log target as target log max(target, FLT_MIN)
 * so that a zero target gives 0 as torch's xlogy does; with log_target, exp(target)
 * (target - input). -2 when name is no loss function. */
static int loss(struct walk *w, const char *name, const json_t *node, const struct value *x, bool is_module,
                struct value *out)
{
    static const char *names[] = { "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "kl_div" };
    size_t which = 0;
    while (which < sizeof names / sizeof names[0] && strcmp(name, names[which]))
        which++;
    if (is_module || which == sizeof names / sizeof names[0])
        return -2;
    const json_t *ta = arg_at(node, 1, "target");
    if (!ta)
        return not_covered(w, "%s without a target", name);
    struct value t, d, v;
    if (arg_value(w, ta, &t, name))
        return 1;
    if (t.kind != V_EXPR)
        return not_covered(w, "%s with a target that is not a tensor", name);
    bool huber = which == 3;
    const json_t *sa = huber ? NULL : arg_at(node, 2, "size_average"), *rd = huber ? NULL : arg_at(node, 3, "reduce");
    if ((sa && !json_is_null(sa)) || (rd && !json_is_null(rd)))
        return not_covered(w, "%s with the deprecated size_average/reduce arguments", name);
    const json_t *ra = arg_at(node, huber ? 2 : 4, "reduction"), *wt = arg_at(node, 99, "weight");
    const char *red = ra && json_is_string(ra) ? json_string_value(ra) : "mean";
    if (ra && !json_is_string(ra))
        return not_covered(w, "%s with a reduction that is not a constant string", name);
    if (wt && !json_is_null(wt))
        return not_covered(w, "%s with a weight", name);
    bool batchmean = !strcmp(red, "batchmean");
    if (strcmp(red, "mean") && strcmp(red, "sum") && strcmp(red, "none") && !(batchmean && which == 4))
        return not_covered(w, "%s with an unknown reduction", name);
    if (which == 4) {
        const json_t *lt = arg_at(node, 5, "log_target");
        struct value a, b, floor = const_value(1.17549435e-38);
        if (lt && json_is_true(lt)) {
            if (make_op(w, RX_SUB, &t, x, 0, 0, &a, name) || make_op(w, RX_EXP, &t, NULL, 0, 0, &b, name) ||
                make_op(w, RX_MUL, &b, &a, 0, 0, &v, name))
                return 1;
        } else if (make_op(w, RX_MAX, &t, &floor, 0, 0, &a, name) || make_op(w, RX_LOG, &a, NULL, 0, 0, &a, name) ||
                   make_op(w, RX_SUB, &a, x, 0, 0, &a, name) || make_op(w, RX_MUL, &t, &a, 0, 0, &v, name)) {
            return 1;
        }
    } else {
        if (make_op(w, RX_SUB, x, &t, 0, 0, &d, name))
            return 1;
        double p = 1.0;
        if (which >= 2 && num_arg(w, node, which == 3 ? 3 : 5, which == 3 ? "delta" : "beta", 1.0, &p, name))
            return 1;
        if (which >= 2 && !(p > 0))
            return not_covered(w, "%s with a threshold <= 0 (a plain l1_loss)", name);
        int rc = which == 0 ? make_op(w, RX_SQUARE, &d, NULL, 0, 0, &v, name)
               : which == 1 ? make_op(w, RX_ABS, &d, NULL, 0, 0, &v, name)
                            : threshold_loss(w, &d, p, which == 3 ? p : 1.0, &v, name);
        if (rc)
            return rc;
    }
    if (!strcmp(red, "none")) {
        *out = v;
        return 0;
    }
    /* batchmean: the first dim of the operand, which is its largest input's shape */
    const recipe_tensor *big = largest_input(w->p, v.node);
    int64_t n0 = batchmean && big && big->ndim > 0 ? big->shape[0] : 1;
    if (begin_reduction(w, &v, name))
        return 1;
    w->p->red_all = true;
    if (set_reduction(w, !strcmp(red, "mean") ? RED_MEAN : RED_SUM, v.node, 0, false, out))
        return 1;
    if (batchmean) {
        struct value inv = const_value(1.0 / (double)n0);
        return make_op(w, RX_MUL, out, &inv, 0, 0, out, name);
    }
    return 0;
}

/* Unary and binary elementwise ops by name, with their constants from args or kwargs
 * (functions and methods) or from the module's repr (modules). -2: not one. */
static int elementwise(struct walk *w, const char *name, const json_t *node, const struct value *x,
                       const char *repr, bool is_module, struct value *out)
{
    double p0, p1;
    char base[64];
    snprintf(base, sizeof base, "%s", name);
    size_t len = strlen(base);
    if (!is_module && len > 1 && base[len - 1] == '_' && base[0] != '_')
        base[len - 1] = '\0'; /* relu_ and friends: in place, the same value */
    if (!is_module && (!strcmp(base, "clone") || !strcmp(base, "detach") || !strcmp(base, "contiguous"))) {
        *out = *x; /* a copy of the same values */
        return 0;
    }
    if (is_module) {
        static const struct { const char *m; enum rx_op op; } mods[] = {
            { "ReLU", RX_RELU }, { "Sigmoid", RX_SIGMOID }, { "Tanh", RX_TANH },
            { "SELU", RX_SELU }, { "SiLU", RX_SILU }, { "Mish", RX_MISH },
            { "Softsign", RX_SOFTSIGN }, { "Hardsigmoid", RX_HARDSIGMOID },
            { "Hardswish", RX_HARDSWISH }, { "LogSigmoid", RX_LOGSIGMOID },
        };
        for (size_t i = 0; i < sizeof mods / sizeof mods[0]; i++)
            if (!strcmp(base, mods[i].m))
                return make_op(w, mods[i].op, x, NULL, 0, 0, out, base);
        if ((!strcmp(base, "BatchNorm1d") && w->p->family == RECIPE_GEMM) ||
            (!strncmp(base, "BatchNorm", 9) && w->p->family == RECIPE_CONV))
            return eval_batchnorm(w, node, x, base, repr, out);
        if (!strcmp(base, "GroupNorm") && w->p->family == RECIPE_GEMM)
            return gemm_groupnorm(w, node, x, repr, out);
        if (!strcmp(base, "Identity") || !strcmp(base, "Dropout")) {
            *out = *x;
            return 0;
        }
        if (!strcmp(base, "GELU"))
            return make_op(w, repr && strstr(repr, "tanh") ? RX_GELU_TANH : RX_GELU, x, NULL, 0, 0, out, base);
        if (!strcmp(base, "LeakyReLU"))
            return make_op(w, RX_LEAKY_RELU, x, NULL, repr_num(repr, "negative_slope=", 0.01), 0, out, base);
        if (!strcmp(base, "ELU"))
            return make_op(w, RX_ELU, x, NULL, repr_num(repr, "alpha=", 1.0), 0, out, base);
        if (!strcmp(base, "Hardtanh"))
            return make_op(w, RX_CLAMP, x, NULL, repr_num(repr, "min_val=", -1.0),
                           repr_num(repr, "max_val=", 1.0), out, base);
        if (!strcmp(base, "ReLU6"))
            return make_op(w, RX_CLAMP, x, NULL, 0, 6, out, base);
        if (!strcmp(base, "Softplus"))
            return make_op(w, RX_SOFTPLUS, x, NULL, repr_num(repr, "beta=", 1.0),
                           repr_num(repr, "threshold=", 20.0), out, base);
        return -2;
    }
    if (!strcmp(base, "gelu")) {
        const json_t *ap = arg_at(node, 1, "approximate");
        bool t = ap && json_is_string(ap) && !strcmp(json_string_value(ap), "tanh");
        return make_op(w, t ? RX_GELU_TANH : RX_GELU, x, NULL, 0, 0, out, base);
    }
    if (!strcmp(base, "leaky_relu")) {
        if (num_arg(w, node, 1, "negative_slope", 0.01, &p0, base))
            return 1;
        return make_op(w, RX_LEAKY_RELU, x, NULL, p0, 0, out, base);
    }
    if (!strcmp(base, "elu")) {
        if (num_arg(w, node, 1, "alpha", 1.0, &p0, base))
            return 1;
        return make_op(w, RX_ELU, x, NULL, p0, 0, out, base);
    }
    if (!strcmp(base, "celu")) {
        if (num_arg(w, node, 1, "alpha", 1.0, &p0, base))
            return 1;
        /* celu(x, a) = max(0, x) + min(0, a * (exp(x / a) - 1)) = elu(x) when a == 1 */
        if (p0 != 1.0)
            return not_covered(w, "%s with alpha != 1", base);
        return make_op(w, RX_ELU, x, NULL, 1.0, 0, out, base);
    }
    if (!strcmp(base, "hardtanh")) {
        if (num_arg(w, node, 1, "min_val", -1.0, &p0, base) ||
            num_arg(w, node, 2, "max_val", 1.0, &p1, base))
            return 1;
        return make_op(w, RX_CLAMP, x, NULL, p0, p1, out, base);
    }
    if (!strcmp(base, "relu6"))
        return make_op(w, RX_CLAMP, x, NULL, 0, 6, out, base);
    if (!strcmp(base, "clamp") || !strcmp(base, "clip")) {
        const json_t *lo = arg_at(node, 1, "min"), *hi = arg_at(node, 2, "max");
        if ((lo && json_is_string(lo)) || (hi && json_is_string(hi)))
            return not_covered(w, "%s with tensor bounds", base);
        if (num_arg(w, node, 1, "min", -INFINITY, &p0, base) ||
            num_arg(w, node, 2, "max", INFINITY, &p1, base))
            return 1;
        return make_op(w, RX_CLAMP, x, NULL, p0, p1, out, base);
    }
    if (!strcmp(base, "softplus")) {
        if (num_arg(w, node, 1, "beta", 1.0, &p0, base) ||
            num_arg(w, node, 2, "threshold", 20.0, &p1, base))
            return 1;
        return make_op(w, RX_SOFTPLUS, x, NULL, p0, p1, out, base);
    }
    for (size_t i = 0; i < sizeof unary_ops / sizeof unary_ops[0]; i++) {
        if (strcmp(base, unary_ops[i].name))
            continue;
        if (unary_ops[i].arity == 1)
            return make_op(w, unary_ops[i].op, x, NULL, 0, 0, out, base);
        const json_t *a1 = arg_at(node, 1, "other");
        if (!a1 && unary_ops[i].op == RX_POW)
            a1 = arg_at(node, 1, "exponent");
        if (!a1)
            return not_covered(w, "%s without a second operand", base);
        struct value y;
        if (arg_value(w, a1, &y, base))
            return 1;
        if (y.kind == V_CONST && y.is_none)
            return not_covered(w, "%s with None", base);
        const json_t *rm = arg_at(node, 2, "rounding_mode");
        if (unary_ops[i].op == RX_DIV && rm && !json_is_null(rm))
            return not_covered(w, "%s with a rounding mode", base);
        enum rx_op op = unary_ops[i].op;
        const json_t *al = arg_at(node, 99, "alpha");
        if (al && (op == RX_ADD || op == RX_SUB)) {
            struct value av, scaled;
            if (arg_value(w, al, &av, base))
                return 1;
            if (make_op(w, RX_MUL, &y, &av, 0, 0, &scaled, base))
                return 1;
            y = scaled;
        }
        if (x->kind == V_CONST && y.kind == V_CONST) {
            /* shape arithmetic: x.size(d) - 1 */
            if (x->is_none || y.is_none || !(op == RX_ADD || op == RX_SUB || op == RX_MUL))
                return not_covered(w, "%s of two constants (nothing to compute)", base);
            memset(out, 0, sizeof *out);
            out->kind = V_CONST;
            out->num = op == RX_ADD ? x->num + y.num : op == RX_SUB ? x->num - y.num : x->num * y.num;
            return 0;
        }
        return make_op(w, op, x, &y, 0, 0, out, base);
    }
    return -2;
}

/* A pooling (src/recipe_pool.c reads the call): its value is the accumulator leaf, as a
 * reduction's is, so the operand may be a prologue and constants may follow. -2 when
 * name is no pooling. */
static int pooling(struct walk *w, const char *name, const json_t *node, const struct value *x,
                   const char *repr, bool is_module, struct value *out)
{
    int rc = recipe_pool_parse(name, node, repr, is_module, &w->p->pool, w->why);
    if (rc)
        return rc;
    /* after a convolution, a global average pooling (AdaptiveAvgPoolNd to size 1) is the
     * mean over its pixels (recipe_conv_finish folds it where it can) */
    recipe_pool *q = &w->p->pool;
    bool global = !q->is_max && q->adaptive;
    for (int d = 3 - q->nsp; d < 3; d++)
        global = global && q->want_out[d] == 1;
    if (w->p->family == RECIPE_CONV && global) {
        if (begin_reduction(w, x, name))
            return 1;
        w->p->n_dims = q->nsp;
        for (int i = 0; i < q->nsp; i++)
            w->p->red_dims[i] = i - q->nsp; /* the last nsp dims */
        return set_reduction(w, RED_MEAN, x->node, w->p->red_dims[0], true, out);
    }
    /* the GEMM family takes one reduction over the product's rows, not a pooling */
    if (w->p->family == RECIPE_GEMM)
        return not_covered(w, "%s in a graph with a matrix product (the GEMM epilogue takes no pooling)", name);
    if (begin_reduction(w, x, name))
        return 1;
    w->p->family = RECIPE_POOL;
    return set_reduction(w, RED_MAX, x->node, 0, false, out);
}

/* The input index of a spec tensor by name, else -1. */
static int input_named(const recipe_plan *p, const char *name)
{
    for (int i = 0; i < p->n_inputs; i++)
        if (!strcmp(p->inputs[i].name, name))
            return i;
    return -1;
}

static int input_by_name(const recipe_plan *p, const char *name)
{
    for (int i = 0; i < p->n_inputs; i++)
        if (!strcmp(p->inputs[i].name, name))
            return i;
    return -1;
}

/* GEMM: the product's value (RX_ACC, plus nn.Linear's bias), or for a triu/tril of the
 * product the product's value (the kernel applies the mask). */
static int gemm_value(struct walk *w, const json_t *node, enum recipe_gemm_role role, struct value *out)
{
    recipe_plan *p = w->p;
    if (role == RGR_MASK)
        return arg_value(w, arg_at(node, 0, "input"), out, "triu/tril");
    out->kind = V_EXPR;
    out->node = add_node(p, RX_ACC, -1, -1, 0, 0);
    mark(w, out->node);
    p->gemm.acc_node = out->node;
    if (p->gemm.bias >= 0) {
        int b = add_node(p, RX_INPUT, -1, -1, 0, 0);
        p->nodes[b].input = p->gemm.bias;
        mark(w, b);
        int sum = add_node(p, RX_ADD, out->node, b, 0, 0);
        mark(w, sum);
        out->node = sum;
    }
    return 0;
}

/* recipe.h: [0] / .values -> 0, [1] / .indices -> 1, else -1. */
int recipe_pair_index(const char *fname, const json_t *arg)
{
    if (!strcmp(fname, "getitem") && json_is_integer(arg))
        return json_integer_value(arg) == 0 ? 0 : json_integer_value(arg) == 1 ? 1 : -1;
    const char *attr = json_string_value(arg);
    if (!strcmp(fname, "getattr") && attr)
        return !strcmp(attr, "values") ? 0 : !strcmp(attr, "indices") ? 1 : -1;
    return -1;
}

/* CONV: the convolution's value, RX_ACC, plus its bias (one value a channel). */
static void conv_value(struct walk *w, struct value *out)
{
    recipe_plan *p = w->p;
    out->kind = V_EXPR;
    out->node = add_node(p, RX_ACC, -1, -1, 0, 0);
    mark(w, out->node);
    p->conv.acc_node = out->node;
    if (p->conv.bias >= 0) {
        int b = add_node(p, RX_INPUT, -1, -1, 0, 0);
        p->nodes[b].input = p->conv.bias;
        mark(w, b);
        int sum = add_node(p, RX_ADD, out->node, b, 0, 0);
        mark(w, sum);
        out->node = sum;
    }
}

/* torch.max/min(x, dim)'s values (idx false) or indices: the reduction of the pair. */
static int pair_reduction(struct walk *w, bool idx, struct value *out)
{
    enum recipe_red r = w->pair_is_max ? (idx ? RED_ARGMAX : RED_MAX) : (idx ? RED_ARGMIN : RED_MIN);
    if (w->n_reductions++)
        return not_covered(w, "%s", "more than one reduction");
    return set_reduction(w, r, w->pair_operand, w->pair_dim, w->pair_keepdim, out);
}

/* torch.tensor(c) or torch.tensor(c, device=x.device) of a number: a 0-dim tensor that
 * broadcasts as the constant does (torch.min(x, torch.tensor(0.0, device=x.device))). */
static int scalar_tensor(struct walk *w, const json_t *node, struct value *out)
{
    const json_t *c = arg_at(node, 0, "data"), *kw = json_object_get(node, "kwargs");
    if (n_args(node) != 1 || !(json_is_integer(c) || json_is_real(c)))
        return not_covered(w, "%s", "torch.tensor of something other than one number");
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)kw, key, v) {
        if (strcmp(key, "device") && !(!strcmp(key, "dtype") && json_is_string(v) &&
                                       !strcmp(json_string_value(v), "torch.float32")))
            return not_covered(w, "torch.tensor with '%s'", key);
    }
    memset(out, 0, sizeof *out);
    out->kind = V_CONST;
    out->num = json_number_value(c);
    return 0;
}

static int walk_node(struct walk *w, const json_t *node, int *placeholder, int *result)
{
    recipe_plan *p = w->p;
    const char *op = json_string_value(json_object_get(node, "op"));
    const char *target = json_string_value(json_object_get(node, "target"));
    const char *name = json_string_value(json_object_get(node, "name"));
    if (!op || !target || !name)
        return not_covered(w, "%s", "a graph node without op, target or name");
    struct value out;
    memset(&out, 0, sizeof out);
    int rc = 0;
    enum recipe_gemm_role role = p->family == RECIPE_GEMM ? recipe_gemm_role(p, name) : RGR_NONE;
    if (role == RGR_VIEW)
        return 0; /* a transpose the product consumed: no value of its own */
    if (role == RGR_PRODUCT || role == RGR_MASK) {
        if (gemm_value(w, node, role, &out))
            return 1;
    } else if (recipe_conv_is_node(p, name)) {
        conv_value(w, &out);
    } else if (!strcmp(op, "placeholder")) {
        /* forward()'s arguments, in order, are the spec's first inputs */
        int k = (*placeholder)++;
        if (k >= p->n_inputs)
            return not_covered(w, "placeholder '%s' has no input in the spec", name);
        out.kind = V_EXPR;
        out.node = add_node(p, RX_INPUT, -1, -1, 0, 0);
        p->nodes[out.node].input = k;
        mark(w, out.node);
    } else if (!strcmp(op, "get_attr")) {
        int k = input_by_name(p, target);
        const json_t *value = json_object_get(node, "value");
        if (k < 0 && !json_is_number(value))
            return not_covered(w, "attribute '%s' is not a parameter or buffer of the spec, and the spec holds no "
                                  "value for it (a tensor constant of more than one element, or a spec made "
                                  "before they were recorded: make the spec again with this cutegen)", target);
        if (k < 0) {
            out = const_value(json_number_value(value)); /* a one-element tensor constant */
        } else {
            out.kind = V_EXPR;
            out.node = add_node(p, RX_INPUT, -1, -1, 0, 0);
            p->nodes[out.node].input = k;
            mark(w, out.node);
        }
    } else if (!strcmp(op, "output")) {
        const json_t *a = arg_at(node, 0, NULL);
        if (json_is_array(a)) {
            if (json_array_size(a) != 1)
                return not_covered(w, "%s", "several outputs");
            a = json_array_get(a, 0);
        }
        struct value v;
        if (arg_value(w, a, &v, "the output"))
            return 1;
        if (v.kind != V_EXPR)
            return not_covered(w, "%s", "an output that is not a tensor expression");
        if (!plain_layout(&v))
            return not_covered(w, "%s", "an output that is flipped, narrowed or a slice (of scans, only "
                                        "a result flipped back or made exclusive by a zero column is covered)");
        *result = v.node;
        return 0;
    } else if (!strcmp(op, "call_function") || !strcmp(op, "call_method") ||
               !strcmp(op, "call_module")) {
        bool is_module = !strcmp(op, "call_module");
        const char *fname = target;
        if (!strcmp(op, "call_function")) {
            const char *dot = strrchr(target, '.');
            if (dot && !known_module(target, (size_t)(dot - target)))
                return not_covered(w, "function '%s' from an unknown module", target);
            fname = dot ? dot + 1 : target;
        }
        const char *repr = NULL;
        if (is_module) {
            fname = json_string_value(json_object_get(node, "module"));
            repr = json_string_value(json_object_get(node, "module_repr"));
            if (!fname)
                return not_covered(w, "module call '%s' without its class name", target);
        }
        const json_t *a1 = arg_at(node, 1, NULL);
        if (!is_module && !strcmp(fname, "getattr") && json_is_string(a1) && !strcmp(json_string_value(a1), "device")) {
            out.kind = V_DEVICE; /* x.device, for torch.tensor(c, device=x.device) */
        } else if (!is_module && !strcmp(fname, "tensor")) {
            rc = scalar_tensor(w, node, &out);
        } else if (!strcmp(fname, "getitem") || !strcmp(fname, "getattr")) {
            /* torch.max/min(x, dim)'s pair: [0] or .values, [1] or .indices */
            struct value v;
            if (arg_value(w, arg_at(node, 0, NULL), &v, fname))
                return 1;
            int which = recipe_pair_index(fname, arg_at(node, 1, NULL));
            if (v.kind != V_PAIR || which < 0)
                return not_covered(w, "%s",
                                   "indexing other than [0]/.values or [1]/.indices of torch.max/min(x, dim)");
            bool idx = which == 1;
            if (w->pair_identity) {
                if (idx)
                    return not_covered(w, "%s", "the indices of torch.max/min over a dim of size 1");
                out = w->pair_value; /* the values over a dim of size 1: the operand */
            } else {
                rc = pair_reduction(w, idx, &out);
            }
        } else if (!is_module && (!strcmp(fname, "cat") || !strcmp(fname, "concat") || !strcmp(fname, "concatenate"))) {
            rc = cat_op(w, node, &out);
        } else {
            const json_t *a0 = arg_at(node, 0, is_module ? NULL : "input");
            if (!a0)
                return not_covered(w, "'%s' without operands", fname);
            struct value x;
            if (arg_value(w, a0, &x, fname))
                return 1;
            rc = reduction(w, fname, node, &x, repr, is_module, &out);
            if (rc == -2)
                rc = loss(w, fname, node, &x, is_module, &out);
            if (rc == -2)
                rc = elementwise(w, fname, node, &x, repr, is_module, &out);
            if (rc == -2)
                rc = pooling(w, fname, node, &x, repr, is_module, &out);
            if (rc == -2 && !is_module)
                rc = layout_op(w, fname, node, &x, &out);
            if (rc == -2)
                return not_covered(w, "operator '%s' is not in the recipe families", is_module ? fname : target);
        }
        if (rc)
            return rc;
    } else {
        return not_covered(w, "graph node kind '%s'", op);
    }
    w->vals = xrealloc(w->vals, (size_t)(w->n_vals + 1) * sizeof *w->vals);
    snprintf(out.name, sizeof out.name, "%s", name);
    w->vals[w->n_vals++] = out;
    return 0;
}

/* ================================================================== spec */

int recipe_read_tensor(const json_t *t, recipe_tensor *out, strbuf *why)
{
    memset(out, 0, sizeof *out);
    const char *name = json_string_value(json_object_get(t, "name"));
    const char *dtype = json_string_value(json_object_get(t, "dtype"));
    const json_t *shape = json_object_get(t, "shape"), *stride = json_object_get(t, "stride");
    if (!name || !dtype || !json_is_array(shape)) {
        strbuf_adds(why, "malformed task spec: a tensor without name, dtype or shape");
        return -1;
    }
    if (json_array_size(shape) > RECIPE_MAX_DIMS) {
        strbuf_addf(why, "not covered: tensor '%s' has more than %d dims", name, RECIPE_MAX_DIMS);
        return 1;
    }
    snprintf(out->name, sizeof out->name, "%s", name);
    snprintf(out->dtype, sizeof out->dtype, "%s", dtype);
    out->ndim = (int)json_array_size(shape);
    int64_t expect = 1;
    for (int d = out->ndim - 1; d >= 0; d--) {
        out->shape[d] = json_integer_value(json_array_get(shape, (size_t)d));
        const json_t *s = json_is_array(stride) ? json_array_get(stride, (size_t)d) : NULL;
        out->stride[d] = s ? json_integer_value(s) : expect;
        expect *= out->shape[d];
    }
    return 0;
}

void recipe_set_output_shape(recipe_plan *p, int ndim, const int64_t *shape, const char *dtype)
{
    recipe_tensor *o = &p->output;
    o->ndim = ndim;
    int64_t s = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        o->shape[d] = shape[d];
        o->stride[d] = s;
        s *= shape[d];
    }
    snprintf(o->dtype, sizeof o->dtype, "%s", dtype);
    p->output_free = false;
}

static bool is_float_dtype(const char *d)
{
    return !strcmp(d, "float32") || !strcmp(d, "float16") || !strcmp(d, "bfloat16");
}

static int64_t numel(const recipe_tensor *t)
{
    int64_t n = 1;
    for (int d = 0; d < t->ndim; d++)
        n *= t->shape[d];
    return n;
}

static bool contiguous(const recipe_tensor *t)
{
    int64_t expect = 1;
    for (int d = t->ndim - 1; d >= 0; d--) {
        if (t->shape[d] != 1 && t->stride[d] != expect)
            return false;
        expect *= t->shape[d];
    }
    return true;
}

bool recipe_same_shape(const recipe_tensor *a, const recipe_tensor *b)
{
    if (a->ndim != b->ndim)
        return false;
    for (int d = 0; d < a->ndim; d++)
        if (a->shape[d] != b->shape[d])
            return false;
    return true;
}

static void mark_used(const recipe_plan *p, int n, bool *used)
{
    if (n < 0)
        return;
    const rx_node *x = &p->nodes[n];
    if (x->op == RX_INPUT)
        used[x->input] = true;
    mark_used(p, x->a, used);
    mark_used(p, x->b, used);
}

/* The view each input is read through under node n: views[i] the unsqueeze mask of its
 * reads, -1 when two reads disagree (left -2 where unread). */
static void collect_views(const recipe_plan *p, int n, int *views)
{
    if (n < 0)
        return;
    const rx_node *x = &p->nodes[n];
    if (x->op == RX_INPUT) {
        int *v = &views[x->input];
        *v = *v == -2 || *v == (int)x->unsq ? (int)x->unsq : -1;
    }
    collect_views(p, x->a, views);
    collect_views(p, x->b, views);
}

/* An input read unsqueezed becomes the view in p->inputs (p->in_unsq says how to make it
 * from the tensor cg_forward gets); pointwise chains only. 1 not covered. */
static int apply_views(recipe_plan *p, bool reduce, strbuf *why)
{
    int views[RECIPE_MAX_INPUTS];
    for (int i = 0; i < p->n_inputs; i++)
        views[i] = -2;
    collect_views(p, p->root, views);
    for (int i = 0; i < p->n_inputs; i++) {
        recipe_tensor *t = &p->inputs[i];
        if (views[i] == -1) {
            strbuf_addf(why, "not covered: input '%s' is read both as is and unsqueezed, or unsqueezed at "
                        "different dims", t->name);
            return 1;
        }
        if (views[i] <= 0 || p->in_unsq[i] || numel(t) == 1)
            continue; /* as is, already a view, or a scalar (which broadcasts either way) */
        if (reduce) {
            strbuf_addf(why, "not covered: input '%s' unsqueezed before a reduction (views of inputs are "
                        "covered in pointwise chains)", t->name);
            return 1;
        }
        recipe_tensor v = *t;
        v.ndim = t->ndim + __builtin_popcount((unsigned)views[i]);
        for (int d = 0, j = 0; d < v.ndim; d++) {
            bool inserted = (unsigned)views[i] >> d & 1u;
            v.shape[d] = inserted ? 1 : t->shape[j];
            v.stride[d] = inserted ? 0 : t->stride[j];
            j += !inserted;
        }
        *t = v;
        p->in_unsq[i] = (unsigned)views[i];
    }
    return 0;
}

/* Decides how each input is read; 1 not covered. */
static int classify_inputs(recipe_plan *p, const recipe_tensor *shape_of, bool reduce, strbuf *why)
{
    if (apply_views(p, reduce, why))
        return 1;
    bool used[RECIPE_MAX_INPUTS] = { false };
    mark_used(p, p->root, used);
    int n_tensors = 0;
    for (int i = 0; i < p->n_inputs; i++) {
        const recipe_tensor *t = &p->inputs[i];
        p->kind[i] = RK_UNUSED;
        if (!used[i])
            continue;
        if (numel(t) == 1) {
            if (!is_float_dtype(t->dtype) && strcmp(t->dtype, "int64") && strcmp(t->dtype, "bool")) {
                strbuf_addf(why, "not covered: scalar input '%s' of dtype %s", t->name, t->dtype);
                return 1;
            }
            p->kind[i] = RK_SCALAR;
            continue;
        }
        n_tensors++;
        if (strcmp(t->dtype, shape_of->dtype)) {
            strbuf_addf(why, "not covered: input '%s' is %s where the %s is %s (mixed dtypes)",
                        t->name, t->dtype, reduce ? "reduced operand" : "output", shape_of->dtype);
            return 1;
        }
        if (recipe_same_shape(t, shape_of) && contiguous(t)) {
            p->kind[i] = RK_FULL;
            continue;
        }
        /* read through its strides (the kernels take them at run time), when
         * broadcastable to the output (or the reduced operand): right-aligned, each dim
         * equal or 1 */
        int lead = shape_of->ndim - t->ndim;
        bool ok = lead >= 0;
        for (int d = 0; ok && d < t->ndim; d++)
            ok = t->shape[d] == 1 || t->shape[d] == shape_of->shape[d + lead];
        if (!ok) {
            strbuf_addf(why, "not covered: input '%s' does not broadcast to the %s's shape", t->name,
                        reduce ? "reduced operand" : "output");
            return 1;
        }
        p->kind[i] = RK_BCAST;
    }
    if (n_tensors == 0) {
        strbuf_adds(why, "not covered: the result depends on no tensor input");
        return 1;
    }
    return 0;
}

/* The reduced dims as one run [dim, dim + n_dims) of an operand of nd dims: every dim
 * (red_all), a list (consecutive once normalised and sorted), or the one dim. */
static int reduced_dims(recipe_plan *p, int nd, strbuf *why)
{
    if (nd == 0) {
        strbuf_adds(why, "not covered: a reduction of a 0-dim tensor");
        return 1;
    }
    if (p->red_all) {
        p->dim = 0;
        p->n_dims = nd;
        return 0;
    }
    int n = p->n_dims > 1 ? p->n_dims : 1;
    int d[RECIPE_MAX_DIMS];
    if (n == 1)
        p->red_dims[0] = p->dim;
    for (int i = 0; i < n; i++) {
        d[i] = p->red_dims[i];
        if (d[i] < -nd || d[i] >= nd) {
            strbuf_addf(why, "not covered: dim %d out of range for %d dims", d[i], nd);
            return 1;
        }
        if (d[i] < 0)
            d[i] += nd;
    }
    for (int i = 1; i < n; i++) /* sort: a handful of dims */
        for (int j = i; j > 0 && d[j] < d[j - 1]; j--) {
            int t = d[j];
            d[j] = d[j - 1];
            d[j - 1] = t;
        }
    for (int i = 1; i < n; i++)
        if (d[i] != d[i - 1] + 1) {
            strbuf_addf(why, "not covered: a reduction over dims that are not consecutive (%d and %d)",
                        d[i - 1], d[i]);
            return 1;
        }
    p->dim = d[0];
    p->n_dims = n;
    return 0;
}

/* The input of the expression at node with the most dims (then the most elements), not
 * counting scalars: the shape the others broadcast into (classify_inputs checks it). */
static const recipe_tensor *largest_input(const recipe_plan *p, int node)
{
    bool used[RECIPE_MAX_INPUTS] = { false };
    mark_used(p, node, used);
    const recipe_tensor *x = NULL;
    for (int i = 0; i < p->n_inputs; i++)
        if (used[i] && numel(&p->inputs[i]) > 1 &&
            (!x || p->inputs[i].ndim > x->ndim || (p->inputs[i].ndim == x->ndim && numel(&p->inputs[i]) > numel(x))))
            x = &p->inputs[i];
    return x;
}

static int finish_reduce(recipe_plan *p, int result, const unsigned char *has_acc, strbuf *why)
{
    const recipe_tensor *x = largest_input(p, p->root); /* the operand's shape */
    if (!x) {
        strbuf_adds(why, "not covered: the reduced operand has no tensor input");
        return 1;
    }
    if (!is_float_dtype(x->dtype)) {
        strbuf_addf(why, "not covered: reduction of dtype %s", x->dtype);
        return 1;
    }
    if (classify_inputs(p, x, true, why))
        return 1;
    p->operand = *x;
    int nd = x->ndim;
    if (reduced_dims(p, nd, why))
        return 1;
    int d_end = p->dim + p->n_dims;
    p->outer = p->inner = p->r = 1;
    for (int d = 0; d < p->dim; d++)
        p->outer *= x->shape[d];
    for (int d = p->dim; d < d_end; d++)
        p->r *= x->shape[d];
    for (int d = d_end; d < nd; d++)
        p->inner *= x->shape[d];
    bool arg = p->red == RED_ARGMAX || p->red == RED_ARGMIN;
    bool soft = p->red == RED_SOFTMAX || p->red == RED_LOGSOFTMAX;
    if (result != p->root && !has_acc[result]) {
        strbuf_adds(why, "not covered: the output does not depend on the reduction");
        return 1;
    }
    const rx_node *rn = &p->nodes[result];
    p->epi = rn->op == RX_ACC ? -1 : result;
    if (arg && p->epi >= 0) {
        strbuf_adds(why, "not covered: arithmetic on the indices of argmax/argmin");
        return 1;
    }
    /* the output the spec expects */
    recipe_tensor want = *x;
    if (soft) {
        /* same shape */
    } else if (p->keepdim) {
        for (int d = p->dim; d < d_end; d++)
            want.shape[d] = 1;
    } else {
        for (int d = p->dim; d + p->n_dims < nd; d++)
            want.shape[d] = want.shape[d + p->n_dims];
        want.ndim -= p->n_dims;
    }
    if (p->output_free) /* a stage whose output is what the reduction gives */
        recipe_set_output_shape(p, want.ndim, want.shape, arg ? "int64" : x->dtype);
    if (!recipe_same_shape(&want, &p->output)) {
        strbuf_adds(why, "not covered: the output's shape is not the reduction's (a reshape or broadcast follows?)");
        return 1;
    }
    const char *odt = arg ? "int64" : x->dtype;
    if (strcmp(p->output.dtype, odt)) {
        strbuf_addf(why, "not covered: output dtype %s, expected %s", p->output.dtype, odt);
        return 1;
    }
    if (soft && p->inner > 1 && p->outer * p->inner < 1) {
        strbuf_adds(why, "not covered: empty softmax");
        return 1;
    }
    return 0;
}

/* SCAN: the scanned operand's shape (the output's), how each input is read (whole, of
 * any float dtype or bool, or one element) and the epilogue. */
static int finish_scan(recipe_plan *p, int result, const unsigned char *has_acc, strbuf *why)
{
    const recipe_tensor *x = largest_input(p, p->root);
    if (!x) {
        strbuf_adds(why, "not covered: the scanned operand has no tensor input");
        return 1;
    }
    if (!has_acc[result]) {
        strbuf_adds(why, "not covered: the output does not depend on the scan");
        return 1;
    }
    if (!is_float_dtype(p->output.dtype)) {
        strbuf_addf(why, "not covered: a scan whose output is %s (float32, float16, bfloat16 only)", p->output.dtype);
        return 1;
    }
    if (p->output_free && is_float_dtype(x->dtype)) /* a stage whose output is the scan's */
        recipe_set_output_shape(p, x->ndim, x->shape, x->dtype);
    if (!recipe_same_shape(x, &p->output)) {
        strbuf_adds(why, "not covered: the output's shape is not the scanned operand's");
        return 1;
    }
    p->epi = p->nodes[result].op == RX_ACC ? -1 : result;
    bool used[RECIPE_MAX_INPUTS] = { false };
    mark_used(p, p->root, used);
    mark_used(p, p->epi, used);
    for (int i = 0; i < p->n_inputs; i++) {
        const recipe_tensor *t = &p->inputs[i];
        bool dtype_ok = is_float_dtype(t->dtype) || !strcmp(t->dtype, "bool");
        p->kind[i] = !used[i] ? RK_UNUSED : numel(t) == 1 ? RK_SCALAR : RK_FULL;
        if (p->kind[i] == RK_UNUSED)
            continue;
        if (!dtype_ok) {
            strbuf_addf(why, "not covered: a scan reading input '%s' of dtype %s", t->name, t->dtype);
            return 1;
        }
        if (p->kind[i] == RK_FULL && !(recipe_same_shape(t, x) && contiguous(t))) {
            strbuf_addf(why, "not covered: input '%s' of a scan is not the contiguous shape of the output "
                             "(broadcast inputs are not covered in scans)", t->name);
            return 1;
        }
    }
    p->operand = *x;
    p->outer = p->r = p->inner = 1;
    for (int d = 0; d < x->ndim; d++)
        *(d < p->dim ? &p->outer : d == p->dim ? &p->r : &p->inner) *= x->shape[d];
    p->family = RECIPE_SCAN;
    return 0;
}

/* The pooled operand's tensor, its inputs' kinds and the epilogue; then recipe_pool.c. */
static int finish_pool(recipe_plan *p, int result, const unsigned char *has_acc, strbuf *why)
{
    bool used[RECIPE_MAX_INPUTS] = { false };
    mark_used(p, p->root, used);
    const recipe_tensor *x = NULL;
    for (int i = 0; i < p->n_inputs && !x; i++)
        if (used[i] && numel(&p->inputs[i]) > 1)
            x = &p->inputs[i];
    if (!x) {
        strbuf_adds(why, "not covered: the pooled operand has no tensor input");
        return 1;
    }
    if (!is_float_dtype(x->dtype)) {
        strbuf_addf(why, "not covered: pooling of dtype %s", x->dtype);
        return 1;
    }
    if (classify_inputs(p, x, true, why))
        return 1;
    if (result != p->root && !has_acc[result]) {
        strbuf_adds(why, "not covered: the output does not depend on the pooling");
        return 1;
    }
    p->epi = p->nodes[result].op == RX_ACC ? -1 : result;
    return recipe_pool_finish(p, x, why);
}

static int recognise(const json_t *spec, recipe_plan *p, strbuf *why, bool stages);

int recipe_recognise(const json_t *spec, recipe_plan *p, strbuf *why)
{
    return recognise(spec, p, why, true);
}

int recipe_recognise_single(const json_t *spec, recipe_plan *p, strbuf *why)
{
    return recognise(spec, p, why, false);
}

static int recognise(const json_t *spec, recipe_plan *p, strbuf *why, bool stages)
{
    recipe_plan_release(p);
    strbuf_reset(why);
    /* the reference process's reply, as cached under ~/.cache/cutegen/tasks/: {"ok", "spec"} */
    if (json_is_object(json_object_get(spec, "spec")))
        spec = json_object_get(spec, "spec");
    json_t *expanded = NULL;
    strbuf done = STRBUF_INIT;
    int erc = recipe_expand(spec, &expanded, &done, why); /* composite calls: recipe_expand.c */
    if (erc == 0 && expanded) {
        erc = recognise(expanded, p, why, stages);
        json_decref(expanded);
        if (erc == 0)
            snprintf(p->expanded, sizeof p->expanded, "%s", done.buf);
    }
    strbuf_release(&done);
    if (erc || expanded)
        return erc;
    const json_t *ins = json_object_get(spec, "inputs"), *outs = json_object_get(spec, "outputs");
    const json_t *graph = json_object_get(spec, "graph");
    if (!json_is_object(spec) || !json_is_array(ins) || !json_is_array(outs)) {
        strbuf_adds(why, "malformed task spec: no inputs or outputs arrays");
        return -1;
    }
    if (!json_is_array(graph)) {
        const char *ge = json_string_value(json_object_get(spec, "graph_error"));
        strbuf_addf(why, "not covered: no operator graph (torch.fx could not trace the model%s%s)",
                    ge ? ": " : "", ge ? ge : "");
        return 1;
    }
    if (json_array_size(ins) > RECIPE_MAX_INPUTS) {
        strbuf_addf(why, "not covered: more than %d inputs", RECIPE_MAX_INPUTS);
        return 1;
    }
    if (json_array_size(outs) != 1) {
        strbuf_addf(why, "not covered: %zu outputs (recipes write one)", json_array_size(outs));
        return 1;
    }
    p->n_inputs = (int)json_array_size(ins);
    for (int i = 0; i < p->n_inputs; i++) {
        int rc = recipe_read_tensor(json_array_get(ins, (size_t)i), &p->inputs[i], why);
        if (rc)
            return rc;
    }
    int rc = recipe_read_tensor(json_array_get(outs, 0), &p->output, why);
    if (rc)
        return rc;
    p->output_free = json_is_true(json_object_get(json_array_get(outs, 0), "free"));
    if (!is_float_dtype(p->output.dtype) && strcmp(p->output.dtype, "int64")) {
        strbuf_addf(why, "not covered: output dtype %s (float32, float16, bfloat16 only)", p->output.dtype);
        return 1;
    }

    struct walk w;
    memset(&w, 0, sizeof w);
    w.reduced_node = -1;
    w.p = p;
    w.why = why;
    int placeholder = 0, result = -1;
    rc = recipe_conv_prescan(graph, p, why);
    if (rc == 0 && p->family != RECIPE_CONV)
        rc = recipe_gemm_prescan(graph, p, why);
    for (size_t i = 0; i < json_array_size(graph) && rc == 0; i++) {
        const json_t *node = json_array_get(graph, i);
        if (!json_is_object(node)) {
            strbuf_adds(why, "malformed task spec: a graph node is not an object");
            rc = -1;
            break;
        }
        rc = walk_node(&w, node, &placeholder, &result);
    }
    if (rc == 0 && result < 0)
        rc = not_covered(&w, "%s", "the graph has no output node");
    if (rc == 0) {
        if (p->family == RECIPE_GEMM) {
            rc = recipe_gemm_finish(p, result, why);
        } else if (p->family == RECIPE_CONV) {
            rc = recipe_conv_finish(p, result, why);
        } else if (w.n_reductions == 0) {
            p->family = RECIPE_POINTWISE;
            p->root = result;
            if (!is_float_dtype(p->output.dtype)) {
                strbuf_addf(why, "not covered: pointwise output of dtype %s", p->output.dtype);
                rc = 1;
            } else {
                rc = classify_inputs(p, &p->output, false, why);
            }
            /* the broadcast of the used inputs must be the output */
            int64_t n_out = numel(&p->output), n_max = 1;
            for (int i = 0; rc == 0 && i < p->n_inputs; i++)
                if (p->kind[i] != RK_UNUSED && numel(&p->inputs[i]) > n_max)
                    n_max = numel(&p->inputs[i]);
            if (rc == 0 && p->inputs[0].ndim >= 0 && n_max > n_out) {
                strbuf_adds(why, "not covered: an input is larger than the output (a reduction or view?)");
                rc = 1;
            }
        } else if (p->family == RECIPE_POOL) {
            rc = finish_pool(p, result, w.has_acc, why);
        } else if (p->red == RED_CUMSUM || p->red == RED_CUMPROD) {
            rc = finish_scan(p, result, w.has_acc, why);
        } else {
            p->family = RECIPE_REDUCE;
            rc = finish_reduce(p, result, w.has_acc, why);
        }
    }
    free(w.vals);
    free(w.has_acc);
    free(w.has_input);
    if (rc == 1) {
        int nrc = recipe_norm_recognise(spec, p, why); /* the NORM family: recipe_norm.c */
        if (nrc != 2)
            rc = nrc;
    }
    if (rc == 1) {
        int lrc = recipe_rowloss_recognise(spec, p, why); /* the ROWLOSS family: recipe_rowloss.c */
        if (lrc != 2)
            rc = lrc;
    }
    if (rc == 1 && stages && recipe_staged_recognise(spec, p, why) == 0) { /* recipe_stage.c */
        free(p->nodes); /* what the walk of the whole graph left */
        p->nodes = NULL;
        p->n_nodes = p->alloc = 0;
        free(p->norm);
        p->norm = NULL;
        strbuf_reset(why);
        rc = 0;
    }
    /* a product with a row reduction: also as two stages (the reduction apart), which lets
     * the product run on warpgroup MMAs (recipe_stage.h) */
    if (rc == 0 && stages && p->family == RECIPE_GEMM && p->root >= 0)
        recipe_staged_rows_apart(spec, p);
    if (rc)
        p->family = RECIPE_NONE;
    return rc;
}

int recipe_recognise_file(const char *path, recipe_plan *p, strbuf *why)
{
    json_error_t jerr;
    strbuf_reset(why);
    json_t *spec = json_load_file(path, 0, &jerr);
    if (!spec) {
        strbuf_addf(why, "cannot read task spec '%s': %s (line %d)", path, jerr.text, jerr.line);
        return -1;
    }
    int rc = recipe_recognise(spec, p, why);
    json_decref(spec);
    return rc;
}

/* ================================================================== formatting */

static const char *op_name(enum rx_op op)
{
    switch (op) {
    case RX_NEG: return "neg";
    case RX_ABS: return "abs";
    case RX_EXP: return "exp";
    case RX_LOG: return "log";
    case RX_SQRT: return "sqrt";
    case RX_RSQRT: return "rsqrt";
    case RX_TANH: return "tanh";
    case RX_SIGMOID: return "sigmoid";
    case RX_RELU: return "relu";
    case RX_ERF: return "erf";
    case RX_SIN: return "sin";
    case RX_COS: return "cos";
    case RX_RECIP: return "reciprocal";
    case RX_LOG1P: return "log1p";
    case RX_EXPM1: return "expm1";
    case RX_SQUARE: return "square";
    case RX_SELU: return "selu";
    case RX_SILU: return "silu";
    case RX_MISH: return "mish";
    case RX_SOFTSIGN: return "softsign";
    case RX_HARDSIGMOID: return "hardsigmoid";
    case RX_HARDSWISH: return "hardswish";
    case RX_LOGSIGMOID: return "logsigmoid";
    case RX_GELU: return "gelu";
    case RX_GELU_TANH: return "gelu_tanh";
    case RX_LEAKY_RELU: return "leaky_relu";
    case RX_ELU: return "elu";
    case RX_CLAMP: return "clamp";
    case RX_SOFTPLUS: return "softplus";
    case RX_ADD: return "+";
    case RX_SUB: return "-";
    case RX_MUL: return "*";
    case RX_DIV: return "/";
    case RX_POW: return "pow";
    case RX_MAX: return "maximum";
    case RX_MIN: return "minimum";
    default: return "?";
    }
}

void rx_format(const recipe_plan *p, int n, strbuf *out)
{
    const rx_node *x = &p->nodes[n];
    switch (x->op) {
    case RX_INPUT:
        if (x->input >= p->n_inputs) /* NORM: a statistic's slot */
            strbuf_adds(out, p->norm ? p->norm->slot_name[x->input - p->n_inputs] : "?");
        else
            strbuf_adds(out, p->inputs[x->input].name);
        return;
    case RX_CONST:
        strbuf_addf(out, "%.9g", x->p0);
        return;
    case RX_ACC:
        strbuf_adds(out, "r");
        return;
    case RX_ADD: case RX_SUB: case RX_MUL: case RX_DIV:
        strbuf_addc(out, '(');
        rx_format(p, x->a, out);
        strbuf_addf(out, " %s ", op_name(x->op));
        rx_format(p, x->b, out);
        strbuf_addc(out, ')');
        return;
    case RX_POW: case RX_MAX: case RX_MIN:
        strbuf_addf(out, "%s(", op_name(x->op));
        rx_format(p, x->a, out);
        strbuf_adds(out, ", ");
        rx_format(p, x->b, out);
        strbuf_addc(out, ')');
        return;
    default:
        strbuf_addf(out, "%s(", op_name(x->op));
        rx_format(p, x->a, out);
        if (x->op == RX_LEAKY_RELU || x->op == RX_ELU)
            strbuf_addf(out, ", %.9g", x->p0);
        else if (x->op == RX_CLAMP || x->op == RX_SOFTPLUS)
            strbuf_addf(out, ", %.9g, %.9g", x->p0, x->p1);
        strbuf_addc(out, ')');
    }
}

static void shape_text(const recipe_tensor *t, strbuf *out)
{
    strbuf_addc(out, '[');
    for (int d = 0; d < t->ndim; d++)
        strbuf_addf(out, "%s%lld", d ? ", " : "", (long long)t->shape[d]);
    strbuf_addc(out, ']');
}

/* The reduced or scanned operand and the epilogue, a line each. */
static void describe_operand(const recipe_plan *p, strbuf *out)
{
    strbuf_adds(out, "operand: ");
    rx_format(p, p->root, out);
    strbuf_addc(out, '\n');
    if (p->epi >= 0) {
        strbuf_adds(out, "epilogue: ");
        rx_format(p, p->epi, out);
        strbuf_addc(out, '\n');
    }
}

void recipe_describe(const recipe_plan *p, strbuf *out)
{
    static const char *kinds[] = { "unused", "full (16-byte vectors)", "scalar (one element)",
                                   "broadcast (by strides)" };
    if (p->expanded[0])
        strbuf_addf(out, "expanded: %s\n", p->expanded);
    if (p->family == RECIPE_STAGED) {
        recipe_staged_describe(p, out);
        return;
    }
    if (p->family == RECIPE_NORM) {
        recipe_norm_describe(p, out);
        return;
    }
    if (p->family == RECIPE_ROWLOSS) {
        recipe_rowloss_describe(p, out);
        return;
    }
    if (p->family == RECIPE_GEMM) {
        recipe_gemm_describe(p, out);
        if (p->staged) { /* recipe_staged_rows_apart */
            strbuf_adds(out, "alternative: the row reduction as a stage of its own (listed first where its product "
                             "runs on warpgroup MMAs)\n");
            recipe_staged_describe(p, out);
        }
        return;
    }
    if (p->family == RECIPE_CONV) {
        recipe_conv_describe(p, out);
        return;
    }
    strbuf_addf(out, "family: %s\n", p->family == RECIPE_POINTWISE ? "pointwise" :
                                     p->family == RECIPE_REDUCE ? "reduce" :
                                     p->family == RECIPE_POOL ? "pool" :
                                     p->family == RECIPE_SCAN ? "scan" : "none");
    for (int i = 0; i < p->n_inputs; i++) {
        strbuf_addf(out, "input %d: %s %s ", i, p->inputs[i].name, p->inputs[i].dtype);
        shape_text(&p->inputs[i], out);
        strbuf_addf(out, ": %s\n", p->family == RECIPE_SCAN && p->kind[i] == RK_FULL ? "full" : kinds[p->kind[i]]);
    }
    strbuf_addf(out, "output: %s %s ", p->output.name, p->output.dtype);
    shape_text(&p->output, out);
    strbuf_addc(out, '\n');
    if (p->family == RECIPE_POINTWISE) {
        strbuf_adds(out, "expression: ");
        rx_format(p, p->root, out);
        strbuf_addc(out, '\n');
    } else if (p->family == RECIPE_REDUCE) {
        char dims[48];
        if (p->n_dims > 1)
            snprintf(dims, sizeof dims, "dims [%d, %d)", p->dim, p->dim + p->n_dims);
        else
            snprintf(dims, sizeof dims, "dim %d", p->dim);
        strbuf_addf(out, "reduction: %s over %s%s: (outer %lld, r %lld, inner %lld), %s\n",
                    recipe_red_name(p->red), dims, p->keepdim ? " (keepdim)" : "",
                    (long long)p->outer, (long long)p->r, (long long)p->inner,
                    p->inner == 1 ? "rows along the last dim" : "columns (a middle or first dim)");
        describe_operand(p, out);
    } else if (p->family == RECIPE_POOL) {
        recipe_pool_describe(p, out);
    } else if (p->family == RECIPE_SCAN) {
        strbuf_addf(out, "scan: %s%s%s along dim %d: (outer %lld, r %lld, inner %lld), %s\n", recipe_red_name(p->red),
                    p->scan_reverse ? ", reversed (from the dim's end)" : "",
                    p->scan_exclusive ? ", exclusive (the identity first)" : ", inclusive", p->dim,
                    (long long)p->outer, (long long)p->r, (long long)p->inner,
                    p->inner == 1 ? "rows along the last dim" : "columns (a middle or first dim)");
        describe_operand(p, out);
    }
}

void recipe_summary(const recipe_plan *p, strbuf *out)
{
    if (p->family == RECIPE_STAGED) {
        recipe_staged_summary(p, out);
        return;
    }
    if (p->family == RECIPE_ROWLOSS) {
        recipe_rowloss_summary(p, out);
        return;
    }
    if (p->family == RECIPE_NORM) {
        recipe_norm_summary(p, out);
        return;
    }
    if (p->family == RECIPE_POINTWISE) {
        strbuf_adds(out, "pointwise ");
        rx_format(p, p->root, out);
    } else if (p->family == RECIPE_REDUCE) {
        if (p->n_dims > 1)
            strbuf_addf(out, "reduce %s over dims [%d, %d) of ", recipe_red_name(p->red), p->dim,
                        p->dim + p->n_dims);
        else
            strbuf_addf(out, "reduce %s over dim %d of ", recipe_red_name(p->red), p->dim);
        rx_format(p, p->root, out);
        if (p->epi >= 0) {
            strbuf_adds(out, ", then ");
            rx_format(p, p->epi, out);
        }
    } else if (p->family == RECIPE_GEMM) {
        recipe_gemm_summary(p, out);
    } else if (p->family == RECIPE_CONV) {
        recipe_conv_summary(p, out);
        return;
    } else if (p->family == RECIPE_POOL) {
        recipe_pool_summary(p, out);
    } else if (p->family == RECIPE_SCAN) {
        strbuf_addf(out, "scan %s%s%s along dim %d of ", p->scan_exclusive ? "exclusive " : "",
                    p->scan_reverse ? "reverse " : "", recipe_red_name(p->red), p->dim);
        rx_format(p, p->root, out);
        if (p->epi >= 0) {
            strbuf_adds(out, ", then ");
            rx_format(p, p->epi, out);
        }
    } else {
        strbuf_adds(out, "none");
        return;
    }
    strbuf_addf(out, " -> %s ", p->output.dtype);
    shape_text(&p->output, out);
}

/* ================================================================== CPU evaluator */

static float softplus_f(float v, float beta, float th)
{
    return v * beta > th ? v : log1pf(expf(v * beta)) / beta;
}

float rx_eval(const recipe_plan *p, int n, const float *xin, float acc)
{
    const rx_node *x = &p->nodes[n];
    float a = x->a >= 0 ? rx_eval(p, x->a, xin, acc) : 0.f;
    float b = x->b >= 0 ? rx_eval(p, x->b, xin, acc) : 0.f;
    float p0 = (float)x->p0, p1 = (float)x->p1;
    switch (x->op) {
    case RX_INPUT: return xin[x->input];
    case RX_CONST: return p0;
    case RX_ACC: return acc;
    case RX_NEG: return -a;
    case RX_ABS: return fabsf(a);
    case RX_EXP: return expf(a);
    case RX_LOG: return logf(a);
    case RX_SQRT: return sqrtf(a);
    case RX_RSQRT: return 1.f / sqrtf(a);
    case RX_TANH: return tanhf(a);
    case RX_SIGMOID: return 1.f / (1.f + expf(-a));
    case RX_RELU: return a < 0.f ? 0.f : a;
    case RX_ERF: return erff(a);
    case RX_SIN: return sinf(a);
    case RX_COS: return cosf(a);
    case RX_RECIP: return 1.f / a;
    case RX_LOG1P: return log1pf(a);
    case RX_EXPM1: return expm1f(a);
    case RX_SQUARE: return a * a;
    case RX_SELU: return 1.0507009873554805f * (a > 0.f ? a : 1.6732632423543772f * expm1f(a));
    case RX_SILU: return a / (1.f + expf(-a));
    case RX_MISH: return a * tanhf(softplus_f(a, 1.f, 20.f));
    case RX_SOFTSIGN: return a / (1.f + fabsf(a));
    case RX_HARDSIGMOID: return fminf(fmaxf(a + 3.f, 0.f), 6.f) / 6.f;
    case RX_HARDSWISH: return a * fminf(fmaxf(a + 3.f, 0.f), 6.f) / 6.f;
    case RX_LOGSIGMOID: return -softplus_f(-a, 1.f, 20.f);
    case RX_GELU: return 0.5f * a * (1.f + erff(a * 0.70710678118654752f));
    case RX_GELU_TANH: return 0.5f * a * (1.f + tanhf(0.79788456080286536f * (a + 0.044715f * a * a * a)));
    case RX_LEAKY_RELU: return a > 0.f ? a : a * p0;
    case RX_ELU: return a > 0.f ? a : p0 * expm1f(a);
    case RX_CLAMP: return a < p0 ? p0 : (a > p1 ? p1 : a);
    case RX_SOFTPLUS: return softplus_f(a, p0, p1);
    case RX_ADD: return a + b;
    case RX_SUB: return a - b;
    case RX_MUL: return a * b;
    case RX_DIV: return a / b;
    case RX_POW:
        if (p->nodes[x->b].op == RX_CONST && p->nodes[x->b].p0 == 2.0)
            return a * a;
        if (p->nodes[x->b].op == RX_CONST && p->nodes[x->b].p0 == 3.0)
            return a * a * a;
        return powf(a, b);
    case RX_MAX: return (a != a || a > b) ? a : b;
    case RX_MIN: return (a != a || a < b) ? a : b;
    default: BUG("rx_eval: op %d", (int)x->op);
    }
}
