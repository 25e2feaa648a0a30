/*
 * recipe_hoist.h: a NORM plan's expressions rewritten for emission so that an element
 * costs only what depends on it (src/recipe_hoist.c).
 *
 * The kernels evaluate the epilogue once an element. Written as the module computes it,
 * GroupNorm's ((x - mean) * rsqrt(var + eps)) * w + b takes a square root and a division
 * (with its slow path) an element unless the compiler hoists them, and three FP operations
 * where two do; RMSNorm's x / sqrt(...) an IEEE division an element. The compiler may not
 * reassociate float math, so the generator does, on a copy of the DAG:
 *   1. a division by a value that does not vary along the row (slots, scalars,
 *      constants) becomes a multiplication by its reciprocal;
 *   2. a product of an element-dependent value by several such factors multiplies the
 *      factors first: (a * u) * v -> a * (u * v), so that u * v is computed once a
 *      16-byte vector (u, v row- or vector-uniform);
 *   3. each largest subexpression of the statistics' slots alone (rsqrt(var + eps), 1 /
 *      sqrt(sum / n + eps)) becomes a derived slot: computed once a row, right after the
 *      last statistic it reads is known (the template's to_slots calls cgr_derive), and
 *      read by the epilogue like any slot.
 * Each rewrite changes rounding by an ulp or two, never the formula: the results agree with
 * the unrewritten form to ~1e-6 relative (tests/cli/t0711).
 */
#ifndef CUTEGEN_RECIPE_HOIST_H
#define CUTEGEN_RECIPE_HOIST_H

#include "recipe.h"
#include "recipe_norm.h"
#include "strbuf.h"

#define RECIPE_HOIST_MAX_DERIVED 6

typedef struct recipe_hoist {
    recipe_plan plan; /* a shallow copy of the NORM plan with its own (rewritten, grown) nodes */
    int root;         /* the epilogue's root in plan */
    int pro_root[RECIPE_NORM_MAX_STATS]; /* each statistic's prologue root in plan */
    int n_derived;
    int derived[RECIPE_HOIST_MAX_DERIVED]; /* node computing derived slot n_slots + d */
    int after[RECIPE_HOIST_MAX_DERIVED];   /* the statistic after whose slots it is computed */
    int *subst;       /* [plan.n_nodes]: the x[] index a node is read from, or -1 */
} recipe_hoist;

/* Rewrites p's prologues and epilogue (p a NORM plan) unless plain is set (then h holds
 * p's expressions as they are, no derived slots). Release with recipe_hoist_release. */
void recipe_hoist_norm(const recipe_plan *p, bool plain, recipe_hoist *h);
void recipe_hoist_release(recipe_hoist *h);

/* Whether CUTEGEN_RECIPE_PLAIN is set (to 1): expressions written as recognised (and a
 * norm's broadcast offsets in 64 bits), for comparing the rewritten form against
 * (tests/cli/t0711, lab round 48). */
bool recipe_plain_expressions(void);

/* Emits `__device__ __forceinline__ void cgr_derive(int k, float *s)`: after statistic
 * k's slots are set, the derived slots that depend on nothing later (and the helper
 * functions it calls). An empty function when there are none. */
void recipe_hoist_emit_derive(const recipe_hoist *h, strbuf *sb);

/* Emits node root of h's plan as function fn, nodes with a derived slot read from x[]. */
void recipe_hoist_emit_expr(const recipe_hoist *h, int root, const char *fn, strbuf *sb);

/* recipe_emit_expr (src/recipe_gen.c) with subst[n] >= 0 meaning: node n is read from x[subst[n]]. */
void recipe_emit_expr(const recipe_plan *p, int root, const char *fn, const char *params, strbuf *sb);
void recipe_emit_expr_subst(const recipe_plan *p, int root, const char *fn, const char *params, const int *subst,
                            strbuf *sb);

#endif
