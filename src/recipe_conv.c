/*
 * recipe_conv.c: the CONV family: recognition of the convolution module, the epilogue's
 * inputs, the variants and the parameters of recipes/conv_tc.cu. See recipe_conv.h.
 *
 * Recognition is by structure: a call_module node whose class is Conv1d/Conv2d/Conv3d or
 * ConvTranspose1d/2d/3d, its repr for stride/padding/dilation/output_padding/groups/
 * padding_mode, and its parameters as the spec lists them (the module's fx target +
 * ".weight" / ".bias", which is how make_spec() names a module's parameters). Shapes
 * come from the spec, never from the problem's name.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recipe_conv.h"
#include "recipe_gemm.h"
#include "util.h"

/* ================================================================== recognition */

static int nc(strbuf *why, const char *fmt, const char *arg)
{
    strbuf_reset(why);
    strbuf_adds(why, "not covered: ");
    strbuf_addf(why, fmt, arg);
    return 1;
}

static bool contiguous_strides(const recipe_tensor *t)
{
    int64_t expect = 1;
    for (int d = t->ndim - 1; d >= 0; d--) {
        if (t->shape[d] != 1 && t->stride[d] != expect)
            return false;
        expect *= t->shape[d];
    }
    return true;
}

static int64_t numel_of(const recipe_tensor *t)
{
    int64_t n = 1;
    for (int d = 0; d < t->ndim; d++)
        n *= t->shape[d];
    return n;
}

static int input_named(const recipe_plan *p, const char *name)
{
    for (int i = 0; i < p->n_inputs; i++)
        if (!strcmp(p->inputs[i].name, name))
            return i;
    return -1;
}

/* key in repr as a whole argument name: "padding=" is not the tail of "output_padding=". */
static const char *repr_key(const char *repr, const char *key)
{
    for (const char *s = strstr(repr, key); s; s = strstr(s + 1, key))
        if (s == repr || s[-1] == ' ' || s[-1] == '(' || s[-1] == ',')
            return s;
    return NULL;
}

/* "key=(a, b)" or "key=a" in repr: fills v[0..n) (one number repeats); 0 when absent
 * (v untouched), 1 read, -1 unreadable (a string such as padding='same'). */
static int repr_tuple(const char *repr, const char *key, int64_t *v, int n)
{
    const char *s = repr_key(repr, key);
    if (!s)
        return 0;
    s += strlen(key);
    if (*s == '\'' || *s == '"')
        return -1;
    bool tuple = *s == '(';
    if (tuple)
        s++;
    int got = 0;
    while (got < n) {
        char *end;
        long long x = strtoll(s, &end, 10);
        if (end == s)
            break;
        v[got++] = x;
        s = end;
        while (*s == ' ' || *s == ',')
            s++;
        if (!tuple || *s == ')')
            break;
    }
    if (got == 1)
        for (int i = 1; i < n; i++)
            v[i] = v[0];
    else if (got != n)
        return -1;
    return 1;
}

/* Conv1d/2d/3d or ConvTranspose1d/2d/3d: the spatial dims and whether it is transposed. */
static bool is_conv_module(const char *m, int *dims, bool *transposed)
{
    if (!m)
        return false;
    *transposed = !strncmp(m, "ConvTranspose", 13);
    const char *rest = m + (*transposed ? 13 : 4);
    if (!*transposed && strncmp(m, "Conv", 4))
        return false;
    if (!strcmp(rest, "1d")) *dims = 1;
    else if (!strcmp(rest, "2d")) *dims = 2;
    else if (!strcmp(rest, "3d")) *dims = 3;
    else return false;
    return true;
}

/* The output's extent along spatial dim e (c's in, k, stride, pad, dil, opad set): the
 * convolution's, or the transposed convolution's (PyTorch's formula); 0, or 1 not
 * covered. */
static int out_extent(recipe_conv_plan *c, int e, strbuf *why)
{
    int64_t span = c->dil[e] * (c->k[e] - 1) + 1;
    if (c->transposed) {
        c->out[e] = (c->in[e] - 1) * c->stride[e] - 2 * c->pad[e] + span + c->opad[e];
        if (c->out[e] < 1)
            return nc(why, "%s whose padding leaves an empty output", "ConvTranspose");
        return 0;
    }
    int64_t room = c->in[e] + 2 * c->pad[e] - span;
    if (room < 0)
        return nc(why, "%s whose kernel is larger than the padded input", "convolution");
    c->out[e] = room / c->stride[e] + 1;
    return 0;
}

/* groups from the repr: 1; depthwise for a convolution (groups = CIN = COUT, weight
 * [C, 1, k...]: conv_dw.cu, c->groups stays 1); else groups that divide CIN (and COUT,
 * checked with the weight): an implicit GEMM a group. 0, or 1 not covered. */
static int read_groups(const char *repr, const recipe_tensor *xt, const recipe_tensor *wt,
                       recipe_conv_plan *c, strbuf *why)
{
    int64_t groups = 1;
    if (repr_tuple(repr, "groups=", &groups, 1) < 0)
        return nc(why, "%s with unreadable groups", "convolution");
    c->depthwise = false;
    c->groups = 1;
    if (groups == 1)
        return 0;
    if (groups < 1 || xt->shape[1] % groups)
        return nc(why, "%s whose groups do not divide its input channels", "convolution");
    if (!c->transposed && groups == xt->shape[1] && wt->shape[0] == groups && wt->shape[1] == 1) {
        c->depthwise = true; /* one filter a channel */
        return 0;
    }
    c->groups = groups;
    return 0;
}

int recipe_conv_prescan(const json_t *graph, recipe_plan *p, strbuf *why)
{
    const json_t *conv = NULL;
    int dims = 0, n_conv = 0;
    bool transposed = false;
    for (size_t i = 0; i < json_array_size(graph); i++) {
        const json_t *node = json_array_get(graph, i);
        const char *op = json_string_value(json_object_get(node, "op"));
        int d;
        bool t;
        if (op && !strcmp(op, "call_module") &&
            is_conv_module(json_string_value(json_object_get(node, "module")), &d, &t)) {
            if (!n_conv++) {
                conv = node;
                dims = d;
                transposed = t;
            }
        }
    }
    if (!conv)
        return 0;
    if (n_conv > 1)
        return nc(why, "%s", "more than one convolution (a recipe fuses one)");
    const char *target = json_string_value(json_object_get(conv, "target"));
    const char *name = json_string_value(json_object_get(conv, "name"));
    const char *repr = json_string_value(json_object_get(conv, "module_repr"));
    if (!target || !name || !repr)
        return nc(why, "%s", "a convolution module without its target, name or repr");
    if (strstr(repr, "padding_mode="))
        return nc(why, "%s with a padding mode other than zeros", "convolution");

    /* its operand must be a placeholder: forward()'s argument k is the spec's input k */
    const json_t *args = json_object_get(conv, "args");
    const char *arg0 = json_string_value(json_array_get(args, 0));
    if (json_array_size(args) != 1 || !arg0 || arg0[0] != '%' || json_object_size(json_object_get(conv, "kwargs")))
        return nc(why, "%s", transposed ? "a ConvTranspose called with more than its input (output_size is not covered)"
                                        : "a convolution whose operand is not one tensor");
    int x = -1, k = 0;
    for (size_t i = 0; i < json_array_size(graph) && x < 0; i++) {
        const json_t *node = json_array_get(graph, i);
        const char *op = json_string_value(json_object_get(node, "op"));
        if (!op || strcmp(op, "placeholder"))
            continue;
        const char *nm = json_string_value(json_object_get(node, "name"));
        if (nm && !strcmp(nm, arg0 + 1))
            x = k;
        k++;
    }
    if (x < 0 || x >= p->n_inputs)
        return nc(why, "%s", "a convolution of a computed tensor (a prologue before the convolution)");

    recipe_conv_plan *c = &p->conv;
    memset(c, 0, sizeof *c);
    snprintf(c->node, sizeof c->node, "%s", name);
    c->dims = dims;
    c->transposed = transposed;
    c->x = x;
    char key[160];
    snprintf(key, sizeof key, "%s.weight", target);
    c->w = input_named(p, key);
    snprintf(key, sizeof key, "%s.bias", target);
    c->bias = input_named(p, key);
    if (c->w < 0)
        return nc(why, "convolution weight '%s' is not among the spec's inputs", key);
    bool no_bias = strstr(repr, "bias=False") != NULL;
    if (no_bias ? c->bias >= 0 : c->bias < 0)
        return nc(why, "%s: the repr and the spec's parameters disagree on the bias", "convolution");

    const recipe_tensor *xt = &p->inputs[c->x], *wt = &p->inputs[c->w];
    if (strcmp(xt->dtype, "float32") || strcmp(wt->dtype, "float32") ||
        (c->bias >= 0 && strcmp(p->inputs[c->bias].dtype, "float32")))
        return nc(why, "convolution of dtype %s (float32 only)", strcmp(xt->dtype, "float32") ? xt->dtype : wt->dtype);
    if (xt->ndim != dims + 2 || wt->ndim != dims + 2)
        return nc(why, "%s whose input or weight rank is not the module's (unbatched input?)", "convolution");

    if (read_groups(repr, xt, wt, c, why))
        return 1;

    int64_t st[3] = { 1, 1, 1 }, pd[3] = { 0, 0, 0 }, dl[3] = { 1, 1, 1 }, op[3] = { 0, 0, 0 };
    if (repr_tuple(repr, "stride=", st, dims) < 0 || repr_tuple(repr, "dilation=", dl, dims) < 0)
        return nc(why, "%s with an unreadable stride or dilation", "convolution");
    if (transposed && repr_tuple(repr, "output_padding=", op, dims) < 0)
        return nc(why, "%s with an unreadable output_padding", "ConvTranspose");
    int pr = repr_tuple(repr, "padding=", pd, dims);
    if (pr < 0) {
        if (transposed || (!strstr(repr, "padding='valid'") && !strstr(repr, "padding=\"valid\"")))
            return nc(why, "%s with string padding ('same')", "convolution");
        pd[0] = pd[1] = pd[2] = 0;
    }

    /* Conv's weight is [COUT, CIN/groups, k...] (depthwise [C, 1, k...]); ConvTranspose's
     * [CIN, COUT/groups, k...] */
    c->n = xt->shape[0];
    c->cin = xt->shape[1];
    c->cout = transposed ? wt->shape[1] * c->groups : wt->shape[0];
    if (wt->shape[transposed ? 0 : 1] != (c->depthwise ? 1 : transposed ? c->cin : c->cin / c->groups))
        return nc(why, "%s whose weight does not match the input's channels", "convolution");
    if (c->cout % c->groups)
        return nc(why, "%s whose groups do not divide its output channels", "convolution");
    if (c->bias >= 0 && (p->inputs[c->bias].ndim != 1 || p->inputs[c->bias].shape[0] != c->cout))
        return nc(why, "%s bias of an unexpected shape", "convolution");
    int lead = 3 - dims;
    for (int d = 0; d < 3; d++) {
        c->in[d] = c->k[d] = c->out[d] = c->stride[d] = c->dil[d] = 1;
        c->pad[d] = c->opad[d] = 0;
    }
    for (int d = 0; d < dims; d++) {
        c->in[lead + d] = xt->shape[2 + d];
        c->k[lead + d] = wt->shape[2 + d];
        c->stride[lead + d] = st[d];
        c->pad[lead + d] = pd[d];
        c->dil[lead + d] = dl[d];
        c->opad[lead + d] = op[d];
        if (st[d] < 1 || dl[d] < 1 || pd[d] < 0 || op[d] < 0 || wt->shape[2 + d] < 1)
            return nc(why, "%s with a stride, dilation or padding out of range", "convolution");
        if (out_extent(c, lead + d, why))
            return 1;
    }
    c->m = c->n * c->out[0] * c->out[1] * c->out[2];
    c->gn = c->cout / c->groups;
    c->gk = (c->depthwise ? 1 : c->cin / c->groups) * c->k[0] * c->k[1] * c->k[2];
    if (c->m >= ((int64_t)1 << 31) - 256 || c->gk * c->cout >= ((int64_t)1 << 31) ||
        c->cin * c->in[0] * c->in[1] * c->in[2] >= ((int64_t)1 << 31))
        return nc(why, "%s too large for 32-bit pixel, weight or image indices", "convolution");
    if (!contiguous_strides(xt) || !contiguous_strides(wt))
        return nc(why, "%s of a non-contiguous input or weight", "convolution");
    p->family = RECIPE_CONV;
    return 0;
}

