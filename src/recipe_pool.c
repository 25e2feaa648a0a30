/*
 * recipe_pool.c: the POOL family: max and average pooling over the last 1-3 dims
 * (nn.MaxPool1d/2d/3d, nn.AvgPool1d/2d/3d, nn.AdaptiveAvgPool/AdaptiveMaxPool whose
 * output divides the input, and their functional forms), as PyTorch computes them.
 *
 * DESIGN: recipe.c walks the graph; a call it does not know comes here first
 * (recipe_pool_parse): the call's name says the kind and the dims, its arguments (or the
 * module's repr) the window. The pooled value is then the plan's accumulator leaf, as a
 * reduction's is, so a prologue (the operand) and an epilogue (constants on the pooled
 * value) come for free. recipe_pool_finish() fills the sizes from the spec and checks the
 * output shape against ATen's formula; recipe_pool_emit() and recipe_pool_variants() feed
 * recipes/pool.cu, whose compile-time geometry geom() below mirrors line by line.
 *
 * Where the spec cannot say: AvgPoolNd's repr prints kernel_size, stride and padding
 * only, so ceil_mode is decided by the output's shape (the two differ in shape whenever
 * they differ at all) and count_include_pad / divisor_override are taken as PyTorch's
 * defaults (True / None). That is only a guess when padding > 0; describe says so.
 */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "recipe_pool.h"
#include "util.h"

/* ================================================================== parsing */

enum pool_kind { PK_MAX, PK_AVG, PK_AMAX, PK_AAVG };

static int not_covered(strbuf *why, const char *fmt, const char *arg)
{
    strbuf_reset(why);
    strbuf_adds(why, "not covered: ");
    strbuf_addf(why, fmt, arg);
    return 1;
}

/* "MaxPool2d", "max_pool2d", "adaptive_avg_pool3d", "max_pool1d_with_indices": the kind
 * and the dims; -2 when the name is no pooling this family knows. */
static int kind_of(const char *name, enum pool_kind *kind, int *nsp, bool *with_indices)
{
    char n[64];
    size_t j = 0;
    for (size_t i = 0; name[i] && j + 1 < sizeof n; i++)
        if (name[i] != '_')
            n[j++] = (char)tolower((unsigned char)name[i]);
    n[j] = '\0';
    static const struct { const char *prefix; enum pool_kind kind; } kinds[] = {
        { "adaptiveavgpool", PK_AAVG }, { "adaptivemaxpool", PK_AMAX },
        { "avgpool", PK_AVG }, { "maxpool", PK_MAX },
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        size_t len = strlen(kinds[i].prefix);
        if (strncmp(n, kinds[i].prefix, len))
            continue;
        const char *rest = n + len;
        if (rest[0] < '1' || rest[0] > '3' || rest[1] != 'd')
            return -2;
        *kind = kinds[i].kind;
        *nsp = rest[0] - '0';
        *with_indices = !strcmp(rest + 2, "withindices");
        return rest[2] && !*with_indices ? -2 : 0;
    }
    return -2;
}

static const json_t *arg_at(const json_t *node, size_t pos, const char *kw)
{
    const json_t *args = json_object_get(node, "args");
    if (json_is_array(args) && pos < json_array_size(args))
        return json_array_get(args, pos);
    const json_t *kwargs = json_object_get(node, "kwargs");
    return kw && json_is_object(kwargs) ? json_object_get(kwargs, kw) : NULL;
}

/*
 * One size argument: an int (every dim), a list of nsp ints (or of one), null or an empty
 * list (torch.max_pool2d's stride=[]: the default). v is in the pooled dims' order; a null
 * entry (adaptive output_size) gives -1. Returns 0 (given: whether a value was there) or
 * 1 not covered.
 */
static int json_sizes(const json_t *a, int nsp, int64_t *v, bool *given, const char *what,
                      strbuf *why)
{
    *given = false;
    if (!a || json_is_null(a) || (json_is_array(a) && json_array_size(a) == 0))
        return 0;
    if (json_is_integer(a)) {
        for (int d = 0; d < nsp; d++)
            v[d] = json_integer_value(a);
        *given = true;
        return 0;
    }
    size_t n = json_is_array(a) ? json_array_size(a) : 0;
    if (n != 1 && n != (size_t)nsp)
        return not_covered(why, "a pooling whose %s is not an int or a tuple of the pooled dims", what);
    for (int d = 0; d < nsp; d++) {
        const json_t *e = json_array_get(a, n == 1 ? 0 : (size_t)d);
        if (json_is_null(e)) {
            v[d] = -1;
        } else if (json_is_integer(e)) {
            v[d] = json_integer_value(e);
        } else {
            return not_covered(why, "a pooling whose %s is computed (not a constant)", what);
        }
    }
    *given = true;
    return 0;
}

