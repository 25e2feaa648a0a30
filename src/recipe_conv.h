/*
 * recipe_conv: the CONV family of the built-in proposer (nn.Conv1d/Conv2d/Conv3d, groups
 * 1 or depthwise, and nn.ConvTranspose1d/2d/3d, groups 1; fp32, as an implicit GEMM on
 * the tensor cores, recipes/conv_tc.cu; depthwise directly, recipes/conv_dw.cu), between
 * recipe.c (the walk of the fx graph), recipe_gen.c (variants and generation) and
 * recipe_conv.c. Private to the recipe module: the public API stays recipe.h.
 *
 * DESIGN: before recipe.c walks the graph, recipe_conv_prescan() looks for the one
 * convolution module (call_module Conv1d/2d/3d, ConvTranspose1d/2d/3d) whose input is a
 * placeholder, reads its geometry from the module's repr (stride, padding, dilation,
 * output_padding, groups, padding_mode) and from the shapes of its parameters in the
 * spec (<target>.weight, <target>.bias), and sets the family. The walk then treats the convolution's value as the leaf RX_ACC (plus
 * the bias, an input read per output channel) and builds the pointwise epilogue with the
 * usual machinery; recipe_conv_finish() decides how the epilogue reads each input.
 */
#ifndef CUTEGEN_RECIPE_CONV_H
#define CUTEGEN_RECIPE_CONV_H

#include <jansson.h>

#include "recipe.h"
#include "strbuf.h"

/* Finds the convolution in graph. Returns 0 with plan->family RECIPE_CONV and plan->conv
 * filled, 0 with the family untouched when the graph has none, 1 when it has one that is
 * not covered (why holds "not covered: ..."). plan->inputs must be read. */
int recipe_conv_prescan(const json_t *graph, recipe_plan *plan, strbuf *why);

/* Whether the fx node called name is the plan's convolution. */
bool recipe_conv_is_node(const recipe_plan *plan, const char *name);

/* After the walk: result is the output's DAG node. Sets plan->epi, plan->root and
 * plan->conv.kind[]; 0, or 1 not covered (why says why). */
int recipe_conv_finish(recipe_plan *plan, int result, strbuf *why);

/* The implicit GEMM's index math on the CPU, step for step as recipes/conv_tc.cu does it
 * (tested against a direct convolution, and a direct transposed one): the element of x
 * that A(m, k) reads, or -1 where the tap falls into the zero padding, does not divide
 * by the stride (transposed), or m, k are out of range; the element of the weight that
 * B(co, k) is (transposed: through the copy to [COUT, K]), or -1 out of range; and the
 * index of y that the accumulator (m, co) is written to. Grouped (plan->groups > 1): A is
 * group g's (its CIN/groups input channels), co is the output channel (0 .. COUT - 1, of
 * group co / (COUT/groups)), k runs over the group's K. */
int64_t recipe_conv_gather(const recipe_conv_plan *c, int64_t g, int64_t m, int64_t k);
int64_t recipe_conv_weight_index(const recipe_conv_plan *c, int64_t co, int64_t k);
int64_t recipe_conv_out_index(const recipe_conv_plan *c, int64_t m, int64_t co);

/* Channels-last (recipes/conv_tc.cu CGR_NHWC), its steps on the CPU: the padded channel
 * count CP and the GEMM's K (taps x CP); the element of x that element i of the
 * workspace copy xs[nb][pixel][CP] holds (to_nhwc; -1: a padded channel); the element of
 * the weight that ws[co][k] holds (weight_nhwc; -1: padding or out of range); the index
 * into xs that A(m, k) reads (load_tile; -1: zero padding or out of range). Whether a
 * convolution and tile take it (recipe_conv_nhwc_fits in recipe_conv.c says when). */
int64_t recipe_conv_nhwc_cp(const recipe_conv_plan *c);
int64_t recipe_conv_nhwc_k(const recipe_conv_plan *c);
int64_t recipe_conv_nhwc_x_index(const recipe_conv_plan *c, int64_t i);
int64_t recipe_conv_nhwc_weight_index(const recipe_conv_plan *c, int64_t co, int64_t k);
int64_t recipe_conv_nhwc_gather(const recipe_conv_plan *c, int64_t m, int64_t k);
bool recipe_conv_nhwc_fits(const recipe_conv_plan *c, const recipe_conv_params *v);
/* A transposed convolution of stride 1, which channels-last runs as a convolution with the
 * weight flipped and the padding dil*(k-1) - pad (the channels-last functions above then
 * index x and the [CIN][COUT][taps] weight that way). */
bool recipe_conv_flippable(const recipe_conv_plan *c);