bool recipe_conv_is_node(const recipe_plan *p, const char *name)
{
    return p->family == RECIPE_CONV && name && !strcmp(p->conv.node, name);
}

static void mark_used(const recipe_plan *p, int n, bool *used, bool *acc)
{
    if (n < 0)
        return;
    const rx_node *x = &p->nodes[n];
    if (x->op == RX_INPUT)
        used[x->input] = true;
    if (x->op == RX_ACC)
        *acc = true;
    mark_used(p, x->a, used, acc);
    mark_used(p, x->b, used, acc);
}

/* The convolution's output as a contiguous tensor: (N, COUT, spatial...). */
static recipe_tensor conv_output(const recipe_conv_plan *c)
{
    recipe_tensor t;
    memset(&t, 0, sizeof t);
    snprintf(t.dtype, sizeof t.dtype, "float32");
    t.ndim = c->dims + 2;
    t.shape[0] = c->n;
    t.shape[1] = c->cout;
    for (int d = 0; d < c->dims; d++)
        t.shape[2 + d] = c->out[3 - c->dims + d];
    int64_t acc = 1;
    for (int d = t.ndim - 1; d >= 0; d--) {
        t.stride[d] = acc;
        acc *= t.shape[d];
    }
    return t;
}

static bool same_shape(const recipe_tensor *a, const recipe_tensor *b)
{
    bool same = a->ndim == b->ndim;
    for (int d = 0; same && d < a->ndim; d++)
        same = a->shape[d] == b->shape[d];
    return same;
}

/*
 * A reduction over the convolution's channels (dim 1) after its epilogue (level 2's 25:
 * torch.min(conv(x), dim=1, keepdim=True)[0], then tanh twice): sum, mean, max, min or
 * logsumexp of the value p->root (cgr_pre), then result (cgr_epi of the reduced value,
 * reading scalars only), one value an output pixel. The kernel reduces a pixel's channels
 * in the CTA (recipes/conv_tc.cu CGR_CHANRED): ungrouped, at most 128 channels (a tile's
 * width). Marks in post the inputs result reads. 1 (why set) when not covered.
 */
static int chanred_setup(recipe_plan *p, int result, const recipe_tensor *cs, bool *post, strbuf *why)
{
    static const struct { enum recipe_red red; int kind; } kinds[] = {
        { RED_SUM, 1 }, { RED_MEAN, 2 }, { RED_MAX, 3 }, { RED_MIN, 4 }, { RED_LOGSUMEXP, 5 },
    };
    recipe_conv_plan *c = &p->conv;
    const char *name = recipe_red_name(p->red);
    c->chanred = 0;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (p->red == kinds[i].red)
            c->chanred = kinds[i].kind;
    if (!c->chanred)
        return nc(why, "%s after a convolution (sum, mean, max, min and logsumexp over its channels are covered)", name);
    int dim = p->dim < 0 ? p->dim + cs->ndim : p->dim;
    if (p->red_all || p->n_dims > 1 || dim != 1)
        return nc(why, "%s of a convolution over other than its channels (dim 1)", name);
    if (c->groups > 1 || c->depthwise)
        return nc(why, "%s over the channels of a grouped or depthwise convolution", name);
    if (c->cout > 128)
        return nc(why, "%s over more than 128 channels of a convolution (a CTA's tile)", name);
    if (rx_reaches(p, result, c->acc_node))
        return nc(why, "%s of a convolution combined with the convolution itself (a broadcast back over "
                  "the channels)", name);
    p->dim = 1;
    recipe_tensor want = *cs;
    if (p->keepdim) {
        want.shape[1] = 1;
    } else {
        memmove(&want.shape[1], &want.shape[2], (size_t)(want.ndim - 2) * sizeof want.shape[0]);
        want.ndim--;
    }
    const recipe_tensor *o = &p->output;
    if (!same_shape(&want, o) || strcmp(o->dtype, "float32") || !contiguous_strides(o))
        return nc(why, "%s over a convolution's channels whose result is not the output (a reshape or "
                  "broadcast follows?)", name);
    bool reduced = false;
    mark_used(p, result, post, &reduced);
    for (int i = 0; i < p->n_inputs; i++)
        if (post[i] && numel_of(&p->inputs[i]) != 1)
            return nc(why, "'%s' read after a reduction over a convolution's channels (only scalars are)",
                      p->inputs[i].name);
    return 0;
}

/* The pixel dims a reduction over the convolution's nd-dim output takes, as bits (bit j:
 * dim 2 + j; all of them: torch.mean(y, dim=(2, 3)), a global average pooling); 0 when it
 * takes the batch or channel dim, or every dim. */
static int reduced_pixels(const recipe_plan *p, int nd)
{
    int n = p->n_dims > 1 ? p->n_dims : 1, mask = 0;
    if (p->red_all || n > nd - 2)
        return 0;
    for (int i = 0; i < n; i++) {
        int d = p->n_dims > 1 ? p->red_dims[i] : p->dim;
        d = d < 0 ? d + nd : d;
        if (d < 2 || d >= nd || (mask >> (d - 2) & 1))
            return 0;
        mask |= 1 << (d - 2);
    }
    return mask;
}

/* A coefficient of the convolution's value: a scalar or a value a channel. */
static bool conv_coef(const recipe_plan *p, int input, const void *ctx)
{
    (void)ctx;
    return p->conv.kind[input] == RC_SCALAR || p->conv.kind[input] == RC_CHAN;
}

/* Along dim d, the input indices tap k reaches (o = i*stride - pad + k*dil in [0, out)):
 * [lo, hi], recipes/conv_mean.cu's tap_lo and tap_hi. */
static void tap_range(const recipe_conv_plan *c, int d, int64_t k, int64_t *lo, int64_t *hi)
{
    int64_t num = c->pad[d] - k * c->dil[d];
    *lo = num <= 0 ? 0 : (num + c->stride[d] - 1) / c->stride[d];
    num = c->out[d] - 1 + c->pad[d] - k * c->dil[d];
    *hi = num < 0 ? -1 : num / c->stride[d];
    if (*hi > c->in[d] - 1)
        *hi = c->in[d] - 1;
}

void recipe_conv_fold_border(const recipe_conv_plan *c, int d, int64_t *lead, int64_t *trail)
{
    *lead = *trail = 0;
    for (int64_t k = 0; k < c->k[d]; k++) {
        int64_t lo, hi;
        tap_range(c, d, k, &lo, &hi);
        if (lo > *lead)
            *lead = lo;
        if (c->in[d] - 1 - hi > *trail)
            *trail = c->in[d] - 1 - hi;
    }
}

bool recipe_conv_pixels_fold(const recipe_conv_plan *c)
{
    if (!c->transposed)
        return false;
    int64_t cells = 1, lead, trail;
    for (int d = 0; d < 3; d++) {
        recipe_conv_fold_border(c, d, &lead, &trail);
        if (lead + trail >= c->in[d]) /* a tap reaching none of the middle */
            return false;
        cells *= lead + trail + 1;
        if (d == 2 && lead + trail > 32) /* a warp's lanes read a row's border cells */
            return false;
    }
    return cells <= RECIPE_CONV_FOLD_CELLS;
}

/* What a fold of the reduction over `over` of the convolution's output needs (spatred_setup,
 * prefold_setup): a mean or sum, of a transposed convolution, whose result does not read the
 * convolution itself. 0, or 1 (why says why). */
static int fold_allowed(const recipe_plan *p, int result, const char *over, strbuf *why)
{
    const char *name = recipe_red_name(p->red);
    const char *no = p->red != RED_MEAN && p->red != RED_SUM ? "not folded: a mean or a sum folds"
                     : !p->conv.transposed                   ? "not folded: only a transposed convolution's folds"
                     : rx_reaches(p, result, p->conv.acc_node) ? "not folded: its result reads the convolution too"
                                                               : NULL;
    if (!no)
        return 0;
    nc(why, "%s", name);
    strbuf_addf(why, " over %s of a convolution (%s; a stage of its own reduces the convolution's output)", over, no);
    return 1;
}

/*
 * A mean or sum over all the pixels of a transposed convolution, after an epilogue affine in
 * its value (level 2 #77: ConvTranspose3d, x 2, BatchNorm, global average pooling; #42:
 * ConvTranspose2d then torch.mean over (2, 3); #44: stride 2, padding 1). Along each dim the
 * input indices a tap reaches are an interval; only a few border indices are missed by some
 * tap (none without padding), so with the border indices each a cell and the rest one cell
 * the sum over the output's pixels of y[n, co] is
 *   sum_ci sum_cells (sum of x[n, ci] over the cell) (sum of w[ci, co]'s taps reaching it),
 * exact (one cell without padding), and the epilogue, affine with coefficients a channel,
 * commutes with the mean. The kernel (recipes/conv_mean.cu) reads x once and the weight
 * once instead of computing the convolution. Not for a convolution (its taps' reach
 * differs pixel by pixel at the borders: not implemented), nor with more than
 * RECIPE_CONV_FOLD_CELLS cells a plane. Marks in post the inputs result reads.
 */
static int spatred_setup(recipe_plan *p, int result, const recipe_tensor *cs, bool *post, strbuf *why)
{
    recipe_conv_plan *c = &p->conv;
    const char *name = recipe_red_name(p->red);
    if (fold_allowed(p, result, "the pixels", why))
        return 1;
    if (!recipe_conv_pixels_fold(c))
        return nc(why, "%s over the pixels of a transposed convolution whose padding crops more than a few "
                  "border indices (recipes/conv_mean.cu takes at most 64 cells a plane and 32 along W; a "
                  "stage of its own reduces the convolution's output)", name);
    c->spatred = p->red == RED_MEAN ? 1 : 2;
    recipe_tensor want = *cs;
    if (p->keepdim)
        for (int d = 2; d < want.ndim; d++)
            want.shape[d] = 1;
    else
        want.ndim = 2;
    const recipe_tensor *o = &p->output;
    if (!same_shape(&want, o) || strcmp(o->dtype, "float32") || !contiguous_strides(o))
        return nc(why, "%s over a convolution's pixels whose result is not the output (a reshape or "
                  "broadcast follows?)", name);
    bool reduced = false;
    mark_used(p, result, post, &reduced);
    return 0;
}

/* A fold over some dims (pf_mask): the convolution's own geometry saved into c->pf (save),
 * or put back from it (!save). */
static void copy_geometry(recipe_conv_plan *c, bool save)
{
    int64_t *plan[] = { c->in, c->k, c->out, c->stride, c->pad, c->dil, c->opad };
    int64_t *own[] = { c->pf.in, c->pf.k, c->pf.out, c->pf.stride, c->pf.pad, c->pf.dil, c->pf.opad };
    for (int i = 0; i < 7; i++)
        memcpy(save ? own[i] : plan[i], save ? plan[i] : own[i], 3 * sizeof(int64_t));
    if (save)
        c->pf.cin = c->cin;
    else
        c->cin = c->pf.cin;
}

/* The convolution's output with the dims of mask (bit j: dim 2 + j) reduced: kept as 1 or dropped. */
static recipe_tensor reduced_output(const recipe_conv_plan *c, int mask, bool keepdim)
{
    recipe_tensor t = conv_output(c);
    int k = 2;
    for (int d = 2; d < t.ndim; d++)
        if (!(mask >> (d - 2) & 1))
            t.shape[k++] = t.shape[d];
        else if (keepdim)
            t.shape[k++] = 1;
    t.ndim = k;
    int64_t acc = 1;
    for (int d = t.ndim - 1; d >= 0; d--) {
        t.stride[d] = acc;
        acc *= t.shape[d];
    }
    return t;
}

/*
 * A mean or sum over some of a transposed convolution's output dims (level 2 #13: the mean
 * over the depth of a ConvTranspose3d, stride 1, padding 1), after an epilogue affine in its
 * value. Along each folded dim the input indices fall into cells as for spatred_setup (the
 * border indices some tap misses each a cell, the rest one), so the sum over the folded
 * dims is a transposed convolution over the kept ones whose input channels are (ci, cell):
 * x summed over the cell, and the weight's taps along the folded dims that reach the cell,
 * summed (recipes/conv_fold.cuh). The plan's geometry becomes that convolution's (CIN x
 * cells channels, the folded dims of size 1; the convolution's own kept in c->pf) and every
 * convolution kernel runs it, the template summing x and the weight into its workspace
 * first; pre, the reduction's 1/size and what follows are its epilogue. Marks in post the
 * inputs result reads.
 */
