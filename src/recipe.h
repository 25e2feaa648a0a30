/*
 * recipe: the built-in proposer's recogniser and generator. It reads a task spec (the
 * JSON that python/cutegen_ref.py's make_spec() writes: inputs, outputs, init_args and
 * the torch.fx graph), recognises what the graph computes by its structure (never by
 * the problem's name), and writes a complete candidate .cu against the ABI
 * (docs/abi.md) from the templates in recipes/, for a given parameter set.
 *
 * Families covered (docs/recipes.md has the full list and the fx targets accepted):
 *  - POINTWISE: any composition of unary/binary elementwise ops and activations of the
 *    inputs with broadcasting and scalar constants, into one vectorised pass;
 *  - REDUCE: sum, mean, max, min, prod, argmax, argmin over one dim (keepdim or not),
 *    softmax and log-softmax over one dim; with a pointwise prologue (same-shaped inputs)
 *    and a pointwise epilogue on the reduced value;
 *  - NORM: statistics (sums, extremes, mean and variance) over a block of dims broadcast
 *    back into a pointwise expression: the norm modules, x / x.norm(...), ...
 *    (src/recipe_norm.c, src/recipe_norm.h).
 *  - GEMM (src/recipe_gemm.c): matmul/mm/bmm/@/nn.Linear/F.linear/einsum of two inputs
 *    (transposed, batched, N-D times a matrix, matrix-vector), optionally triu/tril, then
 *    a pointwise epilogue that may read further inputs (bias, residual, scalars);
 *  - CONV (src/recipe_conv.c): nn.Conv1d/Conv2d/Conv3d (fp32, zero padding; depthwise
 *    directly) and nn.ConvTranspose1d/2d/3d of an input as an implicit GEMM (a group each),
 *    then a pointwise epilogue that may read further inputs (the conv's bias, a
 *    per-channel bias, scalars, a same-shaped residual).
 *  - POOL: max and average pooling over the last 1-3 dims (src/recipe_pool.c), with a
 *    pointwise prologue and epilogue; global pooling is planned as a REDUCE.
 *  - ROWLOSS (src/recipe_rowloss.c): cross-entropy and the triplet margin loss, a loss of
 *    whole rows and then a mean or sum over the rows, in one pass.
 *  - SCAN: cumsum and cumprod along one dim, inclusive, exclusive or reversed (written
 *    with flip, narrow and cat as PyTorch users do), with a pointwise prologue of
 *    same-shaped inputs of any dtype (a bool mask) and an epilogue that may read them.
 *  - STAGED (src/recipe_stage.c): what no one family covers, as a chain of 2-5 plans of
 *    the families above (a convolution with its pointwise epilogue, then a pool, a norm,
 *    a reduction, softmax, another convolution...), each writing its intermediate into
 *    the workspace for the next, in one candidate file.
 * Composite calls (scaled_dot_product_attention) are first rewritten into the chains of
 * primitive nodes they compute (src/recipe_expand.c), then recognised as above.
 * Anything else is "not covered", with the reason in words.
 *
 * DESIGN: recognition builds one expression DAG (rx_node, indices into plan->nodes)
 * while walking the fx nodes in order; the reduced value is the leaf RX_ACC. The
 * generator prints the DAG as straight-line C++ (one temporary per node) and splices it,
 * with the shape and tuning parameters as CGR_* macros, into the template's
 * `// recipe:params` line. rx_eval() evaluates the DAG on the CPU in float, with the
 * same formulas as recipes/ops.cuh, so the recogniser's math is testable without a GPU.
 */
#ifndef CUTEGEN_RECIPE_H
#define CUTEGEN_RECIPE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "strbuf.h"

#define RECIPE_MAX_INPUTS 16
#define RECIPE_MAX_DIMS 8