/* A bool argument: 0 (absent: dflt), 1 not covered when it is not a constant. */
static int json_flag(const json_t *a, bool dflt, bool *out, const char *what, strbuf *why)
{
    *out = dflt;
    if (!a || json_is_null(a))
        return 0;
    if (!json_is_boolean(a) && !json_is_integer(a))
        return not_covered(why, "a pooling whose %s is not a constant", what);
    *out = json_is_boolean(a) ? json_is_true(a) : json_integer_value(a) != 0;
    return 0;
}

/*
 * "key=" in a module's repr: "kernel_size=3", "stride=(2, 1)", "kernel_size=(8,)",
 * "output_size=(None, 7)". Returns 0 when the key is absent, 1 when v holds nsp values
 * (an int repeated; None as -1), -1 when what follows is not sizes.
 */
static int repr_sizes(const char *repr, const char *key, int nsp, int64_t *v)
{
    const char *s = repr ? strstr(repr, key) : NULL;
    if (!s)
        return 0;
    s += strlen(key);
    bool tuple = *s == '(';
    if (tuple)
        s++;
    int64_t got[3];
    int n = 0;
    for (;;) {
        while (*s == ' ')
            s++;
        if (tuple && *s == ')')
            break;
        if (n == 3)
            return -1;
        if (!strncmp(s, "None", 4)) {
            got[n++] = -1;
            s += 4;
        } else {
            char *end;
            long long x = strtoll(s, &end, 10);
            if (end == s)
                return -1;
            got[n++] = x;
            s = end;
        }
        if (!tuple)
            break;
        while (*s == ' ')
            s++;
        if (*s == ',')
            s++;
        else if (*s != ')')
            return -1;
    }
    if (n != 1 && n != nsp)
        return -1;
    for (int d = 0; d < nsp; d++)
        v[d] = got[n == 1 ? 0 : d];
    return 1;
}

/* "key=True" / "key=False": 0 absent, 1 found (*out set). */
static int repr_flag(const char *repr, const char *key, bool *out)
{
    const char *s = repr ? strstr(repr, key) : NULL;
    if (!s)
        return 0;
    *out = !strncmp(s + strlen(key), "True", 4);
    return 1;
}

/* Stores the pooled dims' values (v[0..nsp)) into the last nsp of the 3-D array a. */
static void put3(int64_t *a, const int64_t *v, int nsp)
{
    for (int d = 0; d < nsp; d++)
        a[3 - nsp + d] = v[d];
}