static int prefold_setup(recipe_plan *p, int result, int mask, bool *post, strbuf *why)
{
    recipe_conv_plan *c = &p->conv;
    const char *name = recipe_red_name(p->red);
    if (fold_allowed(p, result, "some of the dims", why))
        return 1;
    recipe_tensor want = reduced_output(c, mask, p->keepdim);
    const recipe_tensor *o = &p->output;
    if (!same_shape(&want, o) || strcmp(o->dtype, "float32") || !contiguous_strides(o))
        return nc(why, "%s over some of a convolution's dims whose result is not the output (a reshape "
                  "or broadcast follows?)", name);
    int lead3 = 3 - c->dims, fmask = 0;
    int64_t cells = 1, folded_out = 1;
    for (int j = 0; j < c->dims; j++) {
        if (!(mask >> j & 1))
            continue;
        int d = lead3 + j;
        int64_t lead, trail;
        recipe_conv_fold_border(c, d, &lead, &trail);
        if (lead + trail >= c->in[d])
            return nc(why, "%s over dims of a transposed convolution where a tap reaches none of the "
                      "middle indices (not folded; a stage of its own reduces the output)", name);
        fmask |= 1 << d;
        cells *= lead + trail + 1;
        folded_out *= c->out[d];
    }
    if (cells > RECIPE_CONV_PREFOLD_CELLS || 2 * cells > folded_out) {
        nc(why, "%s over some dims of a transposed convolution", name);
        strbuf_addf(why, ": %lld cells against %lld outputs along them (folded at most %d, and half the "
                    "outputs; a stage of its own reduces the output)", (long long)cells, (long long)folded_out,
                    RECIPE_CONV_PREFOLD_CELLS);
        return 1;
    }
    if (c->cin * cells * c->in[0] * c->in[1] * c->in[2] >= ((int64_t)1 << 31))
        return nc(why, "%s over some dims of a transposed convolution too large to fold", name);
    c->pf_mask = fmask;
    c->pf_red = p->red == RED_MEAN ? 1 : 2;
    copy_geometry(c, true);
    c->cin *= cells;
    for (int d = 0; d < 3; d++) {
        if (!(fmask >> d & 1))
            continue;
        c->in[d] = c->k[d] = c->out[d] = c->stride[d] = c->dil[d] = 1;
        c->pad[d] = c->opad[d] = 0;
    }
    c->m = c->n * c->out[0] * c->out[1] * c->out[2];
    c->gk = c->cin / c->groups * c->k[0] * c->k[1] * c->k[2];
    bool reduced = false;
    mark_used(p, result, post, &reduced);
    return 0;
}

int recipe_conv_finish(recipe_plan *p, int result, strbuf *why)
{
    recipe_conv_plan *c = &p->conv;
    bool red = p->root >= 0; /* set_reduction left the reduced operand there */
    bool used[RECIPE_MAX_INPUTS] = { false }, post[RECIPE_MAX_INPUTS] = { false }, acc = false;
    mark_used(p, red ? p->root : result, used, &acc);
    if (!acc)
        return nc(why, "%s", "the output does not depend on the convolution");
    /* the output the kernel writes: (N, COUT, spatial...) float32, contiguous, or with a
     * reduction over the channels one value an output pixel */
    recipe_tensor cs = conv_output(c);
    const recipe_tensor *o = red ? &cs : &p->output;
    c->spatred = c->pf_mask = 0;
    int pixels = red ? reduced_pixels(p, cs.ndim) : 0;
    if (pixels == (1 << c->dims) - 1 ? spatred_setup(p, result, &cs, post, why)
        : pixels                     ? prefold_setup(p, result, pixels, post, why)
                                     : red && chanred_setup(p, result, &cs, post, why))
        return 1;
    if (c->pf_mask)
        o = &p->output; /* the folded convolution's, its folded dims 1 or dropped */
    bool ok = red || (same_shape(&cs, o) && !strcmp(o->dtype, "float32") && contiguous_strides(o));
    if (!ok && c->transposed)
        return nc(why, "%s", "the output is not the ConvTranspose's shape, (in - 1)*stride - 2*padding + "
                  "dilation*(kernel - 1) + output_padding + 1 (a reshape, pool or broadcast follows?)");
    if (!ok)
        return nc(why, "%s", "the output is not the convolution's shape (a reshape, pool or broadcast follows?)");
    for (int i = 0; i < p->n_inputs; i++) {
        const recipe_tensor *t = &p->inputs[i];
        c->kind[i] = RC_UNUSED;
        if (i == c->x || i == c->w) {
            if (used[i])
                return nc(why, "the epilogue reads '%s', an operand of the convolution", t->name);
            c->kind[i] = RC_OPERAND;
            continue;
        }
        if (!used[i] && !post[i])
            continue;
        if (strcmp(t->dtype, "float32"))
            return nc(why, "epilogue input '%s' is not float32", t->name);
        if (numel_of(t) == 1) {
            c->kind[i] = RC_SCALAR;
            continue;
        }
        bool same = t->ndim == o->ndim;
        for (int d = 0; same && d < t->ndim; d++)
            same = t->shape[d] == o->shape[d];
        if (same && contiguous_strides(t)) {
            c->kind[i] = RC_FULL;
            continue;
        }
        /* one value per channel: right-aligned against the output, every dim 1 but the
         * channel dim (the conv's own bias [COUT] is added by the walk as such) */
        int lead = o->ndim - t->ndim;
        bool chan = contiguous_strides(t) && (lead >= 0 || i == c->bias || (c->chan_vec & (1u << i)));
        if (i == c->bias || (c->chan_vec & (1u << i)))
            chan = t->ndim == 1 && t->shape[0] == c->cout;
        else
            for (int d = 0; chan && d < t->ndim; d++)
                chan = d + lead == 1 ? t->shape[d] == c->cout : t->shape[d] == 1;
        if (!chan)
            return nc(why, "epilogue input '%s' is neither the output's shape, one element, nor one value a channel", t->name);
        c->kind[i] = RC_CHAN;
    }
    /* a mean over the pixels: the operand affine in the convolution (scalars and values a
     * channel around it), what follows reading scalars and values a channel */
    if ((c->spatred || c->pf_mask) && rx_affine_degree(p, p->root, conv_coef, NULL) != 1)
        return nc(why, "%s over a convolution's pixels of other than an affine map of it (a x conv + b, "
                  "a and b scalars or values a channel)", recipe_red_name(p->red));
    for (int i = 0; c->spatred && i < p->n_inputs; i++)
        if (post[i] && c->kind[i] == RC_FULL)
            return nc(why, "'%s' read after a mean over a convolution's pixels (scalars and values a "
                      "channel are)", p->inputs[i].name);
    if (!red)
        p->root = result;
    p->epi = red && p->nodes[result].op == RX_ACC ? -1 : result;
    return 0;
}

/* ================================================================== description */

static void shape_text(const recipe_tensor *t, strbuf *out)
{
    strbuf_addc(out, '[');
    for (int d = 0; d < t->ndim; d++)
        strbuf_addf(out, "%s%lld", d ? ", " : "", (long long)t->shape[d]);
    strbuf_addc(out, ']');
}

static void geometry(const recipe_conv_plan *c, strbuf *out)
{
    int lead = 3 - c->dims;
    const int64_t *v[] = { c->k, c->stride, c->pad, c->dil, c->opad };
    const char *names[] = { "kernel", "stride", "padding", "dilation", "output_padding" };
    strbuf_addf(out, "conv%s%dd %lld -> %lld%s", c->transposed ? "_transpose" : "", c->dims,
                (long long)c->cin, (long long)c->cout, c->depthwise ? " depthwise" : "");
    if (c->groups > 1)
        strbuf_addf(out, " groups %lld", (long long)c->groups);
    for (int j = 0; j < (c->transposed ? 5 : 4); j++) {
        strbuf_addf(out, " %s ", names[j]);
        for (int d = lead; d < 3; d++)
            strbuf_addf(out, "%s%lld", d > lead ? "x" : "", (long long)v[j][d]);
    }
    strbuf_addf(out, "%s", c->bias >= 0 ? " bias" : "");
}

/* With a fold over some dims (pf_mask): the convolution as the model has it. */
static recipe_conv_plan own_geometry(const recipe_conv_plan *c)
{
    recipe_conv_plan o = *c;
    if (c->pf_mask)
        copy_geometry(&o, false);
    return o;
}

static void describe_prefold(const recipe_plan *p, strbuf *out)
{
    const recipe_conv_plan *c = &p->conv;
    recipe_conv_plan own = own_geometry(c);
    strbuf_addf(out, "folded: the %s over dims", recipe_red_name(p->red));
    for (int d = 3 - c->dims; d < 3; d++)
        if (c->pf_mask >> d & 1)
            strbuf_addf(out, " %d", d - (3 - c->dims) + 2);
    strbuf_adds(out, " of ");
    rx_format(p, p->root, out);
    strbuf_adds(out, " with ");
    geometry(&own, out);
    strbuf_addf(out, ": the convolution above over the other dims, its %lld input channels (ci, cell): x summed "
                     "over the cell along the folded dims (the border indices some tap misses each a cell, the "
                     "rest one) and the weight's taps there reaching the cell, summed%s (recipes/conv_fold.cuh, "
                     "into the workspace first); then ",
                (long long)c->cin, c->pf_red == 1 ? ", over the folded outputs' count" : "");
    if (p->epi >= 0)
        rx_format(p, p->epi, out);
    else
        strbuf_adds(out, "r");
    strbuf_addc(out, '\n');
}

void recipe_conv_describe(const recipe_plan *p, strbuf *out)
{
    static const char *kinds[] = { "unused", "operand of the convolution", "full (output's shape)",
                                   "scalar (one element)", "one value a channel" };
    const recipe_conv_plan *c = &p->conv;
    strbuf_adds(out, "family: conv\n");
    for (int i = 0; i < p->n_inputs; i++) {
        strbuf_addf(out, "input %d: %s %s ", i, p->inputs[i].name, p->inputs[i].dtype);
        shape_text(&p->inputs[i], out);
        strbuf_addf(out, ": %s\n", kinds[c->kind[i]]);
    }
    strbuf_addf(out, "output: %s %s ", p->output.name, p->output.dtype);
    shape_text(&p->output, out);
    strbuf_adds(out, "\nconvolution: ");
    geometry(c, out);
    if (c->depthwise)
        strbuf_addf(out, "\ndirect (depthwise): %lld outputs, %lld taps each\n",
                    (long long)(c->m * c->cout), (long long)c->gk);
    else
        strbuf_addf(out, "\nimplicit GEMM%s: M %lld (N*OD*OH*OW), N %lld (COUT%s), K %lld (CIN%s*KD*KH*KW)%s\n",
                    c->groups > 1 ? " a group" : "", (long long)c->m, (long long)c->gn,
                    c->groups > 1 ? "/groups" : "", (long long)c->gk, c->groups > 1 ? "/groups" : "",
                    c->transposed ? "; transposed: a tap reads x where (o + pad - k*dil) divides by the "
                                    "stride, the weight [CIN, COUT, k] is first copied to [COUT, K] in the workspace"
                                  : "");
    if (recipe_conv_pointwise(p))
        strbuf_addf(out, "pointwise: also the batched GEMM it is in NCHW, y[b] = W @ x[b]: M %lld (COUT), N %lld "
                         "(pixels), K %lld (CIN), batch %lld (variants 'conv as gemm')\n",
                    (long long)c->cout, (long long)(c->out[0] * c->out[1] * c->out[2]), (long long)c->cin,
                    (long long)c->n);
    if (recipe_conv_phases(c))
        strbuf_adds(out, "sub-pixel phases: the outputs split by (o + pad) mod stride, each phase a "
                         "dense GEMM over only the taps that reach the input (K / stride a dim)\n");
    if (c->pf_mask) {
        describe_prefold(p, out);
        return;
    }
    if (c->spatred) {
        strbuf_addf(out, "folded: the %s over the pixels%s of ", recipe_red_name(p->red), p->keepdim ? " (keepdim)" : "");
        rx_format(p, p->root, out);
        strbuf_adds(out, " is that of the convolution, sum_ci sum_cells (x[n, ci] summed over the cell) (w[ci, co]'s "
                         "taps reaching the cell, summed), through the same map, over ");
        for (int d = 3 - c->dims; d < 3; d++) {
            int64_t lead, trail;
            recipe_conv_fold_border(c, d, &lead, &trail);
            strbuf_addf(out, "%s%lld", d > 3 - c->dims ? " x " : "", (long long)(lead + trail + 1));
        }
        strbuf_adds(out, " cells a plane (the border indices some tap misses each a cell, the rest one); then ");
        if (p->epi >= 0)
            rx_format(p, p->epi, out);
        else
            strbuf_adds(out, "r");
        strbuf_adds(out, " a channel\n");
        return;
    }
    if (c->chanred) {
        strbuf_addf(out, "epilogue: %s over the channels (dim 1%s) of ", recipe_red_name(p->red),
                    p->keepdim ? ", keepdim" : "");
        rx_format(p, p->root, out);
        strbuf_adds(out, " in the CTA (every channel in its tile), then ");
        if (p->epi >= 0)
            rx_format(p, p->epi, out);
        else
            strbuf_adds(out, "r");
        strbuf_adds(out, " an output pixel\n");
        return;
    }
    strbuf_adds(out, "epilogue: ");
    rx_format(p, p->epi, out);
    strbuf_addc(out, '\n');
}