enum rx_op {
    RX_INPUT, RX_CONST, RX_ACC,
    /* unary (p0, p1 are the op's constants where it has some) */
    RX_NEG, RX_ABS, RX_EXP, RX_LOG, RX_SQRT, RX_RSQRT, RX_TANH, RX_SIGMOID, RX_RELU,
    RX_ERF, RX_SIN, RX_COS, RX_RECIP, RX_LOG1P, RX_EXPM1, RX_SQUARE, RX_SELU, RX_SILU,
    RX_MISH, RX_SOFTSIGN, RX_HARDSIGMOID, RX_HARDSWISH, RX_LOGSIGMOID, RX_GELU,
    RX_GELU_TANH, RX_LEAKY_RELU /* p0 slope */, RX_ELU /* p0 alpha */,
    RX_CLAMP /* p0 lo, p1 hi */, RX_SOFTPLUS /* p0 beta, p1 threshold */,
    /* binary */
    RX_ADD, RX_SUB, RX_MUL, RX_DIV, RX_POW, RX_MAX, RX_MIN,
    RX_N_OPS
};

typedef struct rx_node {
    enum rx_op op;
    int a, b;      /* operands (node indices), -1 when absent */
    double p0, p1; /* constants: RX_CONST's value in p0 */
    int input;     /* RX_INPUT: index into plan->inputs */
    unsigned unsq; /* RX_INPUT: read as a view with size-1 dims inserted at these bits of
                      the view's dims (x.unsqueeze(d)); 0 as is */
} rx_node;

enum recipe_family { RECIPE_NONE = 0, RECIPE_POINTWISE, RECIPE_REDUCE, RECIPE_NORM, RECIPE_GEMM,
                      RECIPE_CONV, RECIPE_POOL, RECIPE_ROWLOSS, RECIPE_SCAN,
                      RECIPE_STAGED /* two plans in a row (src/recipe_stage.c) */ };

enum recipe_red {
    RED_SUM = 0, RED_MEAN, RED_MAX, RED_MIN, RED_PROD, RED_ARGMAX, RED_ARGMIN,
    RED_SOFTMAX, RED_LOGSOFTMAX,
    RED_LOGSUMEXP, /* GEMM only: over the product's rows */
    RED_CUMSUM, RED_CUMPROD, /* SCAN: prefix sums and products along one dim */
    RED_GROUPNORM /* GEMM only: GroupNorm over groups of the product's columns */
};

/* How the kernel reads an input: as the output's full shape (16-byte vectors), as one
 * element, broadcast by strides, or not at all. */
enum recipe_in_kind { RK_UNUSED = 0, RK_FULL = 1, RK_SCALAR = 2, RK_BCAST = 3 };

typedef struct recipe_tensor {
    char name[64];
    char dtype[16];  /* as torch names it: "float32", "float16", ... */
    int ndim;
    int64_t shape[RECIPE_MAX_DIMS];
    int64_t stride[RECIPE_MAX_DIMS];
} recipe_tensor;

/* GEMM (src/recipe_gemm.c): how the kernel reads each input. */
enum recipe_gemm_in {
    RG_UNUSED = 0, RG_OPERAND, /* A or B of the product */
    RG_FULL,                   /* the output's shape, contiguous */
    RG_SCALAR,                 /* one element */
    RG_COL,                    /* one value per output column (a bias: [N], [1, N]) */
    RG_ROW,                    /* one value per output row ([..., M, 1]) */
    RG_MROW                    /* one value per row m, shared by the batches (a pointwise
                                  convolution's bias: one a channel; recipe_conv_as_gemm) */
};

#define RECIPE_GEMM_MAX_VIEWS 8

/* GEMM: out = epi(A @ B), A viewed as (M, K), B as (N, K) (CuTe's convention), BATCH
 * products; the epilogue is plan->epi over RX_ACC, the product (nn.Linear's bias is an
 * RX_INPUT added to it). With a reduction over the product's rows (plan->root >= 0):
 * plan->root is the pointwise operand of the reduction (over the product's RX_ACC),
 * plan->red its kind (sum, mean, max, min, logsumexp, softmax, log_softmax), plan->epi
 * the epilogue of the reduced value (its own RX_ACC leaf). */
