/*
 * compile_digest: turns a compiler log (nvcc: EDG/cudafe++ and cicc front ends, the host
 * gcc, ptxas, the linker) into the short text a person or a model reads to fix the
 * kernel: the first distinct errors, each mapped to a line of the candidate file (errors
 * inside CuTe/CUTLASS headers are traced through their instantiation notes back to the
 * candidate line that caused them), that line quoted, template noise dropped, the whole
 * capped in size with a count of what was left out. Pure text in, text out.
 */
#ifndef CUTEGEN_COMPILE_DIGEST_H
#define CUTEGEN_COMPILE_DIGEST_H

#include <stddef.h>

#include "strbuf.h"

typedef struct compile_digest_opts {
    const char *candidate; /* the candidate's file name as the compiler saw it ("relu.cu") */
    const char *source;    /* the candidate's text, to quote its lines; NULL: no quotes */
    size_t max_chars;      /* cap on the digest's size; 0: 2000 */
    int max_errors;        /* most distinct errors shown; 0: 5 */
} compile_digest_opts;

/* Appends the digest of log to out. When the log holds no recognisable error, the
 * digest is its last lines (still capped). */
void compile_digest(const char *log, const compile_digest_opts *opts, strbuf *out);

#endif