void recipe_conv_summary(const recipe_plan *p, strbuf *out)
{
    strbuf_adds(out, "conv ");
    recipe_conv_plan own = own_geometry(&p->conv);
    geometry(&own, out);
    if (p->conv.chanred || p->conv.spatred || p->conv.pf_mask) {
        strbuf_addf(out, ", %s over the %s of ", recipe_red_name(p->red),
                    p->conv.chanred ? "channels" : p->conv.pf_mask ? "some pixel dims (folded)" : "pixels");
        rx_format(p, p->root, out);
        if (p->epi >= 0) {
            strbuf_adds(out, ", then ");
            rx_format(p, p->epi, out);
        }
    } else {
        strbuf_adds(out, ", then ");
        rx_format(p, p->epi, out);
    }
    strbuf_addf(out, " -> %s ", p->output.dtype);
    shape_text(&p->output, out);
}

/* ================================================================== index math */

/* Where group g's input channels start in an image of x (the kernel's Xg offset). */
static int64_t group_x_offset(const recipe_conv_plan *c, int64_t g)
{
    return g * (c->cin / c->groups) * c->in[0] * c->in[1] * c->in[2];
}

/* Transposed: output o takes input i = (o + pad - kk*dil) / stride where that divides.
 * With u = o + pad = S*qu + ru and e = kk*dil = S*qe + re, it divides iff ru == re, and
 * then i = qu - qe: the row keeps (qu, ru) (the residues as one number), the k its (qe,
 * re), and the offset is again a row base plus a k offset (recipes/conv_tc.cu's steps). */
static int64_t gather_transposed(const recipe_conv_plan *c, int64_t g, int64_t m, int64_t k)
{
    const int64_t P = c->out[0] * c->out[1] * c->out[2];
    const int64_t taps = c->k[0] * c->k[1] * c->k[2];
    const int64_t *S = c->stride;
    int64_t nb = m / P, pix = m - nb * P;
    int64_t od = pix / (c->out[1] * c->out[2]);
    int64_t r = pix - od * (c->out[1] * c->out[2]);
    int64_t oh = r / c->out[2], ow = r - oh * c->out[2];
    int64_t ud = od + c->pad[0], uh = oh + c->pad[1], uw = ow + c->pad[2];
    int64_t d0 = ud / S[0], h0 = uh / S[1], w0 = uw / S[2];
    int64_t res = ((ud % S[0]) * S[1] + uh % S[1]) * S[2] + uw % S[2];
    int64_t image = c->cin * c->in[0] * c->in[1] * c->in[2];
    int64_t base = nb * image + group_x_offset(c, g) + (d0 * c->in[1] + h0) * c->in[2] + w0;
    int64_t ch = k / taps, t = k - ch * taps;
    int64_t kd = t / (c->k[1] * c->k[2]), t2 = t - kd * (c->k[1] * c->k[2]);
    int64_t kh = t2 / c->k[2], kw = t2 - kh * c->k[2];
    int64_t ed = kd * c->dil[0], eh = kh * c->dil[1], ew = kw * c->dil[2];
    int64_t qd = ed / S[0], qh = eh / S[1], qw = ew / S[2];
    int64_t kres = ((ed % S[0]) * S[1] + eh % S[1]) * S[2] + ew % S[2];
    int64_t koff = ch * c->in[0] * c->in[1] * c->in[2] - (qd * c->in[1] + qh) * c->in[2] - qw;
    int64_t id = d0 - qd, ih = h0 - qh, iw = w0 - qw;
    if (res != kres || id < 0 || id >= c->in[0] || ih < 0 || ih >= c->in[1] || iw < 0 || iw >= c->in[2])
        return -1;
    return base + koff;
}

/* Row m of a convolution (not transposed): its image and the input corner o*stride - pad
 * of its output pixel (the kernel's row set-up). */
static void row_corner(const recipe_conv_plan *c, int64_t m, int64_t *nb, int64_t *d0, int64_t *h0,
                       int64_t *w0)
{
    const int64_t P = c->out[0] * c->out[1] * c->out[2];
    int64_t pix = m % P;
    int64_t od = pix / (c->out[1] * c->out[2]);
    int64_t r = pix - od * (c->out[1] * c->out[2]);
    int64_t oh = r / c->out[2], ow = r - oh * c->out[2];
    *nb = m / P;
    *d0 = od * c->stride[0] - c->pad[0];
    *h0 = oh * c->stride[1] - c->pad[1];
    *w0 = ow * c->stride[2] - c->pad[2];
}

/* Tap t of the kernel window as (kd, kh, kw), the weight's own order. */
static void tap_split(const recipe_conv_plan *c, int64_t t, int64_t *kd, int64_t *kh, int64_t *kw)
{
    *kd = t / (c->k[1] * c->k[2]);
    int64_t t2 = t - *kd * (c->k[1] * c->k[2]);
    *kh = t2 / c->k[2];
    *kw = t2 - *kh * c->k[2];
}

int64_t recipe_conv_gather(const recipe_conv_plan *c, int64_t g, int64_t m, int64_t k)
{
    /* the same steps as recipes/conv_tc.cu's row set-up and load_tile() */
    if (m < 0 || m >= c->m || k < 0 || k >= c->gk || g < 0 || g >= c->groups)
        return -1;
    if (c->transposed)
        return gather_transposed(c, g, m, k);
    const int64_t taps = c->k[0] * c->k[1] * c->k[2];
    int64_t nb, d0, h0, w0, kd, kh, kw;
    row_corner(c, m, &nb, &d0, &h0, &w0);
    int64_t image = c->cin * c->in[0] * c->in[1] * c->in[2];
    int64_t base = nb * image + group_x_offset(c, g) + (d0 * c->in[1] + h0) * c->in[2] + w0;
    int64_t ch = k / taps, t = k - ch * taps;
    tap_split(c, t, &kd, &kh, &kw);
    int64_t koff = ch * c->in[0] * c->in[1] * c->in[2] +
                   (kd * c->dil[0] * c->in[1] + kh * c->dil[1]) * c->in[2] + kw * c->dil[2];
    int64_t id = d0 + kd * c->dil[0], ih = h0 + kh * c->dil[1], iw = w0 + kw * c->dil[2];
    if (id < 0 || id >= c->in[0] || ih < 0 || ih >= c->in[1] || iw < 0 || iw >= c->in[2])
        return -1;
    return base + koff;
}

/* ---- channels-last (CGR_NHWC): the steps of recipes/conv_tc.cu's to_nhwc(),
 * weight_nhwc() and load_tile() */

/* A transposed convolution of stride 1 is a convolution of the same x with the weight
 * [CIN][COUT][taps] read flipped (tap taps-1-t) and transposed, and padding
 * dil*(k-1) - pad a dim (negative: a crop; output_padding only lengthens the output):
 * y[o] = sum x[o + pad - kk*dil] w[kk] = sum x[o - pad' + kk'*dil] w[k-1-kk'].
 * Its channels-last form runs that convolution (conv_tc.cu CGR_FLIP). */
bool recipe_conv_flippable(const recipe_conv_plan *c)
{
    return c->transposed && c->groups == 1 && c->stride[0] == 1 && c->stride[1] == 1 && c->stride[2] == 1;
}

static recipe_conv_plan as_forward(const recipe_conv_plan *c)
{
    recipe_conv_plan f = *c;
    f.transposed = false;
    for (int d = 0; d < 3; d++)
        f.pad[d] = c->dil[d] * (c->k[d] - 1) - c->pad[d];
    return f;
}

int64_t recipe_conv_nhwc_cp(const recipe_conv_plan *c)
{
    return (c->cin + 3) / 4 * 4;
}

int64_t recipe_conv_nhwc_k(const recipe_conv_plan *c)
{
    return c->k[0] * c->k[1] * c->k[2] * recipe_conv_nhwc_cp(c);
}

int64_t recipe_conv_nhwc_x_index(const recipe_conv_plan *c, int64_t i)
{
    const int64_t cp = recipe_conv_nhwc_cp(c), plane = c->in[0] * c->in[1] * c->in[2];
    if (i < 0 || i >= c->n * plane * cp)
        return -1;
    int64_t ch = i % cp, pix = i / cp % plane, nb = i / cp / plane;
    return ch < c->cin ? (nb * c->cin + ch) * plane + pix : -1;
}

int64_t recipe_conv_nhwc_weight_index(const recipe_conv_plan *c, int64_t co, int64_t k)
{
    const int64_t cp = recipe_conv_nhwc_cp(c), taps = c->k[0] * c->k[1] * c->k[2];
    if ((c->transposed && !recipe_conv_flippable(c)) || co < 0 || co >= c->gn || k < 0 ||
        k >= recipe_conv_nhwc_k(c))
        return -1;
    int64_t t = k / cp, ch = k - t * cp;
    if (ch >= c->cin)
        return -1;
    return c->transposed ? (ch * c->cout + co) * taps + (taps - 1 - t) : (co * c->cin + ch) * taps + t;
}

int64_t recipe_conv_nhwc_gather(const recipe_conv_plan *c, int64_t m, int64_t k)
{
    const int64_t cp = recipe_conv_nhwc_cp(c);
    if ((c->transposed && !recipe_conv_flippable(c)) || m < 0 || m >= c->m || k < 0 ||
        k >= recipe_conv_nhwc_k(c))
        return -1;
    recipe_conv_plan f;
    if (c->transposed) {
        f = as_forward(c);
        c = &f;
    }
    int64_t nb, d0, h0, w0, kd, kh, kw;
    row_corner(c, m, &nb, &d0, &h0, &w0);
    int64_t base = ((nb * c->in[0] + d0) * c->in[1] + h0) * c->in[2] * cp + w0 * cp;
    int64_t t = k / cp, ch = k - t * cp;
    tap_split(c, t, &kd, &kh, &kw);
    int64_t dd = kd * c->dil[0], dh = kh * c->dil[1], dw = kw * c->dil[2];
    int64_t koff = ((dd * c->in[1] + dh) * c->in[2] + dw) * cp + ch;
    int64_t id = d0 + dd, ih = h0 + dh, iw = w0 + dw;
    if (id < 0 || id >= c->in[0] || ih < 0 || ih >= c->in[1] || iw < 0 || iw >= c->in[2])
        return -1;
    return base + koff;
}

/* A transposed convolution's weight [CIN][COUT/groups][taps]: where output channel co's
 * taps for its group's input channel ch (0 .. CIN/groups - 1) start. */
static int64_t transposed_weight_at(const recipe_conv_plan *c, int64_t co, int64_t ch, int64_t taps)
{
    int64_t g = co / c->gn, col = co - g * c->gn;
    return ((g * (c->cin / c->groups) + ch) * c->gn + col) * taps;
}

/* ---- sub-pixel phases: the steps of recipes/conv_tc.cu's phase_taps(), row_pixel(),
 * load_tile() and transpose_weight() with CGR_PHASES */