typedef struct recipe_gemm_plan {
    char node[96];          /* the fx node of the product */
    char op[32];            /* how it was written: matmul, mm, bmm, linear, Linear, einsum */
    char views[RECIPE_GEMM_MAX_VIEWS][96]; /* transposes of operands the product consumes */
    int n_views;
    char mask[96];          /* triu/tril node applied to the product, or "" */
    int a, b;               /* input indices of the operands */
    int bias;               /* input index of a Linear's bias, or -1 */
    bool a_kmajor;          /* A(m, k) = a[m*lda + k]; else a[k*lda + m] */
    bool b_kmajor;          /* B(n, k) = b[n*ldb + k]; else b[k*ldb + n] */
    int64_t batch, m, n, k;
    int64_t lda, ldb;
    int64_t a_bstride, b_bstride; /* elements between batches, 0 when shared */
    int tri;                /* 0; 1 triu, 2 tril of the product */
    int64_t tri_diag;
    int gemv;               /* 0; 1 N == 1 (rows of A), 2 M == 1 (rows of B): memory-bound */
    bool n_last;            /* the output's last dim is N (B is not a vector) */
    int acc_node;           /* the product's RX_ACC node */
    int ndim;               /* the product's shape (torch's matmul result) */
    int64_t shape[RECIPE_MAX_DIMS];
    enum recipe_gemm_in in[RECIPE_MAX_INPUTS];
    int64_t gn_group;       /* RED_GROUPNORM: columns a group (N / num_groups) */
    int64_t bcast_w;        /* > 0: the reduced value's epilogue broadcast over an output
                               row of this width (x.sum(1, keepdim=True) + y, y [rows, W]) */
    double gn_eps;          /* RED_GROUPNORM: added to the variance */
} recipe_gemm_plan;
/* CONV (src/recipe_conv.c): how the kernel reads each input. */
enum recipe_conv_in {
    RC_UNUSED = 0, RC_OPERAND, /* x or the weight */
    RC_FULL,                   /* the output's shape, contiguous */
    RC_SCALAR,                 /* one element */
    RC_CHAN                    /* one value per output channel ([C], [C, 1, 1], [1, C, 1, 1]) */
};

/* CONV: y = epi(conv(x, w)) as an implicit GEMM: M = N*OD*OH*OW output pixels, N_gemm =
 * COUT, K = CIN*KD*KH*KW. Spatial extents are (D, H, W): Conv2d has D = 1, Conv1d D = H
 * = 1 (with stride 1, padding 0, dilation 1 there). The epilogue is plan->epi over RX_ACC
 * (the conv's bias is an RX_INPUT added to it). Transposed (ConvTranspose*d): the weight
 * is [CIN, COUT, k...], input position i = (o + pad - k*dil) / stride where that divides,
 * out = (in - 1)*stride - 2*pad + dil*(k - 1) + opad + 1. */
typedef struct recipe_conv_plan {
    char node[96];   /* the fx node of the convolution */
    int dims;        /* spatial dims: 1, 2, 3 */
    int x, w, bias;  /* input indices; bias -1 when bias=False */
    bool depthwise;  /* groups = CIN = COUT: one filter a channel (recipes/conv_dw.cu) */
    bool transposed; /* ConvTranspose1d/2d/3d */
    int64_t groups;  /* > 1: grouped (not depthwise): a GEMM of COUT/groups x CIN/groups*taps a
                        group, group g reading channels g*CIN/groups.. and writing g*COUT/groups.. */
    int64_t n, cin, cout;
    int64_t in[3], k[3], out[3], stride[3], pad[3], dil[3]; /* (D, H, W) */
    int64_t opad[3]; /* transposed: output_padding (0 otherwise) */
    int64_t m, gn, gk; /* the GEMM's M, N, K (a group's: N = COUT/groups, K = CIN/groups*taps;
                          depthwise: K = KD*KH*KW a channel) */
    enum recipe_conv_in kind[RECIPE_MAX_INPUTS];
    unsigned chan_vec; /* bit i: input i is read as one value a channel although it is 1-D
                          (BatchNorm's running statistics and affine parameters [COUT]) */
    int acc_node;      /* the convolution's RX_ACC node (its value before the bias) */
    int chanred;       /* a reduction over the channels (dim 1) follows: 0 none, 1 sum, 2 mean,
                          3 max, 4 min, 5 logsumexp (recipes/conv_tc.cu CGR_CHANRED); the
                          plan's root is then its operand (cgr_pre) and epi what follows (cgr_epi) */
    int spatred;       /* a mean (1) or sum (2) over all the pixels follows (a global average
                          pooling): a transposed convolution without padding folds it
                          (recipes/conv_mean.cu: sums of x and of the weight's taps, then a
                          product of the two a channel); root and epi as for chanred */
    int pf_mask;       /* a mean or sum over some of the pixels follows, folded into x and the
                          weight (recipes/conv_fold.cuh CGR_PREFOLD): bit d set for each folded
                          dim of (D, H, W). The geometry above is then the folded convolution's
                          (CIN x cells input channels, the folded dims of size 1), pf the
                          convolution's own; root and epi as for chanred */
    int pf_red;        /* with pf_mask: 1 a mean, 2 a sum */
    struct {
        int64_t cin, in[3], k[3], out[3], stride[3], pad[3], dil[3], opad[3];
    } pf;
} recipe_conv_plan;

