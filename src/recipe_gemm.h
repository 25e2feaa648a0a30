/*
 * recipe_gemm: the GEMM family of the built-in proposer, between recipe.c (the walk of
 * the fx graph), recipe_gen.c (variants and generation) and recipe_gemm.c. Private to
 * the recipe module: the public API stays recipe.h.
 *
 * DESIGN: before recipe.c walks the graph, recipe_gemm_prescan() looks for the one
 * matrix product (torch.matmul/mm/bmm, `@`, nn.Linear, F.linear, einsum) whose operands
 * are inputs or transposes of inputs, and works out its geometry (M, N, K, batch, which
 * operand is K-major, leading strides). The walk then treats the product as the leaf
 * RX_ACC (plus the Linear's bias), skips the transposes it consumed, passes a triu/tril
 * of the product through (the mask is applied in the kernel), and builds the pointwise
 * epilogue with the usual machinery; recipe_gemm_finish() decides how the epilogue
 * reads each input.
 */
#ifndef CUTEGEN_RECIPE_GEMM_H
#define CUTEGEN_RECIPE_GEMM_H

#include <jansson.h>

#include "recipe.h"
#include "strbuf.h"

/* Finds the product in graph. Returns 0 with plan->family RECIPE_GEMM and plan->gemm
 * filled, 0 with the family untouched when the graph has no product, 1 when it has one
 * that is not covered (why holds "not covered: ..."). plan->inputs must be read. */
int recipe_gemm_prescan(const json_t *graph, recipe_plan *plan, strbuf *why);

/* What the walk does with the fx node called name in a GEMM plan. */
enum recipe_gemm_role {
    RGR_NONE = 0, /* an ordinary node */
    RGR_PRODUCT,  /* the product: the value RX_ACC (+ the bias) */
    RGR_VIEW,     /* a transpose consumed by the product: no value */
    RGR_MASK      /* triu/tril of the product: the product's value, masked in the kernel */
};
enum recipe_gemm_role recipe_gemm_role(const recipe_plan *plan, const char *name);

/* After the walk: result is the output's DAG node. Sets plan->epi and plan->gemm.in[];
 * 0, or 1 not covered (why says why). */
int recipe_gemm_finish(recipe_plan *plan, int result, strbuf *why);

/* The plan in words (recipe_describe) and on one line (recipe_summary). */
void recipe_gemm_describe(const recipe_plan *plan, strbuf *out);
void recipe_gemm_summary(const recipe_plan *plan, strbuf *out);

/* Variants (pruned by hw), the template a variant uses, its CGR_* parameters, and the
 * variant in words. */
int recipe_gemm_variants(const recipe_plan *plan, const recipe_hw *hw, recipe_params *out, int max);
const char *recipe_gemm_template(const recipe_plan *plan, const recipe_params *k);
void recipe_gemm_emit_params(const recipe_plan *plan, const recipe_params *k, strbuf *sb);
void recipe_gemm_params_format(const recipe_params *k, strbuf *out);

/* recipe_gen.c: the expression DAG below root as a device function fn(params). */
void recipe_emit_expr(const recipe_plan *p, int root, const char *fn, const char *params, strbuf *sb);

#endif