int recipe_pool_parse(const char *name, const json_t *node, const char *repr, bool is_module,
                      recipe_pool *q, strbuf *why)
{
    enum pool_kind kind;
    int nsp;
    bool with_indices;
    if (kind_of(name, &kind, &nsp, &with_indices))
        return -2;
    if (with_indices)
        return not_covered(why, "%s returns indices too (two outputs)", name);
    memset(q, 0, sizeof *q);
    q->nsp = nsp;
    q->is_max = kind == PK_MAX || kind == PK_AMAX;
    q->adaptive = kind == PK_AMAX || kind == PK_AAVG;
    q->count_include_pad = true;
    q->cip_known = true;
    q->ceil_known = true;
    for (int d = 0; d < 3; d++) {
        q->k[d] = q->s[d] = q->dil[d] = 1;
        q->in[d] = q->out[d] = q->want_out[d] = 1;
    }
    int64_t k[3], s[3], pad[3] = { 0, 0, 0 }, dil[3] = { 1, 1, 1 };
    bool given, s_given = false, indices = false;

    if (q->adaptive) {
        int64_t o[3];
        if (is_module) {
            if (repr_sizes(repr, "output_size=", nsp, o) != 1)
                return not_covered(why, "%s module without a readable output_size in its repr", name);
        } else {
            if (json_sizes(arg_at(node, 1, "output_size"), nsp, o, &given, "output_size", why))
                return 1;
            if (!given)
                return not_covered(why, "%s without an output_size", name);
            if (json_flag(arg_at(node, 2, "return_indices"), false, &indices, "return_indices", why))
                return 1;
        }
        if (indices)
            return not_covered(why, "%s with return_indices=True (two outputs)", name);
        put3(q->want_out, o, nsp);
        return 0;
    }

    if (is_module) {
        int rk = repr_sizes(repr, "kernel_size=", nsp, k);
        int rs = repr_sizes(repr, "stride=", nsp, s);
        int rp = repr_sizes(repr, "padding=", nsp, pad);
        int rd = repr_sizes(repr, "dilation=", nsp, dil);
        if (rk != 1 || rs < 0 || rp < 0 || rd < 0)
            return not_covered(why, "%s module whose repr does not give its window as integers", name);
        s_given = rs == 1;
        q->ceil_known = repr_flag(repr, "ceil_mode=", &q->ceil_mode) == 1;
        q->cip_known = repr_flag(repr, "count_include_pad=", &q->count_include_pad) == 1;
        if (!q->cip_known)
            q->count_include_pad = true;
        int64_t dv[3];
        if (repr_sizes(repr, "divisor_override=", nsp, dv) == 1 && dv[0] > 0)
            q->divisor = dv[0];
    } else {
        bool max = q->is_max;
        if (json_sizes(arg_at(node, 1, "kernel_size"), nsp, k, &given, "kernel_size", why))
            return 1;
        if (!given)
            return not_covered(why, "%s without a kernel_size", name);
        if (json_sizes(arg_at(node, 2, "stride"), nsp, s, &s_given, "stride", why) ||
            json_sizes(arg_at(node, 3, "padding"), nsp, pad, &given, "padding", why))
            return 1;
        if (max) {
            if (json_sizes(arg_at(node, 4, "dilation"), nsp, dil, &given, "dilation", why) ||
                json_flag(arg_at(node, 5, "ceil_mode"), false, &q->ceil_mode, "ceil_mode", why) ||
                json_flag(arg_at(node, 6, "return_indices"), false, &indices, "return_indices", why))
                return 1;
            if (indices)
                return not_covered(why, "%s with return_indices=True (two outputs)", name);
        } else {
            if (json_flag(arg_at(node, 4, "ceil_mode"), false, &q->ceil_mode, "ceil_mode", why) ||
                json_flag(arg_at(node, 5, "count_include_pad"), true, &q->count_include_pad,
                          "count_include_pad", why))
                return 1;
            const json_t *dv = arg_at(node, 6, "divisor_override");
            if (dv && !json_is_null(dv)) {
                if (!json_is_integer(dv) || json_integer_value(dv) <= 0)
                    return not_covered(why, "%s with a divisor_override that is not a positive int", name);
                q->divisor = json_integer_value(dv);
            }
        }
    }
    if (!s_given)
        memcpy(s, k, sizeof s);
    for (int d = 0; d < nsp; d++) {
        if (k[d] < 1 || s[d] < 1 || pad[d] < 0 || dil[d] < 1)
            return not_covered(why, "%s with a window, stride, padding or dilation out of range", name);
        if (pad[d] > k[d] / 2)
            return not_covered(why, "%s with padding over half the window (PyTorch refuses it)", name);
    }
    put3(q->k, k, nsp);
    put3(q->s, s, nsp);
    put3(q->pad, pad, nsp);
    put3(q->dil, dil, nsp);
    return 0;
}

/* ================================================================== sizes */

int64_t recipe_pool_out_size(int64_t in, int64_t k, int64_t s, int64_t pad, int64_t dil,
                             bool ceil_mode)
{
    int64_t num = in + 2 * pad - dil * (k - 1) - 1 + (ceil_mode ? s - 1 : 0);
    /* ATen's div_rtn: rounds towards minus infinity */
    int64_t q = num / s;
    if (num % s != 0 && num < 0)
        q--;
    int64_t out = q + 1;
    /* ensure that the last pooling starts inside the image (ATen) */
    if (ceil_mode && (out - 1) * s >= in + pad)
        out--;
    return out;
}

static const char *dims_text(const int64_t *v, int nsp, char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int d = 3 - nsp; d < 3 && n < size; d++)
        n += (size_t)snprintf(buf + n, size - n, "%s%lld", d > 3 - nsp ? "x" : "", (long long)v[d]);
    return buf;
}