/*
 * POOL (src/recipe_pool.c, recipes/pool.cu): max or average pooling over the last 1-3
 * dims, as PyTorch's MaxPoolNd/AvgPoolNd (and adaptive pooling whose output divides the
 * input). Every array is 3-D pooling's (depth, height, width): 1-D and 2-D pooling leave
 * the leading entries at a window of 1, stride 1, no padding, size 1.
 */
typedef struct recipe_pool {
    bool is_max;              /* max (padding is -inf, NaN propagates), else average */
    bool adaptive;            /* adaptive_*: the windows follow from in and out */
    int nsp;                  /* dims pooled: 1, 2 or 3 (the last nsp of the operand) */
    int64_t k[3], s[3], pad[3], dil[3];
    int64_t in[3], out[3];    /* the operand's and the output's pooled sizes */
    int64_t want_out[3];      /* adaptive: the output size asked for (-1: the input's) */
    bool ceil_mode;
    bool ceil_known;          /* false: not in the module's repr, decided by the output */
    bool count_include_pad;   /* average: padding counts in the divisor (PyTorch's default) */
    bool cip_known;           /* false: AvgPoolNd's repr does not print it (default assumed) */
    int64_t divisor;          /* average: divisor_override, 0 when none */
    int64_t nc;               /* the operand's leading dims, multiplied */
} recipe_pool;

/* ROWLOSS (src/recipe_rowloss.c, recipes/rowloss.cu): a loss of whole rows, then a mean or
 * sum over the rows. */
enum { RL_CROSS_ENTROPY = 0, RL_TRIPLET = 1 };
struct recipe_rowloss {
    int loss;          /* RL_CROSS_ENTROPY, RL_TRIPLET */
    int reduction;     /* 0 none, 1 sum, 2 mean */
    int64_t rows, cols;
    int64_t ignore;    /* cross-entropy: ignore_index */
    double margin, eps; /* triplet */
    int pnorm;         /* triplet: 1 or 2 */
    bool swap;
};

typedef struct recipe_plan {
    enum recipe_family family;
    int n_inputs;
    recipe_tensor inputs[RECIPE_MAX_INPUTS];
    enum recipe_in_kind kind[RECIPE_MAX_INPUTS];
    unsigned in_unsq[RECIPE_MAX_INPUTS]; /* POINTWISE: input i is read unsqueezed (the rx_node
                                            mask; inputs[i] then holds the view's shape) */
    recipe_tensor output;
    bool output_free;    /* the spec leaves the output's shape open (a stage of a staged plan,
                            its output entry marked "free"): REDUCE and POOL take theirs and
                            write it into output; other families do not recognise it */
    recipe_tensor operand; /* REDUCE: the reduced operand's shape (its largest input's) */
    rx_node *nodes;
    int n_nodes, alloc;
    int root;            /* POINTWISE: the result; REDUCE: the reduced operand */
    int epi;             /* REDUCE: the epilogue (a tree over RX_ACC), or -1 */
    enum recipe_red red; /* REDUCE */
    int dim;             /* REDUCE: the (first) reduced dim of the operand, >= 0 */
    int n_dims;          /* REDUCE: consecutive dims reduced from dim (1: one; more: a list
                            of dims, or every dim when the call named none) */
    int red_dims[RECIPE_MAX_DIMS]; /* REDUCE: the dims as the call gave them (before normalising) */
    bool red_all;        /* REDUCE: no dim given: every dim (sum(x), mean(x), amax(x)) */
    bool keepdim;
    int64_t outer, r, inner; /* REDUCE: the operand viewed as (outer, r, inner); NORM: the output */
    struct recipe_norm *norm; /* NORM: statistics and view (src/recipe_norm.h); owned */
    recipe_gemm_plan gemm;   /* GEMM */
    recipe_conv_plan conv;   /* CONV */
    recipe_pool pool;        /* POOL (the operand is root, the epilogue epi, as for REDUCE) */
    struct recipe_rowloss rowloss; /* ROWLOSS */
    struct recipe_staged *staged; /* STAGED: the two stages and their intermediate
                                     (src/recipe_stage.h); owned */
    bool scan_reverse;   /* SCAN: from the dim's end (cumsum of a flip, flipped back) */
    char expanded[256];  /* what recipe_expand.c rewrote before recognition (a composite
                            call as its chain of primitives), or "" */
    bool scan_exclusive; /* SCAN: element j holds the scan of elements before j (the
                            identity at the first): a zero column cat'ed before the scan
                            of all but the last element */
} recipe_plan;

