/*
 * edit: turns a model's reply into the next version of a kernel. A reply holds either
 * one whole file in a fenced code block, or SEARCH/REPLACE blocks anchored on exact
 * lines of the current kernel. The blocks apply in order, all or nothing; a block that
 * matches nowhere or more than once is reported back with the nearest text of the
 * kernel and its line numbers, in words meant for the model. A reply with no usable
 * code is an ordinary result (EDIT_NONE, !ok), never a crash. Pure text in, text out;
 * nothing is printed. docs/edits.md describes the format and the matching rules.
 */
#ifndef CUTEGEN_EDIT_H
#define CUTEGEN_EDIT_H

#include <stdbool.h>

#include "strbuf.h"

typedef enum edit_kind { EDIT_NONE = 0, EDIT_WHOLE_FILE, EDIT_BLOCKS } edit_kind;

typedef struct edit_result {
    edit_kind kind;
    bool ok;              /* a new source is in .source */
    strbuf source;        /* the new kernel (empty unless ok); ends with a newline */
    strbuf error;         /* for the model when !ok: precise, short (cap ~1500 chars) */
    strbuf notes;         /* for the log: fuzzy matches used, which block chosen, ... */
    int blocks_total;     /* SEARCH/REPLACE blocks found in the reply */
    int blocks_applied;   /* blocks_total when ok; 0 when any block failed */
    strbuf explanation;   /* the prose outside code, trimmed, capped at 1000 chars */
} edit_result;

void edit_result_init(edit_result *r);
void edit_result_release(edit_result *r);

/*
 * Reads reply and, from current (the kernel the model was shown; "" when there is
 * none yet, where only a whole file or a block with an empty SEARCH makes sense),
 * makes the new kernel. r must have been initialised; whatever it held is replaced.
 * Returns 0 (allocation failure aborts the program); the outcome is r->ok.
 */
int edit_apply(const char *current, const char *reply, edit_result *r);

#endif