int recipe_pool_finish(recipe_plan *p, const recipe_tensor *x, strbuf *why)
{
    recipe_pool *q = &p->pool;
    int nsp = q->nsp, lead = x->ndim - nsp;
    char b1[64], b2[64];
    if (lead < 1) {
        strbuf_addf(why, "not covered: %d-D pooling of a %d-dim tensor", nsp, x->ndim);
        return 1;
    }
    q->nc = 1;
    for (int d = 0; d < lead; d++)
        q->nc *= x->shape[d];
    for (int d = 3 - nsp; d < 3; d++)
        q->in[d] = x->shape[lead + d - (3 - nsp)];
    const bool shapes_match = p->output.ndim == x->ndim;
    for (int d = 3 - nsp; d < 3; d++) {
        int64_t spec_out = shapes_match ? p->output.shape[lead + d - (3 - nsp)] : -1;
        if (q->adaptive) {
            int64_t want = q->want_out[d] < 0 ? q->in[d] : q->want_out[d];
            if (want < 1 || q->in[d] % want) {
                strbuf_addf(why, "not covered: adaptive pooling of %s to %s (an output that does not "
                                 "divide the input has windows of different sizes)",
                            dims_text(q->in, nsp, b1, sizeof b1), dims_text(q->want_out, nsp, b2, sizeof b2));
                return 1;
            }
            q->k[d] = q->s[d] = q->in[d] / want;
            q->out[d] = want;
            continue;
        }
        int64_t of = recipe_pool_out_size(q->in[d], q->k[d], q->s[d], q->pad[d], q->dil[d], false);
        int64_t oc = recipe_pool_out_size(q->in[d], q->k[d], q->s[d], q->pad[d], q->dil[d], true);
        if (!q->ceil_known && oc != of && spec_out == oc)
            q->ceil_mode = true; /* AvgPoolNd's repr hides it: the shape tells */
        q->out[d] = q->ceil_mode ? oc : of;
        if (q->out[d] < 1) {
            strbuf_addf(why, "not covered: a pooling window larger than the padded input (%s)",
                        dims_text(q->in, nsp, b1, sizeof b1));
            return 1;
        }
    }
    if (q->adaptive)
        q->ceil_known = true;
    /* the output the spec expects: the leading dims, then the pooled sizes */
    if (p->output_free) { /* a stage whose output is what the pooling gives */
        int64_t shape[RECIPE_MAX_DIMS];
        for (int d = 0; d < x->ndim; d++)
            shape[d] = d < lead ? x->shape[d] : q->out[3 - nsp + d - lead];
        recipe_set_output_shape(p, x->ndim, shape, x->dtype);
    }
    bool ok = p->output.ndim == x->ndim;
    for (int d = 0; ok && d < x->ndim; d++)
        ok = p->output.shape[d] == (d < lead ? x->shape[d] : q->out[3 - nsp + d - lead]);
    if (!ok) {
        strbuf_addf(why, "not covered: the output's shape is not the pooling's (%s from %s; a reshape follows?)",
                    dims_text(q->out, nsp, b1, sizeof b1), dims_text(q->in, nsp, b2, sizeof b2));
        return 1;
    }
    if (strcmp(p->output.dtype, x->dtype)) {
        strbuf_addf(why, "not covered: pooling output of dtype %s from %s", p->output.dtype, x->dtype);
        return 1;
    }
    /* global pooling (one window, the whole input): a reduction over one contiguous row */
    bool global = q->divisor == 0;
    int64_t r = 1;
    for (int d = 3 - nsp; d < 3; d++) {
        global = global && q->out[d] == 1 && q->pad[d] == 0 && q->dil[d] == 1 && q->k[d] == q->in[d];
        r *= q->in[d];
    }
    if (global) {
        p->family = RECIPE_REDUCE;
        p->red = q->is_max ? RED_MAX : RED_MEAN;
        p->dim = lead;
        p->keepdim = true;
        p->outer = q->nc;
        p->r = r;
        p->inner = 1;
        return 0;
    }
    /* recipes/pool.cu unrolls the window: keep it to what a thread can hold */
    int64_t taps = 1;
    for (int d = 0; d < 3; d++) {
        taps *= q->k[d];
        if (q->k[d] > 32 || (q->k[d] - 1) * q->dil[d] + 1 > 128) {
            strbuf_addf(why, "not covered: a pooling window of %s (more than 32 taps along a dim)",
                        dims_text(q->k, nsp, b1, sizeof b1));
            return 1;
        }
    }
    if (taps > 1024) {
        strbuf_addf(why, "not covered: a pooling window of %s (more than 1024 taps)",
                    dims_text(q->k, nsp, b1, sizeof b1));
        return 1;
    }
    for (int d = 0; d < 3; d++)
        if (q->in[d] > INT32_MAX / 4 || q->out[d] > INT32_MAX / 4) {
            strbuf_adds(why, "not covered: a pooled dim of more than 2^29 elements");
            return 1;
        }
    return 0;
}

/* ================================================================== words */