void recipe_plan_init(recipe_plan *p);
void recipe_plan_release(recipe_plan *p);

/*
 * Recognises a task spec. Returns 0 when covered (plan filled), 1 when not covered
 * (why holds "not covered: <reason>"), -1 when the spec itself is malformed (why says
 * how). The spec is only read; the reference process's reply wrapping it ({"ok": true,
 * "spec": {...}}, as cutegen eval caches it under ~/.cache/cutegen/tasks/) is accepted too.
 */
int recipe_recognise(const json_t *spec, recipe_plan *plan, strbuf *why);
/* The same from a file. */
int recipe_recognise_file(const char *path, recipe_plan *plan, strbuf *why);

/* One tensor of a task spec ({"name","dtype","shape","stride"}) into out: 0, 1 when not
 * covered (too many dims; why says so), -1 when malformed (why says how). Shared by the
 * family recognisers. */
int recipe_read_tensor(const json_t *t, recipe_tensor *out, strbuf *why);

/* The shape x.view(...) / x.reshape(...) asks for (varargs or one tuple, one -1 inferred)
 * of a tensor of numel elements: 0 with shape[0..*ndim), 1 when the node's arguments are
 * not constant sizes of that many elements. Shared by the family recognisers. */
int recipe_view_args(const json_t *node, int64_t n_elems, int64_t *shape, int *ndim);

/* Whether a and b have the same dims (strides and dtypes aside). */
bool recipe_same_shape(const recipe_tensor *a, const recipe_tensor *b);

/* A free output (plan->output_free) given the shape and dtype the family computes
 * (contiguous); clears output_free. */
void recipe_set_output_shape(recipe_plan *p, int ndim, const int64_t *shape, const char *dtype);

/* Which element of torch.max/min(x, dim)'s (values, indices) pair an fx getitem or
 * getattr node takes from its second argument: 0 ([0], .values), 1 ([1], .indices), -1
 * anything else. Shared by the family recognisers. */
int recipe_pair_index(const char *fname, const json_t *arg);

/* The plan in words and as an expression, for people (cutegen recipe prints it). */
void recipe_describe(const recipe_plan *p, strbuf *out);
/* The plan on one line, for progress messages: "pointwise (x * sigmoid(x)) -> float32
 * [4096, 393216]", "reduce sum over dim 1 of x -> float32 [128, 1, 4095]". */
void recipe_summary(const recipe_plan *p, strbuf *out);
/* Appends node's expression in a readable infix form. */
void rx_format(const recipe_plan *p, int node, strbuf *out);
/* Whether the expression DAG under node n contains node target. */
bool rx_reaches(const recipe_plan *p, int n, int target);
/* The degree in the accumulator (RX_ACC) of the expression under n: 1 where it is affine in
 * it (a x acc + b), 0 where it does not read it, -1 otherwise; an input counts as a constant
 * where coef(p, input, ctx) says so, else as -1 (recipe_gemm.c's row sums, recipe_conv.c's
 * means over the pixels). */
int rx_affine_degree(const recipe_plan *p, int n, bool (*coef)(const recipe_plan *p, int input, const void *ctx),
                     const void *ctx);
/* Evaluates node in float with the kernels' formulas: x[i] is input i's value, acc the
 * reduced value (for RX_ACC). */
float rx_eval(const recipe_plan *p, int node, const float *x, float acc);
const char *recipe_red_name(enum recipe_red r);

/* ------------------------------------------------------------------ generation */