/* A pointwise convolution (1 x 1 taps, stride 1, no padding, groups 1; or such a transposed
 * one; x and the weight contiguous, no reduction over the channels after it) is a batched
 * GEMM in NCHW as it lies: y[b] (COUT x P) = W (COUT x CIN) @ x[b] (CIN x P), P the pixels of
 * an image. recipe_conv_as_gemm fills gemm with that GEMM's plan (family GEMM; M = COUT,
 * N = P, K = CIN, BATCH = N; A the weight, K-major, or M-major when transposed ([CIN,
 * COUT]), shared by the batches; B x[b], N-major; the output (BATCH, M, N) is y; an input
 * a channel read a row, RG_MROW), sharing p's nodes and inputs (a shallow copy: not to be
 * released); -1 when p is not one. Its variants carry recipe_conv_params.as_gemm. */
bool recipe_conv_pointwise(const recipe_plan *plan);
int recipe_conv_as_gemm(const recipe_plan *plan, recipe_plan *gemm);

/* Whether a mean or sum over all the output pixels of the convolution folds into sums of x
 * over cells of its planes and sums of the weight's taps reaching each cell (recipes/
 * conv_mean.cu, plan.conv.spatred): a transposed convolution whose taps each reach every
 * input index along each dim but a few border ones (lead first and trail last, from
 * recipe_conv_fold_border: each a cell, the rest one cell), at most RECIPE_CONV_FOLD_CELLS
 * cells a plane and 32 border indices along W. Without padding, one cell. */
#define RECIPE_CONV_FOLD_CELLS 64
void recipe_conv_fold_border(const recipe_conv_plan *c, int d, int64_t *lead, int64_t *trail);
bool recipe_conv_pixels_fold(const recipe_conv_plan *c);

/* A mean or sum over some of the output's dims of a transposed convolution (plan.conv.pf_mask,
 * recipes/conv_fold.cuh): the folded dims' cells (as above) become input channels of a
 * transposed convolution over the other dims; at most RECIPE_CONV_PREFOLD_CELLS cells, and
 * at most half the folded output's size (else the folded convolution saves too little). */
#define RECIPE_CONV_PREFOLD_CELLS 16

/* The plan in words (recipe_describe) and on one line (recipe_summary). */
void recipe_conv_describe(const recipe_plan *plan, strbuf *out);
void recipe_conv_summary(const recipe_plan *plan, strbuf *out);

/* Variants (pruned by hw), the template, its CGR_* parameters, the variant in words. */
int recipe_conv_variants(const recipe_plan *plan, const recipe_hw *hw, recipe_params *out, int max);
/* The same without the direct kernel (the tensor-core ones only). */
int recipe_conv_variants_tiled(const recipe_plan *plan, const recipe_hw *hw, recipe_params *out, int max);
/* The direct kernel (recipes/conv_direct.cu): the products an output element of a
 * transposed convolution takes on average (a group's input channels x the taps that reach
 * it); offered first where a
 * strided transposed convolution's are at most RECIPE_CONV_DIRECT_PRODUCTS, after the
 * WGMMA variants (or the first tensor-core one) up to RECIPE_CONV_DIRECT_SECOND. */
#define RECIPE_CONV_DIRECT_PRODUCTS 32.0
#define RECIPE_CONV_DIRECT_SECOND 64.0
double recipe_conv_direct_products(const recipe_conv_plan *c);
const char *recipe_conv_template(const recipe_plan *plan, const recipe_params *k);
void recipe_conv_emit_params(const recipe_plan *plan, const recipe_params *k, strbuf *sb);

/* 1 when the transposed convolution runs as sub-pixel phases (recipes/conv_tc.cu
 * CGR_PHASES): a stride above 1 somewhere, stride 1 or dilation 1 in every dim. */
int recipe_conv_phases(const recipe_conv_plan *c);
/* The phases' index math (recipes/conv_tc.cu's steps, for the CPU checks): how many
 * phases, the rows of each phase's box, its K, and for row ml of phase `phase` the x
 * index of GEMM column k (-1: zero), the y index of channel co (-1: past the output),
 * and the w index of B(co, k). */
int64_t recipe_conv_phase_count(const recipe_conv_plan *c);
int64_t recipe_conv_phase_rows(const recipe_conv_plan *c);
int64_t recipe_conv_phase_k(const recipe_conv_plan *c, int64_t phase);
int64_t recipe_conv_phase_gather(const recipe_conv_plan *c, int64_t g, int64_t phase, int64_t ml, int64_t k);
int64_t recipe_conv_phase_out_index(const recipe_conv_plan *c, int64_t phase, int64_t ml, int64_t co);
int64_t recipe_conv_phase_weight_index(const recipe_conv_plan *c, int64_t phase, int64_t co, int64_t k);
void recipe_conv_params_format(const recipe_params *k, strbuf *out);

/* recipe_gen.c: the expression DAG below root as a device function fn(params). */
void recipe_emit_expr(const recipe_plan *p, int root, const char *fn, const char *params, strbuf *sb);

#endif