void recipe_pool_describe(const recipe_plan *p, strbuf *out)
{
    const recipe_pool *q = &p->pool;
    char k[64], s[64], pd[64], dl[64], in[64], o[64];
    int nsp = q->nsp;
    strbuf_addf(out, "pooling: %s%s %d-D over the last %d dims (%lld planes): %s -> %s\n",
                q->adaptive ? "adaptive " : "", q->is_max ? "max" : "average", nsp, nsp,
                (long long)q->nc, dims_text(q->in, nsp, in, sizeof in), dims_text(q->out, nsp, o, sizeof o));
    strbuf_addf(out, "window: %s, stride %s, padding %s, dilation %s, ceil_mode %s%s\n",
                dims_text(q->k, nsp, k, sizeof k), dims_text(q->s, nsp, s, sizeof s),
                dims_text(q->pad, nsp, pd, sizeof pd), dims_text(q->dil, nsp, dl, sizeof dl),
                q->ceil_mode ? "true" : "false", q->ceil_known ? "" : " (from the output's shape)");
    if (!q->is_max) {
        bool padded = q->pad[0] || q->pad[1] || q->pad[2];
        if (q->divisor)
            strbuf_addf(out, "divisor: %lld (divisor_override)\n", (long long)q->divisor);
        else
            strbuf_addf(out, "divisor: the window %s%s\n",
                        q->count_include_pad ? "clipped to the padded input (count_include_pad)"
                                             : "clipped to the input",
                        !q->cip_known && padded ? "; ASSUMED: the module's repr does not print "
                                                  "count_include_pad or divisor_override" : "");
    }
    strbuf_adds(out, "operand: ");
    rx_format(p, p->root, out);
    strbuf_addc(out, '\n');
    if (p->epi >= 0) {
        strbuf_adds(out, "epilogue: ");
        rx_format(p, p->epi, out);
        strbuf_addc(out, '\n');
    }
}

void recipe_pool_summary(const recipe_plan *p, strbuf *out)
{
    const recipe_pool *q = &p->pool;
    char k[64], s[64], pd[64], dl[64];
    strbuf_addf(out, "pool %s %d-D (window %s, stride %s, padding %s, dilation %s%s) of ",
                q->is_max ? "max" : "avg", q->nsp, dims_text(q->k, q->nsp, k, sizeof k),
                dims_text(q->s, q->nsp, s, sizeof s), dims_text(q->pad, q->nsp, pd, sizeof pd),
                dims_text(q->dil, q->nsp, dl, sizeof dl), q->ceil_mode ? ", ceil" : "");
    rx_format(p, p->root, out);
    if (p->epi >= 0) {
        strbuf_adds(out, ", then ");
        rx_format(p, p->epi, out);
    }
}

/* ================================================================== generation */

static int elem_size(const char *dtype)
{
    return (!strcmp(dtype, "float16") || !strcmp(dtype, "bfloat16")) ? 2 : 4;
}

static const char *operand_dtype(const recipe_plan *p)
{
    for (int i = 0; i < p->n_inputs; i++)
        if (p->kind[i] == RK_FULL)
            return p->inputs[i].dtype;
    return p->output.dtype;
}

void recipe_pool_emit(const recipe_plan *p, const recipe_params *k, strbuf *sb)
{
    const recipe_pool *q = &p->pool;
    static const char dn[3] = { 'D', 'H', 'W' };
    strbuf_addf(sb, "#define CGR_POOL_MAX %d\n#define CGR_NC %lld\n", q->is_max ? 1 : 0, (long long)q->nc);
    for (int d = 0; d < 3; d++)
        strbuf_addf(sb, "#define CGR_I%c %lld\n#define CGR_O%c %lld\n#define CGR_K%c %lld\n"
                        "#define CGR_S%c %lld\n#define CGR_P%c %lld\n#define CGR_D%c %lld\n",
                    dn[d], (long long)q->in[d], dn[d], (long long)q->out[d], dn[d], (long long)q->k[d],
                    dn[d], (long long)q->s[d], dn[d], (long long)q->pad[d], dn[d], (long long)q->dil[d]);
    strbuf_addf(sb, "#define CGR_COUNT_PAD %d\n#define CGR_DIVISOR %lld\n", q->count_include_pad ? 1 : 0,
                (long long)q->divisor);
    strbuf_addf(sb, "#define CGR_THREADS %d\n#define CGR_TX %d\n#define CGR_COLS %d\n#define CGR_ROWS %d\n"
                    "#define CGR_SMEM %d\n", k->threads, k->pool.tx, k->pool.cols, k->pool.rows, k->pool.smem);
}

/* ================================================================== variants */

