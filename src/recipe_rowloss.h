/*
 * recipe_rowloss.h: the ROWLOSS family of the built-in proposer (src/recipe_rowloss.c,
 * recipes/rowloss.cu): a loss whose every row needs statistics of the whole row, then a
 * mean or sum over the rows. Cross-entropy over (N, C) logits and class indices
 * (F.cross_entropy, nn.CrossEntropyLoss) and the triplet margin loss over (N, D)
 * anchors, positives and negatives (F.triplet_margin_loss, nn.TripletMarginLoss).
 *
 * Recognised by the operator and its settings (function arguments, or a module's
 * module_attrs in the spec), never by the problem: the graph must be the inputs, that one
 * call, and the output.
 */
#ifndef CUTEGEN_RECIPE_ROWLOSS_H
#define CUTEGEN_RECIPE_ROWLOSS_H

#include "recipe.h"

/*
 * Tries the ROWLOSS family. Returns 0 covered (plan filled, why emptied), 1 not covered
 * (why says why), 2 not a row loss at all (plan and why untouched).
 */
int recipe_rowloss_recognise(const json_t *spec, recipe_plan *p, strbuf *why);

void recipe_rowloss_describe(const recipe_plan *p, strbuf *out);
void recipe_rowloss_summary(const recipe_plan *p, strbuf *out);
int recipe_rowloss_variants(const recipe_plan *p, const recipe_hw *hw, recipe_params *out, int max);
void recipe_rowloss_emit_params(const recipe_plan *p, const recipe_params *k, strbuf *sb);

#endif