static int64_t ph_gcd(int64_t a, int64_t b) { return b == 0 ? a : ph_gcd(b, a % b); }
/* the first tap kk of residue r (kk*D = r mod S), -1 for none (gcd(S, D) not dividing r) */
static int64_t ph_k0(int64_t r, int64_t S, int64_t D)
{
    for (int64_t kk = 0; kk < S; kk++)
        if ((kk * D - r) % S == 0)
            return kk;
    return -1;
}
/* taps of residue r: k0, k0 + S/g, ... below K */
static int64_t ph_taps(int64_t r, int64_t K, int64_t S, int64_t D)
{
    int64_t k0 = ph_k0(r, S, D), every = S / ph_gcd(S, D);
    return k0 >= 0 && k0 < K ? (K - k0 + every - 1) / every : 0;
}
/* tap j of residue r: its kk, and the offset c0 of its input corner (i = Q + c0 - j*D/g) */
static int64_t ph_kk(int64_t r, int64_t j, int64_t S, int64_t D) { return ph_k0(r, S, D) + j * (S / ph_gcd(S, D)); }
static int64_t ph_c0(int64_t r, int64_t S, int64_t D) { return (r - ph_k0(r, S, D) * D) / S; }
static int64_t ph_qmin(int64_t r, int64_t P, int64_t S) { return r >= P ? 0 : (P - r + S - 1) / S; }

static void phase_res(const recipe_conv_plan *c, int64_t phase, int64_t r[3])
{
    r[0] = phase / (c->stride[1] * c->stride[2]);
    r[1] = (phase / c->stride[2]) % c->stride[1];
    r[2] = phase % c->stride[2];
}

int64_t recipe_conv_phase_count(const recipe_conv_plan *c)
{
    return c->stride[0] * c->stride[1] * c->stride[2];
}

int64_t recipe_conv_phase_rows(const recipe_conv_plan *c)
{
    int64_t rows = c->n;
    for (int d = 0; d < 3; d++)
        rows *= (c->out[d] + c->stride[d] - 1) / c->stride[d];
    return rows;
}

/* taps of the phase a dim (t[0..2]); returns its K (CIN x taps) */
static int64_t phase_taps(const recipe_conv_plan *c, int64_t phase, int64_t t[3])
{
    int64_t r[3];
    phase_res(c, phase, r);
    for (int d = 0; d < 3; d++)
        t[d] = ph_taps(r[d], c->k[d], c->stride[d], c->dil[d]);
    return c->cin / c->groups * t[0] * t[1] * t[2];
}

int64_t recipe_conv_phase_k(const recipe_conv_plan *c, int64_t phase)
{
    int64_t t[3];
    return phase_taps(c, phase, t);
}

/* row ml of the phase's box: the corner Q a dim and the output pixel; false past the output */
static bool phase_row(const recipe_conv_plan *c, int64_t phase, int64_t ml, int64_t *nb, int64_t q[3], int64_t o[3])
{
    int64_t r[3], cnt[3];
    phase_res(c, phase, r);
    for (int d = 0; d < 3; d++)
        cnt[d] = (c->out[d] + c->stride[d] - 1) / c->stride[d];
    if (ml < 0 || ml >= recipe_conv_phase_rows(c))
        return false;
    *nb = ml / (cnt[0] * cnt[1] * cnt[2]);
    int64_t rest = ml - *nb * (cnt[0] * cnt[1] * cnt[2]);
    int64_t idx[3] = { rest / (cnt[1] * cnt[2]), (rest / cnt[2]) % cnt[1], rest % cnt[2] };
    for (int d = 0; d < 3; d++) {
        q[d] = ph_qmin(r[d], c->pad[d], c->stride[d]) + idx[d];
        o[d] = c->stride[d] * q[d] + r[d] - c->pad[d];
        if (o[d] >= c->out[d])
            return false;
    }
    return true;
}

int64_t recipe_conv_phase_gather(const recipe_conv_plan *c, int64_t g, int64_t phase, int64_t ml, int64_t k)
{
    int64_t t[3], nb, q[3], o[3];
    int64_t kr = phase_taps(c, phase, t);
    if (k < 0 || k >= kr || g < 0 || g >= c->groups || !phase_row(c, phase, ml, &nb, q, o))
        return -1;
    int64_t tt = t[0] * t[1] * t[2];
    int64_t ch = k / tt, tap = k - ch * tt;
    int64_t j[3] = { tap / (t[1] * t[2]), (tap / t[2]) % t[1], tap % t[2] };
    int64_t i[3], r[3];
    phase_res(c, phase, r);
    for (int d = 0; d < 3; d++) {
        i[d] = q[d] + ph_c0(r[d], c->stride[d], c->dil[d]) - j[d] * (c->dil[d] / ph_gcd(c->stride[d], c->dil[d]));
        if (i[d] < 0 || i[d] >= c->in[d])
            return -1;
    }
    ch += g * (c->cin / c->groups);
    return ((nb * c->cin + ch) * c->in[0] + i[0]) * c->in[1] * c->in[2] + i[1] * c->in[2] + i[2];
}

int64_t recipe_conv_phase_out_index(const recipe_conv_plan *c, int64_t phase, int64_t ml, int64_t co)
{
    int64_t nb, q[3], o[3];
    if (co < 0 || co >= c->cout || !phase_row(c, phase, ml, &nb, q, o))
        return -1;
    return (nb * c->cout + co) * c->out[0] * c->out[1] * c->out[2] + (o[0] * c->out[1] + o[1]) * c->out[2] + o[2];
}

int64_t recipe_conv_phase_weight_index(const recipe_conv_plan *c, int64_t phase, int64_t co, int64_t k)
{
    int64_t t[3], r[3];
    int64_t kr = phase_taps(c, phase, t);
    if (co < 0 || co >= c->cout || k < 0 || k >= kr)
        return -1;
    phase_res(c, phase, r);
    int64_t tt = t[0] * t[1] * t[2];
    int64_t ch = k / tt, tap = k - ch * tt;
    int64_t j[3] = { tap / (t[1] * t[2]), (tap / t[2]) % t[1], tap % t[2] };
    int64_t kk[3];
    for (int d = 0; d < 3; d++)
        kk[d] = ph_kk(r[d], j[d], c->stride[d], c->dil[d]);
    int64_t taps = c->k[0] * c->k[1] * c->k[2];
    return transposed_weight_at(c, co, ch, taps) + (kk[0] * c->k[1] + kk[1]) * c->k[2] + kk[2];
}

int64_t recipe_conv_weight_index(const recipe_conv_plan *c, int64_t co, int64_t k)
{
    if (co < 0 || co >= c->cout || k < 0 || k >= c->gk)
        return -1;
    if (!c->transposed)
        return co * c->gk + k; /* [COUT][CIN/groups * taps] */
    /* conv_tc.cu's transpose_weight(): B(co, k) = w[c, co, t] with k = c*taps + t */
    const int64_t taps = c->k[0] * c->k[1] * c->k[2];
    int64_t ch = k / taps, t = k - ch * taps;
    return transposed_weight_at(c, co, ch, taps) + t;
}

int64_t recipe_conv_out_index(const recipe_conv_plan *c, int64_t m, int64_t co)
{
    const int64_t P = c->out[0] * c->out[1] * c->out[2];
    int64_t nb = m / P;
    return (nb * c->cout + co) * P + (m - nb * P);
}

/* ================================================================== variants */

/* Channels-last (CGR_NHWC) needs a convolution, or a transposed one of stride 1 (run as
 * the flipped convolution), with more than one tap (a 1 x 1 one reads x coalesced along
 * the pixels as it is: level 1 #87 was slower channels-last, the copy of its 4 GiB x
 * costing more than it saved; lab round 47), whose channels padded to CP cost at most half
 * again the k-tiles (level 1 #59, CIN 3, 3x3x1: K 27 in one k-tile, 36 in two, took 3.03 ms
 * channels-last against 1.63, sweep 12-04 20:12; #54's 3 -> 4 and #60's 10 -> 14 k-tiles
 * were faster), an image of whose copy fits an int index, and a tile whose rows and
 * columns are whole passes of the 16-byte copies (threads / 8 rows a pass). */
bool recipe_conv_nhwc_fits(const recipe_conv_plan *c, const recipe_conv_params *v)
{
    int pass = 32 * v->wm * v->wn / 8;
    int64_t tiles = (c->gk + 31) / 32, tiles_nhwc = (recipe_conv_nhwc_k(c) + 31) / 32;
    int64_t image = c->in[0] * c->in[1] * c->in[2] * recipe_conv_nhwc_cp(c);
    return (!c->transposed || recipe_conv_flippable(c)) && !c->depthwise && c->groups == 1 && v->dw_threads == 0 &&
           c->k[0] * c->k[1] * c->k[2] > 1 && 2 * tiles_nhwc <= 3 * tiles && image < (INT64_C(1) << 31) &&
           v->bm % pass == 0 && v->bn % pass == 0;
}

/* 3xFP16 channels-last only (the NCHW gather's kernel spilled 100 bytes with the 3xTF32
 * redo loop, lab rounds 42-44; channels-last spills 16 and is faster), where the warp tile
 * fits (recipe_f16_warp_fits, as the GEMM's). */
static bool conv_f16_fits(const recipe_conv_params *v)
{
    return v->nhwc && recipe_f16_warp_fits(v->bm / v->wm, v->bn / v->wn);
}

/* A stride-1 transposed convolution: the first tile that fits, as the flipped convolution
 * channels-last, first (the transposed form's first tile second; the last tile makes room
 * when the list is full). H200, 12-05 03:26 (docs/perf.md): timed side by side with the
 * transposed form's first tile, it won on all 9 stride-1 problems of level 1, 1.6-2.4x
 * over the previous rows (#70 0.991x -> 2.387x eager, #57 0.303x -> 0.487x). */
static int insert_flipped(const recipe_conv_plan *c, recipe_params *out, int n, int max)
{
    for (int i = 0; i < n; i++) {
        if (!recipe_conv_nhwc_fits(c, &out[i].conv))
            continue;
        recipe_params k = out[i];
        k.conv.nhwc = 2;
        k.conv.prec = conv_f16_fits(&k.conv) ? RECIPE_GEMM_3XF16 : RECIPE_GEMM_3XTF32;
        if (n >= max) /* (the list may come in longer than max: the tail's room is kept) */
            n = max - 1;
        memmove(&out[1], &out[0], (size_t)n * sizeof out[0]);
        out[0] = k;
        return n + 1;
    }
    return n;
}

/* Each tile channels-last in 3xFP16, channels-last in 3xTF32, then as before (the gather
 * of x as NCHW, 4 bytes an element). H200 (docs/perf.md, lab rounds 46-47, level 2 #1,
 * 128 x 128): the NCHW gather made the kernel issue 1433 instructions a warp a k-tile
 * against a GEMM's 824 in the same tile; channels-last 5.29 ms against 7.80, in 3xFP16
 * 4.75; level 1 #55 11.29 against 16.39. */
static int interleave_nhwc(const recipe_conv_plan *c, recipe_params *out, int n, int max)
{
    if (c->transposed)
        return max >= 2 ? insert_flipped(c, out, n, max) : n;
    recipe_params all[3 * RECIPE_MAX_VARIANTS];
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (recipe_conv_nhwc_fits(c, &out[i].conv)) {
            recipe_params k = out[i];
            k.conv.nhwc = 1;
            if (conv_f16_fits(&k.conv)) {
                all[m] = k;
                all[m++].conv.prec = RECIPE_GEMM_3XF16;
            }
            all[m++] = k;
        }
        all[m++] = out[i];
    }
    if (m > max)
        m = max;
    memcpy(out, all, (size_t)m * sizeof out[0]);
    return m;
}

static int conv_tile_variants(const recipe_plan *p, const recipe_hw *hw, recipe_params *out, int max);

/* Hopper's warpgroup MMAs (recipes/conv_tc.cu CGR_WGMMA, sm_90 only: wgmma is sm_90a's)
 * take what channels-last takes, but with CP = CIN rounded up to 8 (a 16-byte chunk of
 * halves), at most half again CIN (CIN 3 -> 8 would multiply K by 2.7), and 1 x 1
 * convolutions too (the product there is a plain GEMM whose operands need the split anyway);
 * and strided transposed convolutions in sub-pixel phases (each phase's K padded to the
 * k-tile on its own: at most 64 a phase more); a reduction over the channels where they
 * fit one tile (128: a warp's accumulators then hold every channel of its rows); no groups. */