/* The tile geometry of a variant: the same arithmetic as recipes/pool.cu's constants. */
struct geom {
    int64_t tile_w, tile_h, ntw, nth, blocks;
    int64_t rows_t, rows_in, cols_in, cols_s, smem_bytes;
    double useful; /* outputs computed that exist / outputs computed */
};

static void geom(const recipe_pool *q, const recipe_params *k, int esize, struct geom *g)
{
    const int64_t ld = 16 / esize;
    const int64_t ty = k->threads / k->pool.tx;
    g->tile_w = (int64_t)k->pool.tx * k->pool.cols;
    g->tile_h = ty * k->pool.rows;
    g->ntw = (q->out[2] + g->tile_w - 1) / g->tile_w;
    g->nth = (q->out[1] + g->tile_h - 1) / g->tile_h;
    g->blocks = q->nc * q->out[0] * g->nth * g->ntw;
    g->rows_t = (k->pool.rows - 1) * q->s[1] + (q->k[1] - 1) * q->dil[1] + 1;
    g->rows_in = (g->tile_h - 1) * q->s[1] + (q->k[1] - 1) * q->dil[1] + 1;
    g->cols_in = (g->tile_w - 1) * q->s[2] + (q->k[2] - 1) * q->dil[2] + 1;
    const int64_t chunks = (g->cols_in + 2 * (ld - 1)) / ld;
    g->cols_s = chunks * ld; /* columns loaded a staged row */
    const int64_t perm = q->s[2] % 2 == 0 ? q->s[2] : 1;
    const int64_t kept = perm == 1 ? g->cols_s : g->cols_in;
    const int64_t row_s = perm * ((kept + perm - 1) / perm);
    g->smem_bytes = k->pool.smem ? g->rows_in * row_s * 4 : 0;
    g->useful = (double)(q->out[1] * q->out[2]) / (double)(g->nth * g->tile_h * g->ntw * g->tile_w);
}

/*
 * A rough time per output, in SM cycles: the largest of
 * - L1: wavefronts (128 bytes a cycle an SM, the resource these kernels run out of before
 *   DRAM when windows overlap or are strided). Staged: the fill's 16-byte loads, its
 *   shared stores (16-byte for odd strides, else one a float), one wavefront per warp
 *   read of the stage (conflict-free: see pool.cu). Direct: each warp load of a tap
 *   touches the lines its 32 threads span (SW apart), plus one for misalignment;
 * - latency: the bytes a CTA loads over the bytes an SM has in flight (resident CTAs x
 *   what one issues at once), times ~1000 cycles of memory latency: tiles too small to
 *   keep enough loads in flight cannot reach DRAM bandwidth whatever their L1 cost;
 * - L2: the bytes a CTA brings into the SM (the stage, or the window rows the direct
 *   loads miss in L1: the same), halos and restaged D taps included, at ~12 TB/s;
 * - DRAM: the input and output bytes over 4.8 TB/s shared by the SMs (the floor).
 * The largest decides, a quarter of the others breaks ties (variants at the DRAM floor
 * differ in what they spend to get there). Per output that exists, so ragged tiles pay.
 */
static double cost(const recipe_pool *q, const recipe_params *k, int esize, const struct geom *g,
                   const recipe_hw *hw)
{
    const double warps = k->threads / 32.0;
    const double taps = (double)q->k[0] * g->rows_t * q->k[2] * k->pool.cols;
    const double outputs = (double)g->tile_w * g->tile_h * g->useful;
    double l1, loaded, inflight_cta;
    const double staged_bytes = (double)q->k[0] * g->rows_in * g->cols_s * esize;
    double ctas = fmin(fmin(2048.0 / k->threads, 32), (double)hw->max_threads_per_sm / k->threads);
    if (k->pool.smem) {
        const double fill = (double)q->k[0] * g->rows_in * g->cols_s;
        l1 = fill * esize / 128.0 + fill / (q->s[2] % 2 ? 128.0 : 32.0) + warps * taps;
        ctas = fmin(ctas, floor(228.0 * 1024 / (g->smem_bytes + 1024)));
        loaded = fill * esize;
        const double per_tap = (double)g->rows_in * g->cols_s * esize;
        const double batch = fmin(ceil(per_tap / 16.0 / k->threads), 32.0 / (16 / esize));
        inflight_cta = fmin(per_tap, batch * 16.0 * k->threads);
    } else {
        const double lines = fmin(ceil(32.0 * q->s[2] * esize / 128.0) + 1, 32);
        l1 = warps * taps * lines;
        loaded = (double)k->threads * taps * esize;
        inflight_cta = k->threads * fmin((double)k->pool.cols * q->k[2] * (g->rows_t < 2 ? g->rows_t : 2), 32) * esize;
    }
    const double per_sm_cycle = hw->sms * 1.98e9;
    const double latency = fmin(loaded, staged_bytes) * 1000.0 / (ctas * inflight_cta) / outputs;
    const double l2 = staged_bytes / (12e12 / per_sm_cycle) / outputs;
    double in = q->nc, out = q->nc;
    for (int d = 0; d < 3; d++) {
        in *= q->in[d];
        out *= q->out[d];
    }
    const double dram = (in + out) * esize / out / (4.8e12 / per_sm_cycle);
    const double t[4] = { l1 / outputs, latency, l2, dram };
    double worst = 0, sum = 0;
    for (int i = 0; i < 4; i++) {
        worst = fmax(worst, t[i]);
        sum += t[i];
    }
    return worst + 0.25 * (sum - worst);
}