/* Precision of the tensor-core templates (gemm_tc.cu, conv_tc.cu; CGR_PREC): fp32 as
 * three TF32 MMAs (3xTF32), one (TF32: ~1e-3 relative, may fail an fp32 tolerance), or three
 * fp16 MMAs of twice the depth on hi/lo halves (3xFP16, recipes/tf32_mma.cuh: 3xTF32's
 * accuracy for |x| in [2^-14, 65504), tiles holding larger values, inf or NaN run again in
 * 3xTF32; needs BK a multiple of 32). */
enum { RECIPE_GEMM_3XTF32 = 0, RECIPE_GEMM_TF32 = 1, RECIPE_GEMM_3XF16 = 2,
       RECIPE_GEMM_2XF16 = 3 /* B split into two fp16 halves, A rounded to fp16 (a lab form so far) */ };
/* How many times the steps after a product must shrink its errors (averages over R values:
 * sqrt(R)) for its plain TF32 variant to be judged second rather than last: TF32's ~1e-3
 * relative error fails an fp32 tolerance of 1e-4 element by element (lab round 50). */
#define RECIPE_TF32_SHRINK 4.0
/* Whether a warp tile (rows x columns of the CTA tile a warp computes) is small enough
 * for 3xFP16 with its in-kernel 3xTF32 redo: at most 64 x 32 (larger ones spill and lose:
 * 9_Tall_skinny 1.98 ms against 1.52 in 3xTF32, docs/perf.md lab rounds 43-44). */
static inline bool recipe_f16_warp_fits(int warp_m, int warp_n)
{
    return warp_m * warp_n <= 64 * 32;
}
/* "3xtf32", "tf32" or "3xf16", as variant lists print it. */
const char *recipe_prec_name(int prec);

/* How the TF32 tensor-core templates (gemm_tc.cu, conv_tc.cu) accumulate a chain of
 * chain_k products into one fp32 output (recipes/tf32_mma.cuh's CGR_PROMOTE): 0 straight
 * into the MMA accumulator, whose truncating adds bias the result toward zero by ~2e-8 x
 * chain_k relative (measured on the H200, docs/perf.md), so only for chains up to 2048;
 * longer chains sum each k-block (1) or k-tile (2) into a partial added in fp32. */
int recipe_tf32_promote(int64_t chain_k);
/* Whether a GEMM's row reduction can be computed as A @ (sum of B's rows): a sum or mean
 * over the product's rows of an affine map of the product (constants and scalar inputs). */
bool recipe_gemm_sumb(const recipe_plan *p);