static bool conv_wgmma_fits(const recipe_conv_plan *c, const recipe_hw *hw)
{
    int64_t cp8 = (c->cin + 7) / 8 * 8, taps = c->k[0] * c->k[1] * c->k[2];
    int64_t plane = c->in[0] * c->in[1] * c->in[2];
    bool phases = recipe_conv_phases(c) != 0;
    int64_t r = phases ? recipe_conv_phase_count(c) : 1;
    int64_t kp = (taps * cp8 + 63) / 64 * 64 + 64 * (r - 1);      /* at least the copy's K */
    int64_t rows = phases ? r * ((recipe_conv_phase_rows(c) + 127) / 128 * 128) : c->m;
    return hw->sm == 90 && (!c->transposed || recipe_conv_flippable(c) || phases) && !c->depthwise &&
           c->groups == 1 && (!c->chanred || c->gn <= 128) && 2 * (cp8 - c->cin) <= c->cin && plane * cp8 < (INT64_C(1) << 31) &&
           c->gn * kp < (INT64_C(1) << 31) && rows < (INT64_C(1) << 31) - 256;
}

/* The two width phases of a tap count apart (ph_taps of residues 0 and 1 along the width) */
static bool conv_width_taps_differ(const recipe_conv_plan *c)
{
    return ph_taps(0, c->k[2], c->stride[2], c->dil[2]) != ph_taps(1, c->k[2], c->stride[2], c->dil[2]);
}

/* Whether the width phases can pair at all (conv_pair_w says why these): in phases, a width
 * stride of 2, the plain epilogue (no reduction over channels or space), no input of the
 * output's shape. */
static bool conv_may_pair_w(const recipe_plan *p)
{
    const recipe_conv_plan *c = &p->conv;
    if (!c->transposed || !recipe_conv_phases(c) || c->stride[2] != 2 || c->chanred || c->spatred)
        return false;
    for (int i = 0; i < p->n_inputs; i++)
        if (c->kind[i] == RC_FULL)
            return false;
    return true;
}

/* Both width phases of a box in one CTA (recipes/conv_tc.cu CGR_CONV_PAIR_W), and the tile
 * width that goes with it: true to pair, *bn (the WGMMA tile's columns) narrowed to 64 where
 * that pairs a 128-column tile. For strided transposed convolutions in phases whose width
 * stride is 2 (each phase's row then writes every other float of an output row: split over
 * two CTAs, each 32-byte sector was written in halves, and DRAM read and wrote it twice; level
 * 1 #73 under ncu: 2.65 GB read and 2.12 written for 1.04 GB of output, paired 0.44 and 1.05).
 * Lab round 72 (H100): 18-32% faster on level 1 #73 and #77, level 2 #100, #16 and #20; 32%
 * slower on level 2 #26, the one whose epilogue also reads a tensor of the output's shape
 * (its add): not paired where one does.
 * Tiles of at most 64 columns only: at 128 two sets of 64 accumulators a thread spill (level
 * 2 #93 through `cutegen bench`, H100, session 37: 2.2x slower, 1 KB of spills). A 128-column
 * tile becomes two 64-column tiles a box, paired, where the two width phases take different
 * numbers of taps: lab round 73 (H100), level 2 #100 (kernel 3: 2 and 1 width taps) 11.45 ms
 * unpaired at 128 -> 6.25 paired at 64 (8.24 paired at 128, with spills). Where they take the
 * same (#93, kernel 4: 2 and 2) the phases of a box run about as long, the two halves of a
 * sector reach L2 together and merge there, pairing gains nothing (64 columns: 2.11 ms
 * unpaired, 2.13 paired) and the narrower tile costs 9% (1.94 at 128): it stays 128 unpaired.
 * Not a rule that always holds: lab round 74 (H100, side by side) found level 2 #91 (kernel
 * 4, padding 1: also 2 and 2) 10% faster paired at 64 (4.034 ms against 4.439), and level 2
 * #74 (COUT 32, CIN 16, into a staged plan's intermediate) 11% faster unpaired (0.549 against
 * 0.615): conv_wgmma_variants lists the other choice second for the tuning. */
static bool conv_pair_w(const recipe_plan *p, int *bn)
{
    if (!conv_may_pair_w(p))
        return false;
    if (*bn > 64 && conv_width_taps_differ(&p->conv))
        *bn = 64;
    return *bn <= 64;
}

/* A WGMMA tile (bm, bn) at the most stages (at most 4) its shared memory allows: (bm + bn) x 64
 * halves, big and small, a stage, the mbarriers and 1024 bytes to align the base; 0 when not
 * even 2 fit. */
static int conv_wgmma_params(const recipe_conv_plan *c, const recipe_hw *hw, int bm, int bn, recipe_params *k)
{
    int64_t stage = (int64_t)(bm + bn) * 64 * 2 * 2;
    int stages = (int)((hw->smem_per_block - 1024 - 64) / stage);
    if (stages > 4)
        stages = 4;
    if (stages < 2)
        return 0;
    memset(k, 0, sizeof *k);
    k->threads = 128 * (bm / 64 + 1);
    /* a stride-1 transposed convolution flipped (nhwc 2); a strided one in phases (1) */
    int nhwc = c->transposed && !recipe_conv_phases(c) ? 2 : 1;
    k->conv = (recipe_conv_params){ .bm = bm, .bn = bn, .wm = bm / 64, .wn = 1, .stages = stages,
                                    .prec = RECIPE_GEMM_3XF16, .min_blocks = 1, .nhwc = nhwc, .wgmma = 1 };
    return 1;
}

/* A WGMMA variant of bn columns (paired or not): 128 rows (two consumer warpgroups), or 64
 * where 128-row tiles would leave SMs idle; 0 when its stages do not fit. */
static int conv_wgmma_variant(const recipe_plan *p, const recipe_hw *hw, int bn, bool pair_w, recipe_params *k)
{
    const recipe_conv_plan *c = &p->conv;
    int64_t tiles128 = (c->m + 127) / 128 * ((c->gn + bn - 1) / bn);
    if (!conv_wgmma_params(c, hw, tiles128 >= hw->sms ? 128 : 64, bn, k))
        return 0;
    k->conv.pair_w = pair_w;
    return 1;
}

/* The WGMMA variants, at most max: COUT rounded up to 16 columns, at most 128 (wider: more
 * column tiles), its width phases paired or not as conv_pair_w says; where pairing could
 * apply, the other choice second (unpaired at the full width, or paired in 64-column tiles)
 * for the tuning to settle: the rule misjudged level 2 #74 (lab round 74, H100: unpaired
 * 0.549 ms, paired 0.615) and #91 (paired in 64 columns 4.034, unpaired at 128 4.439). */
static int conv_wgmma_variants(const recipe_plan *p, const recipe_hw *hw, recipe_params *out, int max)
{
    const recipe_conv_plan *c = &p->conv;
    int full = (int)((c->gn + 15) / 16 * 16);
    if (full > 128)
        full = 128;
    int bn = full;
    const bool pair_w = conv_pair_w(p, &bn);
    if (max < 1 || !conv_wgmma_variant(p, hw, bn, pair_w, &out[0]))
        return 0;
    if (max < 2 || !conv_may_pair_w(p) || !conv_wgmma_variant(p, hw, pair_w ? full : 64, !pair_w, &out[1]))
        return 1;
    return 2;
}

/* The list below made with room for at least 3 (its insertions need that much), then cut
 * to max. */
static int conv_sm80_variants(const recipe_plan *p, const recipe_hw *hw, recipe_params *out, int max)
{
    recipe_params all[RECIPE_MAX_VARIANTS];
    int room = max < 3 ? 3 : max > RECIPE_MAX_VARIANTS ? RECIPE_MAX_VARIANTS : max;
    int n = conv_tile_variants(p, hw, all, room);
    if (n > max)
        n = max;
    memcpy(out, all, (size_t)n * sizeof out[0]);
    return n;
}

/* As the direct kernel's tap_in (recipes/conv_direct.cu): the input coordinate that output
 * coordinate o of a transposed convolution reads through tap k along dim d, or -1. */
static int64_t direct_tap_in(const recipe_conv_plan *c, int d, int64_t o, int64_t k)
{
    int64_t t = o + c->pad[d] - k * c->dil[d];
    if (t < 0 || t % c->stride[d])
        return -1;
    return t / c->stride[d] < c->in[d] ? t / c->stride[d] : -1;
}

/* The products an output element of a transposed convolution takes, on average over the
 * output: a group's input channels times the taps that reach it (the pixels are a product
 * of the dims', so the mean is the product of each dim's mean count). */
double recipe_conv_direct_products(const recipe_conv_plan *c)
{
    double taps = 1.0;
    for (int d = 0; d < 3; d++) {
        int64_t hits = 0;
        for (int64_t o = 0; o < c->out[d]; o++)
            for (int64_t k = 0; k < c->k[d]; k++)
                hits += direct_tap_in(c, d, o, k) >= 0;
        taps *= c->out[d] > 0 ? (double)hits / (double)c->out[d] : 0.0;
    }
    return taps * (double)(c->cin / c->groups);
}

/*
 * The direct kernel where a strided transposed convolution's outputs take few products
 * (at most RECIPE_CONV_DIRECT_SECOND on average: first up to RECIPE_CONV_DIRECT_PRODUCTS,
 * level 1 #81 11.4, #75 20, the CIN-3 layers of level 2 #50, 60, 72, 89, 96 10; second,
 * after the WGMMA variants, up to the other: level 1 #79 48, level 2 #15 and #74 54):
 * where the implicit GEMM pads those products to tensor-core tiles. H100, session 29
 * (docs/perf.md): it won at 10-20 products (#81 1.98 ms against the WGMMA phases' 2.62,
 * #75 1.36 against the mma.sync phases' 3.47) and at 48 in 1D (#79 2.43 against 2.86),
 * lost at 54 (level 2 #15 1.54 against 0.78) and at 93-108 (#77 4.51 against 1.99, #73
 * 4.08 against 3.39: not offered; with session 36's staged stores and two pixels a thread
 * still 3.06 against 3.43 and eager's 2.08, lab round 69). Its channel block: the widest of
 * 32, 16, 8, 4 that divides a group's output channels and whose weights (ci x taps x (block
 * + 4) floats) take at most 96 KB, halved where a thread takes two pixels (below); pixel
 * blocks a CTA: 8, fewer where the grid would have under 8 CTAs an SM. Not with a reduction
 * over the channels after it, nor depthwise.
 */
static bool conv_direct_params(const recipe_conv_plan *c, const recipe_hw *hw, recipe_params *k)
{
    if (!recipe_conv_phases(c) || c->chanred || c->depthwise ||
        recipe_conv_direct_products(c) > RECIPE_CONV_DIRECT_SECOND)
        return false;
    int64_t cin_g = c->cin / c->groups, taps = c->k[0] * c->k[1] * c->k[2], plane = c->out[0] * c->out[1] * c->out[2];
    int co = 0;
    for (int b = 32; b >= 4 && !co; b /= 2)
        if (c->gn % b == 0 && cin_g * taps * (b + 4) * 4 <= 96 * 1024)
            co = b;
    if (!co || c->n * c->groups * (c->gn / co) >= 65536)
        return false;
    /* stores through a shared tile, a CTA two chunks of 32 x SW outputs (lab round 60, H100:
     * #81 0.575 ms against 1.980 with 128 threads storing SW floats apart; 64 x SW beat 32 x
     * SW on #81, #79 and #75), where the tile and the weights fit; else the plain stores */
    int64_t sw = c->stride[2];
    bool stage = 64 * sw <= 1024 && (cin_g * taps * (co + 4) + co * 64 * sw) * 4 <= 200 * 1024;
    const int threads = stage ? (int)(64 * sw) : 128;
    /* two pixels a thread, a chunk (32 x SW outputs) apart, and half the channel block, where
     * a row holds two chunks (lab round 70, H100: #75 0.559 ms against 0.581, #79 1.469
     * against 1.611, #81 0.517 against 0.597; two pixels with the whole block lost on #75 and
     * #81): the accumulators a thread the same, each float4 of weights read from shared
     * memory serving two pixels, the block's weights half the shared memory */
    int pix = 1;
    if (stage && co >= 8 && c->out[2] >= 2 * 32 * sw && c->n * c->groups * (c->gn / (co / 2)) < 65536)
        pix = 2, co /= 2;
    const int64_t plane_j = (plane + pix - 1) / pix; /* about the threads a plane */
    int iters = 8;
    while (iters > 1 && (plane_j + threads * iters - 1) / (threads * iters) * c->n * c->groups * (c->gn / co) < 8LL * hw->sms)
        iters /= 2;
    memset(k, 0, sizeof *k);
    k->threads = threads;
    k->conv.dw_threads = threads;
    k->conv.stages = iters;
    k->conv.direct_co = co;
    k->conv.direct_stage = stage;
    k->conv.direct_pix = pix;
    return true;
}