/*
 * Pruning:
 * - tx (threads across the output's last dim) is the smallest multiple of 32 dividing
 *   threads that covers the row with cols columns a thread, and cols shrinks to what the
 *   row needs: no thread is given columns that do not exist when one tile spans the row;
 * - rows x cols <= 16 accumulators a thread; rows > 1 only for 2-D/3-D pooling;
 * - staged tiles: at most 40 KB of shared memory (static limit 48 KB);
 * - at most 2^31 - 1 CTAs; fewer than 2 CTAs an SM only when nothing else fits;
 * - at least half the computed outputs must exist (ragged tiles), unless none would;
 * then ordered by cost() (cheapest first; equal costs, as under the DRAM floor, keep the
 * loops' order: staged first, bigger CTAs first), keeping at least two direct variants (a
 * second code path, in case the staged one fails on the GPU).
 */
int recipe_pool_variants(const recipe_plan *p, const recipe_hw *hw, recipe_params *out, int max)
{
    const recipe_pool *q = &p->pool;
    const int esize = elem_size(operand_dtype(p));
    static const int threads[] = { 256, 128, 64, 32 };
    static const int cols[] = { 1, 2, 4, 8 };
    static const int rows[] = { 1, 2, 4, 8 };
    recipe_params cand[2 * 4 * 4 * 4];
    double score[sizeof cand / sizeof cand[0]];
    int n = 0;
    /* pass 1 drops the grid-size rule, pass 2 the ragged-tile one too (tiny planes) */
    for (int pass = 0; pass < 3 && n == 0; pass++) {
        for (int smem = 1; smem >= 0; smem--)
            for (size_t t = 0; t < 4; t++)
                for (size_t c = 0; c < 4; c++)
                    for (size_t r = 0; r < 4; r++) {
                        recipe_params k;
                        memset(&k, 0, sizeof k);
                        k.threads = threads[t];
                        if (k.threads > hw->max_threads_per_sm)
                            continue;
                        k.pool.smem = smem;
                        k.pool.rows = rows[r];
                        if (k.pool.rows > 1 && q->out[1] == 1)
                            continue;
                        k.pool.tx = 32;
                        while (k.pool.tx < k.threads && (int64_t)k.pool.tx * cols[c] < q->out[2])
                            k.pool.tx *= 2;
                        int64_t need = (q->out[2] + k.pool.tx - 1) / k.pool.tx;
                        k.pool.cols = need < cols[c] ? (int)need : cols[c];
                        if (k.pool.rows * k.pool.cols > 16)
                            continue;
                        struct geom g;
                        geom(q, &k, esize, &g);
                        if (g.smem_bytes > 40 * 1024 || g.blocks > 0x7fffffff)
                            continue;
                        if (pass < 2 && g.useful < 0.5)
                            continue;
                        if (pass == 0 && g.blocks < 2 * hw->sms)
                            continue;
                        bool dup = false;
                        for (int i = 0; i < n && !dup; i++)
                            dup = !memcmp(&cand[i], &k, sizeof k);
                        if (dup)
                            continue;
                        score[n] = cost(q, &k, esize, &g, hw);
                        cand[n++] = k;
                    }
    }
    /* cheapest first (insertion sort: stable, so equal costs keep the loops' order) */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && score[j] < score[j - 1]; j--) {
            double s = score[j];
            score[j] = score[j - 1];
            score[j - 1] = s;
            recipe_params k = cand[j];
            cand[j] = cand[j - 1];
            cand[j - 1] = k;
        }
    if (max > RECIPE_MAX_VARIANTS)
        max = RECIPE_MAX_VARIANTS;
    /* The cost model favours staging. On the H200 (docs/perf.md) staging won where windows
     * overlap along the last dim (stride 1: 41 max 1-D 1.74 against 3.43 ms direct, 42 max
     * 2-D 1.52 against 1.91, 44 avg 1-D 1.24 against 2.27), and reading windows directly
     * won where they step (45 avg 2-D, stride 11: 3.98 against 4.52 ms; 46 avg 3-D, stride
     * 2: 4.23 against 4.36; 43 max 3-D, stride 2: 2.15 against 3.06). So with a stride
     * over 1 the two cheapest direct variants move up to right after the cheapest one;
     * with stride 1 they stay last (kept: the judge decides). */
    for (int i = 1, pos = 1; i < n && pos < 3 && q->s[2] > 1; i++)
        if (!cand[i].pool.smem) {
            recipe_params k = cand[i];
            memmove(&cand[pos + 1], &cand[pos], (size_t)(i - pos) * sizeof cand[0]);
            cand[pos++] = k;
        }
    int m = 0, direct = 0, direct_left = 0;
    for (int i = 0; i < n; i++)
        direct_left += !cand[i].pool.smem;
    for (int i = 0; i < n && m < max; i++) {
        bool staged = cand[i].pool.smem;
        int want_direct = direct_left < 2 - direct ? direct_left : 2 - direct;
        if (staged && want_direct > 0 && max - m <= want_direct)
            continue; /* leave room for the direct ones */
        if (!staged) {
            direct++;
            direct_left--;
        }
        out[m++] = cand[i];
    }
    return m;
}

