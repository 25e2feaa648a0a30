/*
 * kb: the knowledge base, short notes on CuTe and Hopper written for this project
 * (knowledge/NAME.md), and their retrieval by relevance for the prompts.
 *
 * A note is a Markdown file: a first line "# Title", a line "tags: a, b, c", a few lines
 * of explanation and, where it helps, one compilable ```cuda snippet.
 *
 * DESIGN: BM25 (k1 = 1.2, b = 0.75) over title, tags and body, the title and tags
 * counted twice. Text is cut into terms on identifiers and words: CamelCase, snake_case,
 * "::" and letter/digit boundaries split ("make_tiled_copy" gives make, tiled, copy;
 * "SM90_64x128x16" gives sm, 90, 64, 128, 16), and every multi-part identifier is also
 * kept whole ("make_tiled_copy"), so an exact API name outweighs its parts. A query is
 * anything: a problem, a kernel, a compiler digest; its repeated terms count once.
 */
#ifndef CUTEGEN_KB_H
#define CUTEGEN_KB_H

#include <stddef.h>

#include "strbuf.h"

typedef struct kb kb;

/* Loads every *.md in dir (NULL: knowledge/ under cg_source_dir()), in name order.
 * Returns 0 (an empty directory gives an empty kb), or -1 with a message in err for a
 * missing directory or a note without its "# Title" and "tags:" lines. */
int kb_load(const char *dir, kb **out, strbuf *err);
void kb_free(kb *k);
size_t kb_size(const kb *k);

/* Appends to out the notes that best match query, whole notes only, most relevant
 * first, separated by a blank line, at most max_notes of them and max_chars bytes in
 * all (a note that would pass the cap is skipped for a smaller, less relevant one).
 * Notes scoring under a fifth of the best score, or nothing, are left out.
 * Returns how many notes were added. */
int kb_search(const kb *k, const char *query, int max_notes, size_t max_chars, strbuf *out);

#endif
