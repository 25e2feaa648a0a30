/*
 * recipe_norm.h: the NORM family of the built-in proposer (src/recipe_norm.c,
 * recipes/norm.cu): "normalise by reduced statistics, broadcast back".
 *
 * A NORM plan computes out = epi(inputs, s_0 .. s_{m-1}) elementwise over the output's
 * shape, where each statistic is a reduction (sum, max, min, or the mean and biased
 * variance together) of a pointwise prologue pro_k(inputs, earlier statistics) over one
 * block of adjacent dims [d0, d1) of the output's shape, kept as size 1 and broadcast
 * back. LayerNorm, GroupNorm, InstanceNorm, RMSNorm, BatchNorm in eval mode and
 * F.normalize are rewritten into this form; x / x.norm(p, dim, keepdim=True),
 * x - x.amax(-1, keepdim=True), x / torch.norm(x) are in it already. No statistic at all
 * (BatchNorm with running statistics) is a pointwise pass with per-channel parameters.
 *
 * The statistics' values are extra inputs of the expressions: in the DAG, an RX_INPUT
 * whose index is n_inputs + s reads slot s (a SUM/MAX/MIN statistic fills one slot, a
 * VAR statistic two: the mean, then the biased variance). So rx_eval() evaluates the
 * prologues and the epilogue with x[] = input values followed by slot values, and the
 * generated kernels call cgr_pro_k(x) and cgr_epi(x) the same way.
 *
 * The kernel views the output (and every full-size input) as (outer, r, inner): r the
 * product of the reduced dims, outer of the dims before, inner of the dims after. The
 * view may split one dim in two (GroupNorm's channels into (groups, channels a group)),
 * which is why it has up to RECIPE_MAX_DIMS + 1 dims.
 */
#ifndef CUTEGEN_RECIPE_NORM_H
#define CUTEGEN_RECIPE_NORM_H

#include "recipe.h"

#define RECIPE_NORM_MAX_STATS 4
#define RECIPE_NORM_MAX_SLOTS 8
#define RECIPE_NORM_VIEW_DIMS (RECIPE_MAX_DIMS + 1)

enum norm_stat_kind { NS_SUM = 0, NS_MAX, NS_MIN, NS_VAR };

typedef struct norm_stat {
    enum norm_stat_kind kind;
    int level; /* 0: the prologue reads inputs only; 1: it reads level-0 slots too */
    int root;  /* the prologue's DAG node */
    int slot;  /* first slot (VAR: slot = mean, slot + 1 = biased variance) */
} norm_stat;

/* How a broadcast input is read along a 16-byte vector of the output (rows and the
 * pointwise pass): one offset per element, one element for the whole vector, or a
 * 16-byte vector of its own. */
enum norm_access { NA_ELEM = 0, NA_UNIFORM = 1, NA_VECTOR = 2 };

typedef struct recipe_norm {
    int n_stats, n_slots, levels;
    norm_stat stat[RECIPE_NORM_MAX_STATS];
    char slot_name[RECIPE_NORM_MAX_SLOTS][16]; /* "sum", "max", "mean", "var", ... */
    char what[160];                            /* e.g. "LayerNorm over the last 3 dims" */
    /* the view of the output */
    int ndim;
    int64_t shape[RECIPE_NORM_VIEW_DIMS];
    int d0, d1; /* reduced view dims [d0, d1); d0 == d1 == ndim when there are no stats */
    /* per input: strides in the view (0 on broadcast dims), and the access pattern */
    int64_t vstride[RECIPE_MAX_INPUTS][RECIPE_NORM_VIEW_DIMS];
    enum norm_access access[RECIPE_MAX_INPUTS];
} recipe_norm;

/* Kernel modes of recipes/norm.cu, chosen from the plan and the parameters. */
enum norm_mode { NM_POINTWISE = 0, NM_ROWS = 1, NM_COLS = 2, NM_SPLIT = 3, NM_HOLD = 4 };

/*
 * Tries the NORM family on a spec the other families did not cover. Returns 0 covered
 * (plan filled, why emptied), 1 not covered (why says why), 2 not a normalisation at all
 * (no norm module and no reduction broadcast back: plan and why untouched).
 */
int recipe_norm_recognise(const json_t *spec, recipe_plan *p, strbuf *why);

/* Plan text for recipe_describe / recipe_summary. */
void recipe_norm_describe(const recipe_plan *p, strbuf *out);
void recipe_norm_summary(const recipe_plan *p, strbuf *out);

/* The kernel mode a parameter set selects for this plan: split > 1 splits rows or columns
 * over CTAs, and with cache > 0 (rows) each CTA holds its chunk (NM_HOLD). */
enum norm_mode recipe_norm_mode(const recipe_plan *p, const recipe_params *k);

/* recipe_variants and the generator's parameter block for NORM plans. */
int recipe_norm_variants(const recipe_plan *p, const recipe_hw *hw, recipe_params *out, int max);
void recipe_norm_emit_params(const recipe_plan *p, const recipe_params *k, strbuf *sb);

/* The statistics' values for one (outer, inner) position, computed on the CPU in double
 * from a dense row-major copy of every input (NULL for unused ones): slots[] receives
 * n_slots values. For the tests: with norm_eval_out, the whole output at one element. */
void recipe_norm_eval_slots(const recipe_plan *p, const float *const *in, int64_t o, int64_t n,
                            float *slots);
float recipe_norm_eval_out(const recipe_plan *p, const float *const *in, int64_t idx);

/* From recipe_gen.c: one `const float tN` per node, as the other templates' expressions. */
void recipe_emit_expr(const recipe_plan *p, int root, const char *fn, const char *params, strbuf *sb);

#endif