/* The tuning parameters of the GEMM templates (recipes/gemm_tc.cu, recipes/gemm_gemv.cu). */
typedef struct recipe_gemm_params {
    int bm, bn, bk;  /* CTA tile (0: not the tensor-core kernel) */
    int wm, wn;      /* warps along M and N: threads = 32 wm wn */
    int stages;      /* cp.async pipeline depth */
    int split_k;     /* CTAs along K (> 1: partials through the workspace) */
    int prec;        /* RECIPE_GEMM_3XTF32, RECIPE_GEMM_TF32 (TF32 accuracy: may fail an
                        fp32 tolerance; the judge decides) or RECIPE_GEMM_3XF16 */
    int group;       /* tile-rows walked together (L2 reuse) */
    int min_blocks;  /* CTAs per SM __launch_bounds__ asks registers for */
    int gemv_rows;   /* recipes/gemm_gemv.cu: rows a CTA (0: not the GEMV kernel) */
    int sumb;        /* gemm_gemv.cu: a GEMM whose rows are summed through an affine map,
                        as A @ (sum of B's rows) (recipe_gemm_sumb) */
    int wgmma;       /* recipes/gemm_wgmma.cu (sm_90: warpgroup MMAs fed by a producer
                        warpgroup that splits the operands): bm/64 consumer warpgroups */
    int presplit;    /* gemm_wgmma.cu: the operands split before the product by a kernel of
                        their own, into the workspace, and the producer one thread of bulk
                        copies (CGR_PRESPLIT) */
    int stream;      /* recipes/gemm_stream.cu (sm_90): A small and resident, B streamed once and
                        split in the kernel, 3xFP16 warpgroup MMAs; bm = M rounded up to 64 */
} recipe_gemm_params;
/* The tuning parameters of recipes/conv_tc.cu (CONV). */
typedef struct recipe_conv_params {
    int bm, bn;      /* CTA tile of the implicit GEMM (BK is 32) */
    int wm, wn;      /* warps along M and N: threads = 32 wm wn */
    int stages;      /* cp.async pipeline depth */
    int prec;        /* RECIPE_GEMM_3XTF32, _TF32 (~1e-3: may fail an fp32 tolerance), _3XF16 */
    int min_blocks;  /* CTAs per SM __launch_bounds__ asks registers for */
    int dw_threads;  /* depthwise (recipes/conv_dw.cu): threads per CTA; 0 otherwise */
    int dw_rows;     /* conv_dw.cu: output rows a thread sums down its column (CGR_DW_ROWS) */
    int nhwc;        /* x and the weight copied channels-last into the workspace first,
                        A and B then copied 16 bytes at a time (CGR_NHWC): 1; 2: a stride-1
                        transposed convolution so, as the flipped convolution (CGR_FLIP) */
    int wgmma;       /* 1 (with nhwc, sm_90): Hopper's warpgroup MMAs in 3xFP16, x and the weight
                        split into fp16 halves first (CGR_WGMMA); bm/64 consumer warpgroups
                        and one producer, the k-tile 64 halves */
    int pair_w;      /* 1 (wgmma, phases of width stride 2): a CTA both width phases of a box, each
                        thread's neighbouring outputs stored together (CGR_CONV_PAIR_W) */
    int direct_co;   /* > 0: recipes/conv_direct.cu, a thread an output pixel and this many
                        output channels on the CUDA cores (threads per CTA in dw_threads,
                        pixel blocks a CTA in stages); 0 otherwise */
    int direct_stage; /* conv_direct.cu: 1, the sums stored through a shared tile (CGR_DIRECT_STAGE) */
    int direct_pix;  /* conv_direct.cu: 2, two pixels a thread a chunk apart (CGR_DIRECT_PIX); 0 or 1, one */
    int fold;        /* 1: recipes/conv_mean.cu, a mean over the pixels folded (spatred), threads
                        a CTA in dw_threads; 0 otherwise */
    int as_gemm;     /* 1: a pointwise convolution as the batched GEMM it is (recipes/gemm_tc.cu
                        or gemm_wgmma.cu, recipe_conv_as_gemm), with recipe_params.gemm's
                        parameters; 0 otherwise */
} recipe_conv_params;

/* The tuning parameters of a template. */
typedef struct recipe_params {
    int threads;     /* threads per CTA */
    int unroll;      /* POINTWISE: 16-byte vectors per thread */
    int row_threads; /* REDUCE, last dim: threads sharing a row (32 or threads); middle
                        dim: threads of a column along R (1: one thread a column) */
    int split;       /* REDUCE: CTAs per row (> 1: partials through the workspace) */
    int cache;       /* REDUCE softmax, last dim: 16-byte vectors per thread held in registers */
    int cluster;     /* REDUCE softmax, last dim, sm_90: CTAs of a thread-block cluster per
                        row, the row held in registers (recipes/softmax_cluster.cu, with
                        cache vectors a thread); 0: not a cluster kernel */
    int min_blocks;  /* NORM rows: CTAs an SM the kernel's __launch_bounds__ asks for (0: 1) */
    int fast;        /* POINTWISE, REDUCE: exp and log of the expression as the fast
                        intrinsics (__expf, __logf: a few ulp, flush denormals; may fail
                        a tolerance: the judge decides) */
    int prefetch;    /* NORM rows and REDUCE softmax held by a cluster (sm_90): persistent
                        clusters, the next row's chunks bulk-copied to shared memory
                        meanwhile (CGR_ROWS_PREFETCH, CGR_PREFETCH) */
    int persist;     /* NORM hold: persistent CTAs that load their next chunk before waiting
                        for the current chunk's row (CGR_HOLD_PERSIST) */
    int lag;         /* NORM hold: > 0, persistent CTAs write each chunk `lag` rows after
                        its statistics, re-reading it from L2 (CGR_HOLD_LAG) */
    int group;       /* NORM rows prefetched, rows longer than a cluster holds: CTAs sharing
                        a row, exchanging partial statistics through the workspace (CGR_GROUP;
                        persistent, launched cooperatively); 0: none */
    int ring;        /* NORM group: > 0, each CTA's chunk of a row cut into ring_pieces pieces
                        streaming through a ring of `ring` shared-memory stages, the row held
                        there (CGR_RING, CGR_RING_PIECES); 0: a row in registers, one ahead */
    int ring_pieces;
    recipe_gemm_params gemm; /* GEMM */
    recipe_conv_params conv; /* CONV */
    struct recipe_pool_params {
        int cols;    /* output columns per thread (tx apart, so a warp's accesses are contiguous) */
        int rows;    /* output rows per thread (2-D/3-D pooling) */
        int tx;      /* threads across the output's last dim; threads / tx row groups */
        int smem;    /* 1: the CTA stages its input rows in shared memory; 0: windows are
                        read from global memory through L1/L2 */
    } pool;          /* POOL; all 0 otherwise */
    int staged;      /* STAGED: 1, and stage_v[s] is stage s's variant (an index into
                        recipe_variants() of that stage's plan, for the same GPU) */
    int stage_v[2];
} recipe_params;