/* ================================================================== CPU reference */

void recipe_pool_ref(const recipe_pool *q, const float *x, float *y)
{
    const int64_t in_plane = q->in[0] * q->in[1] * q->in[2];
    int64_t yi = 0;
    for (int64_t c = 0; c < q->nc; c++) {
        const float *xp = x + c * in_plane;
        for (int64_t od = 0; od < q->out[0]; od++)
            for (int64_t oh = 0; oh < q->out[1]; oh++)
                for (int64_t ow = 0; ow < q->out[2]; ow++) {
                    const int64_t o[3] = { od, oh, ow };
                    if (q->is_max) {
                        /* ATen: maxval starts at -inf; a tap wins when greater, or NaN */
                        float m = -INFINITY;
                        for (int64_t a = 0; a < q->k[0]; a++)
                            for (int64_t b = 0; b < q->k[1]; b++)
                                for (int64_t e = 0; e < q->k[2]; e++) {
                                    int64_t i0 = o[0] * q->s[0] - q->pad[0] + a * q->dil[0];
                                    int64_t i1 = o[1] * q->s[1] - q->pad[1] + b * q->dil[1];
                                    int64_t i2 = o[2] * q->s[2] - q->pad[2] + e * q->dil[2];
                                    if (i0 < 0 || i0 >= q->in[0] || i1 < 0 || i1 >= q->in[1] ||
                                        i2 < 0 || i2 >= q->in[2])
                                        continue;
                                    float v = xp[(i0 * q->in[1] + i1) * q->in[2] + i2];
                                    if (v > m || isnan(v))
                                        m = v;
                                }
                        y[yi++] = m;
                        continue;
                    }
                    /* ATen's avg_pool2d/3d: [start, end) clipped to the padded input for
                     * pool_size, then to the input for the sum */
                    int64_t lo[3], hi[3], pool_size = 1, inside = 1;
                    for (int d = 0; d < 3; d++) {
                        lo[d] = o[d] * q->s[d] - q->pad[d];
                        hi[d] = lo[d] + q->k[d] < q->in[d] + q->pad[d] ? lo[d] + q->k[d] : q->in[d] + q->pad[d];
                        pool_size *= hi[d] - lo[d];
                        lo[d] = lo[d] > 0 ? lo[d] : 0;
                        hi[d] = hi[d] < q->in[d] ? hi[d] : q->in[d];
                        inside *= hi[d] > lo[d] ? hi[d] - lo[d] : 0;
                    }
                    if (inside == 0) {
                        y[yi++] = 0.f;
                        continue;
                    }
                    float sum = 0.f;
                    for (int64_t a = lo[0]; a < hi[0]; a++)
                        for (int64_t b = lo[1]; b < hi[1]; b++)
                            for (int64_t e = lo[2]; e < hi[2]; e++)
                                sum += xp[(a * q->in[1] + b) * q->in[2] + e];
                    int64_t div = q->divisor ? q->divisor : q->count_include_pad ? pool_size : inside;
                    y[yi++] = sum / (float)div;
                }
    }
}
