/*
 * integrity: static checks of a built candidate before any of it runs.
 *
 * A candidate may use the CUDA runtime, C math and memory functions and the parts of the
 * C++ runtime that CuTe's host code needs. Calls into other libraries (PyTorch, cuBLAS,
 * cuDNN), loading code (dlopen), processes (system, fork, exec), threads, files and
 * raw system calls are refused: the shared object's undefined symbols, its needed
 * libraries and its host instructions are read with binutils (nm, readelf, objdump).
 * The checks at run time (fresh seeds, re-poisoned outputs, input comparison, the
 * timer-escape check) live in eval.c.
 */
#ifndef CUTEGEN_INTEGRITY_H
#define CUTEGEN_INTEGRITY_H

#include <stdbool.h>

#include "strbuf.h"

enum integrity_result {
    INTEGRITY_OK = 0,
    INTEGRITY_REJECTED,    /* breaks a rule: why says which */
    INTEGRITY_NO_ENTRY,    /* exports no cg_forward */
    INTEGRITY_TOOL_ERROR   /* nm/readelf/objdump missing or failing */
};

/* Checks the shared object (and, for clearer messages, its source). */
enum integrity_result integrity_check_object(const char *so_path, strbuf *why);
/* Reads a failed build's log for link errors on symbols candidates may not use (a call
 * into cuBLAS fails to link, since only the CUDA runtime is linked): INTEGRITY_REJECTED
 * with why naming them, else INTEGRITY_OK (an ordinary compile error). */
enum integrity_result integrity_check_link_log(const char *log, strbuf *why);
/* True when the undefined symbol name may be used by a candidate; otherwise *reason says
 * what it is (exposed for tests). */
bool integrity_symbol_allowed(const char *sym, const char **reason);

#endif
