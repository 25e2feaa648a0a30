/*
 * recipe_stage: two-stage plans (RECIPE_STAGED) of the built-in proposer, between
 * recipe.c (recognition), recipe_gen.c (variants and generation) and recipe_stage.c.
 * Private to the recipe module: the public API stays recipe.h.
 *
 * DESIGN: a level-2 chain such as conv -> InstanceNorm -> divide, or conv -> subtract ->
 * hardswish -> MaxPool -> mish, is not one family: the convolution's epilogue is
 * pointwise, and the norm or pool needs a neighbourhood of its output. It is cut after
 * one fx node (the cut) into two task specs: stage 0 computes the graph up to the cut,
 * stage 1 the rest, with the cut's value as a new first input. Both are recognised by
 * the ordinary families; stage 1 may itself be cut again (a chain of up to 5 stages:
 * conv | MaxPool + hardtanh | mean + tanh). The candidate file holds every generated
 * kernel, each stage inside its own namespace, and a cg_forward that runs stage 0 into
 * the workspace and stage 1 from it. Each intermediate makes one round trip through
 * memory, as eager's does, but everything between two cuts is fused.
 *
 * The intermediate's shape: the product's (from the conv/GEMM prescan) when stage 0
 * holds the convolution or matrix product; else what a reduction, pooling or scan gives
 * (stage 0's output marked "free" in its spec, recipe_plan.output_free); else stage 0's
 * input 0's shape, taken only from a pointwise or norm plan whose output expression
 * reads a tensor of that shape (so never a reduced value broadcast up to it).
 *
 * Which cut: the fewest stages first, then the latest cut that leaves every stage
 * covered (the most fused into the earlier stage: the convolution's epilogue runs once
 * an element, a pool's prologue once a window element). A cut is valid only when nothing
 * after it reads a value computed before it but the cut's own.
 */
#ifndef CUTEGEN_RECIPE_STAGE_H
#define CUTEGEN_RECIPE_STAGE_H

#include <jansson.h>

#include "recipe.h"
#include "strbuf.h"

struct recipe_staged {
    recipe_plan stage[2];
    char cut[96];           /* the fx node whose value crosses */
    recipe_tensor mid;      /* that value: contiguous, in the workspace (stage 0's output) */
    recipe_tensor mid_in;   /* stage 1's input 0: mid, or mid viewed (squeeze, unsqueeze,
                               view, reshape, flatten right after the cut: same memory) */
    bool out_view;          /* the task's output is mid viewed: no stage 1 (stage 0 writes
                               the output, handed to it with mid's shape) */
    /* the stages' variants for the GPU recipe_variants() was last asked about (filled
     * there; recipe_generate() fills them for an H200 when it comes first) */
    bool have_vars;
    int n_vars[2];
    recipe_params vars[2][RECIPE_MAX_VARIANTS];
};

/* Recognises spec as a chain of stages. Returns 0 with plan->family RECIPE_STAGED, 1
 * when no cut covers it (why gets a sentence on what the two-stage cut right after the
 * convolution or matrix product lacked, appended), 2 when nothing covers it and it has
 * no convolution or matrix product (why untouched). plan->inputs and output must already
 * be read from spec. */
int recipe_staged_recognise(const json_t *spec, recipe_plan *plan, strbuf *why);

/* A matrix product with a reduction over its rows (a GEMM plan, gemm_tc.cu's fused row
 * reduction) as two stages instead: the product with its pointwise epilogue, then the
 * reduction (softmax, GroupNorm, logsumexp, ...) as a plan of its own, so that the
 * product may run on Hopper's warpgroup MMAs (gemm_wgmma.cu has no row reductions). The
 * cut is the latest one whose stage 0 is the product alone. Fills plan->staged (the GEMM
 * plan keeps its family: recipe_variants() lists the staged composite first where its
 * product's first variant is a WGMMA kernel) and returns 0; 1 when no such cut covers
 * the spec (plan untouched). */
int recipe_staged_rows_apart(const json_t *spec, recipe_plan *plan);

/* The composite's parameter sets: both stages' first, then each stage's next ones with
 * the other's first, alternately (stage 0's first). Where the stages after a product
 * shrink its errors at least RECIPE_TF32_SHRINK times (recipe_error_shrink), its
 * plain TF32 variant moves to stage 0's second and 2xFP16 to its third
 * (recipe_precision_gambles), and the composite lists (1, 0) and (2, 0) right after (0, 0). */
int recipe_staged_variants(const recipe_plan *plan, const recipe_hw *hw, recipe_params *out, int max);

/* The candidate file: both stages' sources in their namespaces, and the entry points. */
int recipe_staged_generate(const recipe_plan *plan, const recipe_params *k, const char *recipes_dir,
                           strbuf *cu, strbuf *err);

/* recipe.c: recipe_recognise() without the staging (a stage's spec is never cut again). */
int recipe_recognise_single(const json_t *spec, recipe_plan *plan, strbuf *why);

void recipe_staged_describe(const recipe_plan *plan, strbuf *out);
void recipe_staged_summary(const recipe_plan *plan, strbuf *out);
void recipe_staged_free(struct recipe_staged *s);

/* The text transformations of the composition, exported for the unit tests: the
 * stage's #include lines (hoisted before both namespaces), the stage's source with its
 * entry points renamed (cg_forward -> stage_forward, cg_workspace_bytes ->
 * stage_workspace_bytes, CG_EXPORT -> static; a stage_workspace_bytes returning 0 added
 * when it had none), and an #undef of every macro it #defines. */
void recipe_stage_includes(const char *src, strbuf *out);
void recipe_stage_body(const char *src, strbuf *out);
void recipe_stage_undefs(const char *src, strbuf *out);

#endif