/* ================================================================== pointwise as a GEMM */

bool recipe_conv_pointwise(const recipe_plan *p)
{
    const recipe_conv_plan *c = &p->conv;
    if (c->groups > 1 || c->depthwise || c->chanred || c->spatred || c->pf_mask)
        return false; /* (the GEMM's template does not fold) */
    for (int d = 0; d < 3; d++)
        if (c->k[d] != 1 || c->stride[d] != 1 || c->pad[d] != 0 || c->opad[d] != 0 || c->out[d] != c->in[d])
            return false;
    /* the operands as they lie (gemm_tc.cu reads them with the spec's strides, which
     * the GEMM's leading and batch strides below assume contiguous) */
    return c->cout > 1 && c->out[0] * c->out[1] * c->out[2] > 1 && contiguous_strides(&p->inputs[c->x]) &&
           contiguous_strides(&p->inputs[c->w]);
}

int recipe_conv_as_gemm(const recipe_plan *p, recipe_plan *gp)
{
    if (p->family != RECIPE_CONV || !recipe_conv_pointwise(p))
        return -1;
    const recipe_conv_plan *c = &p->conv;
    *gp = *p; /* shallow: the nodes, inputs and epilogue are the convolution's */
    gp->family = RECIPE_GEMM;
    gp->staged = NULL;
    gp->r = 0;
    gp->root = -1;
    recipe_gemm_plan *g = &gp->gemm;
    memset(g, 0, sizeof *g);
    snprintf(g->node, sizeof g->node, "%s", c->node);
    snprintf(g->op, sizeof g->op, "%s", "conv1x1");
    int64_t pixels = c->out[0] * c->out[1] * c->out[2];
    g->a = c->w;
    g->b = c->x;
    g->bias = -1;
    g->a_kmajor = !c->transposed; /* w[co][ci]; transposed: w[ci][co] */
    g->b_kmajor = false;          /* x[b][ci][pixel] */
    g->batch = c->n;
    g->m = c->cout;
    g->n = pixels;
    g->k = c->cin;
    g->lda = c->transposed ? c->cout : c->cin;
    g->ldb = pixels;
    g->a_bstride = 0;
    g->b_bstride = c->cin * pixels;
    g->n_last = true;
    g->acc_node = c->acc_node;
    recipe_tensor o = conv_output(c);
    g->ndim = o.ndim;
    memcpy(g->shape, o.shape, sizeof g->shape);
    for (int i = 0; i < p->n_inputs; i++)
        g->in[i] = c->kind[i] == RC_OPERAND ? RG_OPERAND : c->kind[i] == RC_FULL ? RG_FULL
                 : c->kind[i] == RC_SCALAR ? RG_SCALAR : c->kind[i] == RC_CHAN ? RG_MROW : RG_UNUSED;
    return 0;
}

/*
 * A pointwise convolution's variants: the GEMM's first three (recipes/gemm_tc.cu, no
 * gather), then the implicit GEMM's. In NCHW the 1 x 1 convolution's implicit GEMM copies x
 * 4 bytes at a time (M along the pixels is the K-major A, which x is not) or channels-last
 * through the workspace first (a read and a write of x more): level 1 #87 ran 8.3-8.9 ms
 * against eager's 4.6 on the H100 (docs/perf.md, session 27); judged side by side in
 * session 30 (H100) the GEMM took 5.209 ms, the WGMMA implicit GEMM 7.829, so `--variants 2`
 * now judges two GEMM tiles.
 */
static int pointwise_variants(const recipe_plan *p, const recipe_hw *hw, recipe_params *out, int max)
{
    recipe_plan gp;
    recipe_params gv[RECIPE_MAX_VARIANTS], tv[RECIPE_MAX_VARIANTS];
    int ng = 0;
    if (recipe_conv_as_gemm(p, &gp) == 0)
        ng = recipe_gemm_variants(&gp, hw, gv, RECIPE_MAX_VARIANTS);
    int nt = recipe_conv_variants_tiled(p, hw, tv, RECIPE_MAX_VARIANTS);
    int n = 0, ig = 0, it = 0;
    for (int slot = 0; n < max && (ig < ng || it < nt); slot++) {
        bool gemm = ig < ng && (slot < 3 || it >= nt);
        if (gemm) {
            out[n] = gv[ig++];
            out[n++].conv.as_gemm = 1;
        } else {
            out[n++] = tv[it++];
        }
    }
    return n;
}

/* A mean over the pixels folded (recipes/conv_mean.cu): the CTA size of the sums. */
static int fold_variants(const recipe_hw *hw, recipe_params *out, int max)
{
    static const int threads[] = { 256, 512 };
    int n = 0;
    for (size_t i = 0; i < sizeof threads / sizeof threads[0] && n < max; i++) {
        if (threads[i] > hw->max_threads_per_sm)
            continue;
        memset(&out[n], 0, sizeof out[n]);
        out[n].threads = threads[i];
        out[n].conv.dw_threads = threads[i];
        out[n++].conv.fold = 1;
    }
    return n;
}

/* Variants: the direct kernel first or second where it is offered (see above); on Hopper
 * the WGMMA kernel where it fits, then the mma.sync ones below. */
/*
 * Depthwise (recipes/conv_dw.cu): a thread sums `rows` output rows down one column, each
 * input row loaded once a thread (at stride 1 a row is read by KH output rows: the plain
 * form, rows 1, loads it KH times, from L1 or L2). 8 rows first, then 4, then the plain form,
 * at 256 threads; fewer rows where the items would not fill the GPU 8 CTAs an SM, or the
 * filter and the sums would not fit the registers (taps + rows + KW <= 96).
 */
static int depthwise_variants(const recipe_conv_plan *c, const recipe_hw *hw, recipe_params *out, int max)
{
    static const int rows[] = { 8, 4, 1 };
    const int threads = 256 <= hw->max_threads_per_sm ? 256 : 128;
    /* (D, H, W), leading 1s below 3 dims */
    const int64_t od = c->out[0], oh = c->out[1], ow = c->out[2];
    const int64_t taps = c->k[0] * c->k[1] * c->k[2], kw = c->k[2];
    int n = 0;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0] && n < max; i++) {
        int r = rows[i];
        if (r > 1 && (r > oh || taps + r + kw > 96 ||
                      c->n * c->cout * od * ((oh + r - 1) / r) * ow < 8LL * hw->sms * threads))
            continue;
        memset(&out[n], 0, sizeof out[n]);
        out[n].threads = threads;
        out[n].conv.dw_threads = threads;
        out[n++].conv.dw_rows = r;
    }
    return n;
}

int recipe_conv_variants(const recipe_plan *p, const recipe_hw *hw, recipe_params *out, int max)
{
    recipe_params direct;
    if (p->conv.spatred)
        return fold_variants(hw, out, max);
    if (recipe_conv_pointwise(p))
        return pointwise_variants(p, hw, out, max);
    if (max < 2 || !conv_direct_params(&p->conv, hw, &direct))
        return recipe_conv_variants_tiled(p, hw, out, max);
    /* first where the outputs take few products, else after the WGMMA variants (at least
     * one): level 1 #79 and level 2 #74, #15 ran fastest in WGMMA in their last sweeps, the
     * direct kernel second */
    int n = recipe_conv_variants_tiled(p, hw, out, max - 1), at = 0;
    if (recipe_conv_direct_products(&p->conv) > RECIPE_CONV_DIRECT_PRODUCTS)
        while (at < n && (at == 0 || out[at].conv.wgmma))
            at++;
    memmove(&out[at + 1], &out[at], (size_t)(n - at) * sizeof out[0]);
    out[at] = direct;
    return n + 1;
}

int recipe_conv_variants_tiled(const recipe_plan *p, const recipe_hw *hw, recipe_params *out, int max)
{
    int m = max >= 2 && conv_wgmma_fits(&p->conv, hw) ? conv_wgmma_variants(p, hw, out, max - 1) : 0;
    return m + conv_sm80_variants(p, hw, out + m, max - m);
}

/*
 * The mma.sync kernels (SM80-class). Pruning: a tile wider than 32 and at least twice
 * COUT rounded up to 32 is dropped (half of its columns would be padding), and so is one
 * whose shared memory (4 bytes x 32 x (BM + BN) x stages) passes 227 KB or whose pixel
 * tiles are fewer than the SMs (unless nothing else is left). The first is the 128 x 128
 * tile of recipes/gemm_tc.cu's first variant (or 128 x 64 for COUT <= 64; 256 x 64 for a
 * transposed convolution); each 3xTF32 tile is
 * followed by others; the plain TF32 copy of the first comes last (it may fail an fp32
 * tolerance of 1e-4: it did on 57 and level 2 #5, lab round 20).
 */
static int conv_tile_variants(const recipe_plan *p, const recipe_hw *hw, recipe_params *out, int max)
{
    static const recipe_conv_params cand[] = { /* 3xTF32, NCHW */
        { .bm = 128, .bn = 128, .wm = 2, .wn = 4, .stages = 3, .min_blocks = 1 },
        { .bm = 128, .bn = 64, .wm = 4, .wn = 2, .stages = 3, .min_blocks = 1 },
        { .bm = 128, .bn = 64, .wm = 4, .wn = 2, .stages = 4, .min_blocks = 1 },
        { .bm = 64, .bn = 64, .wm = 2, .wn = 2, .stages = 4, .min_blocks = 2 },
        { .bm = 256, .bn = 64, .wm = 4, .wn = 2, .stages = 3, .min_blocks = 1 },
        { .bm = 128, .bn = 32, .wm = 4, .wn = 1, .stages = 4, .min_blocks = 2 },
        { .bm = 64, .bn = 128, .wm = 2, .wn = 4, .stages = 3, .min_blocks = 1 },
    };
    const recipe_conv_plan *c = &p->conv;
    int64_t cout32 = (c->gn + 31) / 32 * 32;
    int n = 0;
    if (c->depthwise)
        return depthwise_variants(c, hw, out, max);
    for (int pass = 0; pass < 2 && n == 0; pass++) {
        for (size_t i = 0; i < sizeof cand / sizeof cand[0] && n < max; i++) {
            const recipe_conv_params *v = &cand[i];
            int64_t smem = 4LL * 32 * (v->bm + v->bn) * v->stages;
            int64_t tiles_m = (c->m + v->bm - 1) / v->bm;
            if (pass == 0 && ((v->bn > 32 && v->bn >= 2 * cout32) || tiles_m < hw->sms))
                continue;
            if (smem > 227 * 1024 || 32 * v->wm * v->wn > hw->max_threads_per_sm)
                continue;
            if (c->chanred && v->bn < c->cout)
                continue; /* a reduction over the channels: every channel in the tile */
            recipe_params k;
            memset(&k, 0, sizeof k);
            k.threads = 32 * v->wm * v->wn;
            k.conv = *v;
            out[n++] = k;
        }
    }
    /* transposed: the 256 x 64 tile first where it is offered. H200 (docs/perf.md, lab
     * round 20): 57 (stride 1) 17.1 ms against 128 x 64's 20.9, level 2 #5 (stride 2)
     * 29.1 against 34.0; the other tiles slower still */
    for (int i = 1; c->transposed && i < n; i++)
        if (out[i].conv.bm == 256 && out[i].conv.bn == 64) {
            recipe_params k = out[i];
            memmove(&out[1], &out[0], (size_t)i * sizeof out[0]);
            out[0] = k;
            break;
        }
    /* grouped with at most 16 output channels a group (level 1 #72: 8, #75: 16): a 16-wide
     * tile first (a 32-wide one multiplies half or more zero columns). H200, 12-05 03:26:
     * #72 2.395x eager against 2.177x with the 32-wide tile, #75 1.611x against 1.214x.
     * Grouped plans take neither channels-last nor the flipped form: the tail below only
     * adds the plain TF32 copy of this first one. */
    if (c->groups > 1 && c->gn <= 16 && n > 0) {
        static const recipe_conv_params narrow = { .bm = 128, .bn = 16, .wm = 4, .wn = 1, .stages = 4, .min_blocks = 2 };
        if (n >= max - 1)
            n = max - 2;
        memmove(&out[1], &out[0], (size_t)n * sizeof out[0]);
        memset(&out[0], 0, sizeof out[0]);
        out[0].threads = 32 * narrow.wm * narrow.wn;
        out[0].conv = narrow;
        n++;
    }
    n = interleave_nhwc(c, out, n, max - 1);
    /* the plain TF32 copy of the first (a stride-1 transposed convolution's: of the flipped
     * form, channels-last; H100, lab round 50: the transposed form's TF32 took 7.05 ms on
     * level 2 #42, the flipped form's 3xFP16 11.0, TF32's one MMA a product against three) */
    if (n > 0 && n < max) {
        recipe_params k = out[0];
        k.conv.prec = RECIPE_GEMM_TF32;
        out[n++] = k;
    }
    if (n >= 2 && recipe_error_shrink(p, 1.0) >= RECIPE_TF32_SHRINK) /* a channel mean: TF32 second, 2xFP16 third */
        n = recipe_precision_gambles(out, n, max, true);
    return n;
}

