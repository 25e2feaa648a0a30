/*
 * recipe_pool: the POOL family of the built-in proposer (max and average pooling,
 * recipes/pool.cu). Internal to the recipe module: recipe.c calls recipe_pool_parse() on
 * every call node it does not know and recipe_pool_finish() once the graph is walked;
 * recipe_gen.c calls recipe_pool_emit() and recipe_pool_variants(). The plan's fields are
 * in recipe.h (struct recipe_pool); docs/recipes.md has what is covered and why.
 */
#ifndef CUTEGEN_RECIPE_POOL_H
#define CUTEGEN_RECIPE_POOL_H

#include "recipe.h"

/*
 * Is this call a pooling? name: the function's name (after its module), or the module's
 * class; node: the fx node (its args and kwargs); repr: the module's repr (modules only).
 * Returns -2 when it is no pooling, 1 when it is one that is not covered (why: "not
 * covered: ..."), 0 when *pool holds its window, stride, padding, dilation and modes (the
 * sizes follow in recipe_pool_finish()).
 */
int recipe_pool_parse(const char *name, const json_t *node, const char *repr, bool is_module,
                      recipe_pool *pool, strbuf *why);

/*
 * Completes p->pool from the pooled operand x (a spec input) and p->output: the pooled
 * sizes, the ceil mode where the repr does not say it, the windows of adaptive pooling;
 * checks the output's shape and dtype. Global pooling (every window the whole input)
 * becomes a REDUCE plan: a mean or max over the pooled elements, one row each.
 * Returns 0, or 1 not covered (why says why).
 */
int recipe_pool_finish(recipe_plan *p, const recipe_tensor *x, strbuf *why);

/* The pooling in words (recipe_describe's lines) and on one line (recipe_summary's). */
void recipe_pool_describe(const recipe_plan *p, strbuf *out);
void recipe_pool_summary(const recipe_plan *p, strbuf *out);

/* The template's pooling parameters (CGR_POOL_*, sizes, tile shape) for variant k. */
void recipe_pool_emit(const recipe_plan *p, const recipe_params *k, strbuf *sb);

/* recipe_variants() for a POOL plan: see the pruning rules above its definition. */
int recipe_pool_variants(const recipe_plan *p, const recipe_hw *hw, recipe_params *out, int max);

/*
 * PyTorch's pooled size along one dim (ATen's pooling_output_shape): floor or ceil of
 * (in + 2 pad - dil (k - 1) - 1) / s, plus one, where in ceil mode the last window must
 * start inside the input or its left padding. Below 1 when no window fits.
 */
int64_t recipe_pool_out_size(int64_t in, int64_t k, int64_t s, int64_t pad, int64_t dil,
                             bool ceil_mode);

/*
 * The CPU reference, written from ATen's kernels (max_pool2d/3d, avg_pool2d/3d): y (nc,
 * out[0], out[1], out[2]) = pool(x (nc, in[0], in[1], in[2])), both contiguous floats.
 * Max: padding never wins, NaN does; average: the sum over the window inside the input,
 * divided by divisor, else the window clipped to the padded input (count_include_pad) or
 * to the input; an empty window gives 0.
 */
void recipe_pool_ref(const recipe_pool *q, const float *x, float *y);

#endif