/* What the variants are pruned by. */
typedef struct recipe_hw {
    int sms;                 /* streaming multiprocessors */
    int max_threads_per_sm;
    int regs_per_thread_max; /* the compiler's cap, 255 */
    int sm;                  /* compute capability x10: 90, 80, 89 */
    int smem_per_block;      /* bytes of shared memory a CTA may opt in to */
    int smem_per_sm;
    int regs_per_sm;
    int64_t l2_bytes;
} recipe_hw;

/* An H200 (sm_90a, 132 SMs). */
void recipe_hw_default(recipe_hw *hw);
/* From the GPU's facts (src/gpu.h: gpu_lookup()); NULL gives the default. */
struct gpu_facts;
void recipe_hw_from_gpu(const struct gpu_facts *g, recipe_hw *hw);

/* Fills out[0..max) with the parameter sets worth trying for this plan on hw, best
 * guess first, at most RECIPE_MAX_VARIANTS; returns how many. Never 0 for a covered
 * plan. The pruning rules are in recipe_gen.c above the function and in docs/recipes.md. */
#define RECIPE_MAX_VARIANTS 8
int recipe_variants(const recipe_plan *p, const recipe_hw *hw, recipe_params *out, int max);
void recipe_params_format(const recipe_params *k, strbuf *out);
/* How much plan shrinks an error of a product's values against the output's tolerance,
 * starting from shrink (1.0): times sqrt(R) for each average over R values (a mean, an
 * average pool, a logsumexp: a mean weighted by the softmax; also a convolution's mean or
 * logsumexp over its channels and a GEMM's over its rows, in their epilogues), back to 1
 * at a normalisation (its output is the error over the statistics' spread, as large as the
 * values), unchanged by sums (values and errors grow alike), maxima, minima and pointwise
 * steps. An estimate to order variants by (RECIPE_TF32_SHRINK): the judge measures each. */
double recipe_error_shrink(const recipe_plan *plan, double shrink);
/* For a product (conv or GEMM variants v[0..n)) whose errors the steps after it average
 * away: its plain TF32 copy second (the first listed, else variant 0's) and, where variant
 * 0 runs 3xFP16, its 2xFP16 copy third (CGR_PREC 3: the weights exact, x rounded to fp16;
 * correct on the averaged chains where TF32 failed, lab round 51), so that `--variants 2`
 * judges TF32 and, should it fail, 2xFP16 in its place. Returns the new count (<= max). */
int recipe_precision_gambles(recipe_params *v, int n, int max, bool conv);

/*
 * Writes the complete candidate .cu for plan and params into cu: the template
 * (recipes/pointwise.cu, recipes/reduce.cu, recipes/softmax_cluster.cu when
 * params->cluster > 0, or recipes/pool.cu, under recipes_dir) with its
 * `#include "X" // recipe:inline` lines replaced by recipes_dir/X and its
 * `// recipe:params` line by the generated parameters and expressions. Returns 0, or -1
 * with a message in err (a template missing or unreadable).
 */
int recipe_generate(const recipe_plan *p, const recipe_params *k, const char *recipes_dir,
                    strbuf *cu, strbuf *err);
/* The project's recipes/ directory (under cg_source_dir()); a static string. */
const char *recipe_dir(void);

#endif
