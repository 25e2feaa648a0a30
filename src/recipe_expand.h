/*
 * recipe_expand: composite fx calls rewritten into the primitive nodes the recipe
 * families recognise, before recognition (recipe.c). Private to the recipe module.
 *
 * DESIGN: a call such as F.scaled_dot_product_attention is one fx node, but what it
 * computes is a chain the families already cover: a batched matrix product with the
 * key transposed, a scale, softmax over the last dim, a second product. Rather than a
 * family for it, the spec's graph is rewritten into that chain (the call's own node
 * name kept for its last node, so later nodes and the output still refer to it), and
 * the rewritten spec is recognised as any other: the staged planner then cuts it where
 * the families need a cut (after the softmax, which the first product's epilogue
 * computes over whole rows).
 *
 * Only forms whose meaning is unambiguous are rewritten; any other use of such a call
 * (a mask, causal attention, dropout, grouped-query attention) is "not covered", with
 * the option named.
 */
#ifndef CUTEGEN_RECIPE_EXPAND_H
#define CUTEGEN_RECIPE_EXPAND_H

#include <jansson.h>
#include <stdint.h>

#include "strbuf.h"

/*
 * Rewrites spec's composite calls. Returns 0 with *out NULL when the graph has none (use
 * spec as it is), 0 with *out a new spec (the caller owns it) and what was rewritten in
 * done (one line, e.g. "scaled_dot_product_attention as matmul(q, k^T) * 0.03125,
 * softmax(dim=-1), matmul(., v)"), or 1 when a composite call is used in a way not
 * covered (why says "not covered: ..."). spec is the task spec itself (not the cache's
 * wrapper); it is only read.
 */
int recipe_expand(const json_t *spec, json_t **out, strbuf *done, strbuf *why);

/*
 * Reads of the shape of the value called name, whose shape is known (an input's, a staged
 * plan's intermediate's), folded into constants among graph's nodes after index `after`:
 * `x.shape` (builtins.getattr(x, 'shape')) and its entries (`b, c, d, h, w = x.shape`:
 * _operator.getitem), `x.size()` and `x.size(d)`. Those nodes are dropped and every
 * argument that named them holds the number (or the list) instead, so that
 * `x.view(b, c, -1)` reads as `x.view(32, 64, -1)`. Returns a new graph (the caller owns
 * it), or NULL when nothing was folded.
 */
json_t *recipe_fold_shape_reads(const json_t *graph, size_t after, const char *name, int ndim,
                                const int64_t *shape);

#endif