const char *recipe_conv_template(const recipe_plan *p, const recipe_params *k)
{
    if (k->conv.as_gemm)
        return recipe_gemm_template(p, k);
    if (k->conv.fold)
        return "conv_mean.cu";
    return k->conv.direct_co > 0 ? "conv_direct.cu" : k->conv.dw_threads > 0 ? "conv_dw.cu" : "conv_tc.cu";
}

void recipe_conv_params_format(const recipe_params *k, strbuf *out)
{
    const recipe_conv_params *v = &k->conv;
    if (v->as_gemm) {
        strbuf_adds(out, "conv as ");
        recipe_gemm_params_format(k, out);
        return;
    }
    if (v->fold) {
        strbuf_addf(out, "conv folded into cell sums (its mean or sum over the pixels) threads=%d", v->dw_threads);
        return;
    }
    if (v->direct_co) {
        strbuf_addf(out, "conv direct threads=%d channels=%d pixel-blocks=%d%s%s", v->dw_threads, v->direct_co,
                    v->stages, v->direct_stage ? " staged-stores" : "", v->direct_pix == 2 ? " pixels=2" : "");
        return;
    }
    if (v->dw_threads) {
        strbuf_addf(out, "conv depthwise direct threads=%d rows=%d", v->dw_threads, v->dw_rows > 0 ? v->dw_rows : 1);
        return;
    }
    if (v->wgmma) {
        strbuf_addf(out, "conv wgmma%s tile=%dx%dx64 warpgroups=1+%d stages=%d %s%s",
                    v->nhwc == 2 ? " flipped channels-last" : " channels-last", v->bm, v->bn, v->bm / 64,
                    v->stages, recipe_prec_name(v->prec), v->pair_w ? " width-phases-paired" : "");
        return;
    }
    strbuf_addf(out, "conv%s tile=%dx%dx32 warps=%dx%d stages=%d %s min_blocks=%d",
                v->nhwc == 2 ? " flipped channels-last" : v->nhwc ? " channels-last" : "", v->bm,
                v->bn, v->wm, v->wn, v->stages,
                recipe_prec_name(v->prec), v->min_blocks);
}

/* ================================================================== generation */

static void emit_shape(strbuf *sb, const recipe_tensor *t)
{
    strbuf_addc(sb, '{');
    for (int d = 0; d < t->ndim; d++)
        strbuf_addf(sb, "%s%lld", d ? ", " : "", (long long)t->shape[d]);
    if (t->ndim == 0)
        strbuf_adds(sb, "1");
    strbuf_addc(sb, '}');
}

/* Sub-pixel phases (recipes/conv_tc.cu CGR_PHASES): a transposed convolution with a
 * stride above 1 somewhere (a phase's taps are every S/gcd(S, D)-th one; with a stride and
 * a dilation sharing a factor some phases have none). */
int recipe_conv_phases(const recipe_conv_plan *c)
{
    if (!c->transposed || c->depthwise)
        return 0;
    bool strided = false;
    for (int d = 0; d < 3; d++)
        strided |= c->stride[d] > 1;
    return strided;
}

/* The longest K a tile's accumulator is chained over: a phase's (its taps only: level 2
 * #78's 5x5x5 stride-2 layer chains at most 27 x 32 of its 4000) where the kernel runs in
 * phases, else all of K. */
static int64_t conv_chain_k(const recipe_conv_plan *c, bool flip)
{
    if (flip || !recipe_conv_phases(c))
        return c->gk;
    int64_t most = 0;
    for (int64_t r = 0; r < recipe_conv_phase_count(c); r++)
        if (recipe_conv_phase_k(c, r) > most)
            most = recipe_conv_phase_k(c, r);
    return most;
}

/* A pointwise convolution as its GEMM: recipes/gemm_tc.cu's (or gemm_wgmma.cu's)
 * parameters, and which inputs are x and the weight (CGR_PW_*: the host emulator's
 * reference convolves them from their own shapes, not from the GEMM's strides). */
static void emit_as_gemm(const recipe_plan *p, const recipe_params *k, strbuf *sb)
{
    recipe_plan gp;
    if (recipe_conv_as_gemm(p, &gp))
        BUG("a GEMM variant for a convolution that is not pointwise");
    recipe_gemm_emit_params(&gp, k, sb);
    strbuf_addf(sb, "#define CGR_PW_X %d\n#define CGR_PW_W %d\n#define CGR_PW_TRANSPOSED %d\n", p->conv.x,
                p->conv.w, p->conv.transposed);
}

/* The geometry's macros, prefix then I, K, O, S, P, D and the dim (D, H, W): CGR_ID ... */
static void emit_geometry(const recipe_conv_plan *g, const char *prefix, strbuf *sb)
{
    static const char dn[] = "DHW";
    for (int d = 0; d < 3; d++) {
        const int64_t v[] = { g->in[d], g->k[d], g->out[d], g->stride[d], g->pad[d], g->dil[d] };
        for (int j = 0; j < 6; j++)
            strbuf_addf(sb, "#define %s%c%c %lld\n", prefix, "IKOSPD"[j], dn[d], (long long)v[j]);
    }
}

/* A mean or sum over some dims folded (recipes/conv_fold.cuh): the convolution's own
 * geometry, and the epilogue: pre (affine in the convolution, before the reduction) of the
 * mean (the fold's: 1/size is in the folded weight), times the size for a sum, then what
 * follows the reduction. */
static void emit_prefold(const recipe_plan *p, strbuf *sb)
{
    const recipe_conv_plan *c = &p->conv;
    strbuf_addf(sb, "#define CGR_PREFOLD 1\n#define CGR_PF_MASK %d\n#define CGR_PF_MEAN %d\n#define CGR_PF_CIN %lld\n",
                c->pf_mask, c->pf_red == 1, (long long)c->pf.cin);
    recipe_conv_plan own = own_geometry(c);
    emit_geometry(&own, "CGR_PF_", sb);
    recipe_emit_expr(p, p->root, "cgr_pf_pre", "float r, const float *x", sb);
    if (p->epi >= 0)
        recipe_emit_expr(p, p->epi, "cgr_pf_post", "float r, const float *x", sb);
    else
        strbuf_adds(sb, "__device__ __forceinline__ float cgr_pf_post(float r, const float *x) { (void)x; return r; }\n");
    /* the fold computes the mean: a sum is the folded outputs' count times pre's value */
    int64_t count = 1;
    for (int d = 0; d < 3; d++)
        count *= c->pf_mask >> d & 1 ? c->pf.out[d] : 1;
    if (c->pf_red == 1)
        strbuf_adds(sb, "__device__ __forceinline__ float cgr_epi(float r, const float *x) { return cgr_pf_post(cgr_pf_pre(r, x), x); }\n");
    else
        strbuf_addf(sb, "__device__ __forceinline__ float cgr_epi(float r, const float *x) { return cgr_pf_post(cgr_pf_pre(r, x) * %lld.f, x); }\n",
                    (long long)count);
}

void recipe_conv_emit_params(const recipe_plan *p, const recipe_params *k, strbuf *sb)
{
    const recipe_conv_plan *c = &p->conv;
    const recipe_conv_params *v = &k->conv;
    if (v->as_gemm) {
        emit_as_gemm(p, k, sb);
        return;
    }
    static const char *kinds[] = { "CGR_CV_UNUSED", "CGR_CV_OPERAND", "CGR_CV_FULL",
                                   "CGR_CV_SCALAR", "CGR_CV_CHAN" };
    strbuf_adds(sb, "#define CGR_GENERATED 1\n");
    strbuf_addf(sb, "#define CGR_NB %lld\n#define CGR_CIN %lld\n#define CGR_COUT %lld\n",
                (long long)c->n, (long long)c->cin, (long long)c->cout);
    /* a stride-1 transposed convolution channels-last: the flipped convolution */
    bool flip = v->nhwc == 2;
    recipe_conv_plan f = flip ? as_forward(c) : *c;
    emit_geometry(&f, "CGR_", sb);
    strbuf_addf(sb, "#define CGR_X %d\n#define CGR_W %d\n", c->x, c->w);
    if (c->groups > 1)
        strbuf_addf(sb, "#define CGR_GROUPS %lld\n", (long long)c->groups);
    if (flip)
        strbuf_adds(sb, "#define CGR_FLIP 1\n");
    else if (c->transposed)
        strbuf_addf(sb, "#define CGR_TRANSPOSED 1\n#define CGR_PHASES %d\n", recipe_conv_phases(c));
    if (v->nhwc)
        strbuf_adds(sb, "#define CGR_NHWC 1\n");
    if (v->wgmma)
        strbuf_addf(sb, "#define CGR_WGMMA 1\n%s", v->pair_w ? "#define CGR_CONV_PAIR_W 1\n" : "");
    if (v->direct_co)
        strbuf_addf(sb, "#define CGR_CO_T %d\n#define CGR_ITERS %d\n#define CGR_DIRECT_STAGE %d\n#define CGR_DIRECT_PIX %d\n",
                    v->direct_co, v->stages, v->direct_stage, v->direct_pix > 1 ? v->direct_pix : 1);
    if (v->dw_threads)
        strbuf_addf(sb, "#define CGR_THREADS %d\n", v->dw_threads);
    else
        strbuf_addf(sb, "#define CGR_BM %d\n#define CGR_BN %d\n#define CGR_BK 32\n#define CGR_WM %d\n"
                    "#define CGR_WN %d\n#define CGR_STAGES %d\n#define CGR_MINB %d\n#define CGR_PREC %d\n",
                v->bm, v->bn, v->wm, v->wn, v->stages, v->min_blocks, v->prec);
    if (v->dw_rows)
        strbuf_addf(sb, "#define CGR_DW_ROWS %d\n", v->dw_rows);
    if (!v->dw_threads)
        strbuf_addf(sb, "#define CGR_PROMOTE %d\n", recipe_tf32_promote(conv_chain_k(c, flip)));
    strbuf_addf(sb, "#define CGR_NIN %d\n#define CGR_INPUTS(X)", p->n_inputs);
    for (int i = 0; i < p->n_inputs; i++)
        strbuf_addf(sb, " \\\n    X(%d, %s)", i, kinds[c->kind[i]]);
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
    if (c->chanred) {
        strbuf_addf(sb, "#define CGR_CHANRED %d\n", c->chanred);
        recipe_emit_expr(p, p->root, "cgr_pre", "float r, const float *x", sb);
    } else if (c->spatred) {
        strbuf_addf(sb, "#define CGR_SPATRED %d\n", c->spatred);
        recipe_emit_expr(p, p->root, "cgr_pre", "float r, const float *x", sb);
    } else if (c->pf_mask) {
        emit_prefold(p, sb);
        return;
    }
    if (p->epi >= 0)
        recipe_emit_expr(p, p->epi, "cgr_epi", "float r, const float *x", sb);
    else
        strbuf_adds(sb, "__device__ __forceinline__ float cgr_epi(float r, const float *x) { (void)x; return r; }\n");
}
