/*
 * util: small helpers every module uses: allocation that cannot fail silently, error
 * reporting in one style, whole-file reads and atomic writes, paths, hashing and clocks.
 */
#ifndef CUTEGEN_UTIL_H
#define CUTEGEN_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "strbuf.h"

/* Exit codes shared by all commands (documented in docs/exit-codes.md). */
enum cg_exit {
    EXIT_OK = 0,
    EXIT_VERDICT = 1,      /* eval: the candidate was judged, and it is not ok */
    EXIT_USAGE = 2,        /* bad flags or arguments */
    EXIT_BAD_TASK = 3,     /* the problem file does not load or its reference fails */
    EXIT_BAD_KERNEL = 4,   /* the kernel file is missing or unreadable */
    EXIT_NO_GPU = 5,       /* no usable CUDA GPU */
    EXIT_NO_CUTLASS = 6,   /* CUTLASS/CuTe headers not found */
    EXIT_NO_TORCH = 7,     /* python3 with torch not found */
    EXIT_NO_TOOL = 8,      /* nvcc, ncu or another tool missing */
    EXIT_INTERNAL = 9,     /* a failure of cutegen itself: please report it */
    EXIT_LLM = 10          /* a model call failed */
};

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
__attribute__((format(printf, 1, 2))) char *xasprintf(const char *fmt, ...);

/* Prints "cutegen: error: ..." to stderr and returns -1. */
__attribute__((format(printf, 1, 2))) int error(const char *fmt, ...);
/* Prints "cutegen: warning: ...". */
__attribute__((format(printf, 1, 2))) void warning(const char *fmt, ...);
/* Prints "cutegen: ..." as progress on stderr unless --quiet was given. */
__attribute__((format(printf, 1, 2))) void progress(const char *fmt, ...);
extern bool cg_quiet;
/* A broken invariant: prints and aborts. */
__attribute__((noreturn, format(printf, 1, 2))) void BUG(const char *fmt, ...);

/* Reads a whole file (at most max_bytes) into sb; -1 with errno set on failure. */
int read_file(const char *path, strbuf *sb, size_t max_bytes);
/* Writes data to path through a temporary file and rename(), fsync'd. */
int write_file_atomic(const char *path, const void *data, size_t len);
int mkdir_p(const char *path, unsigned mode);
bool file_exists(const char *path);
bool dir_exists(const char *path);
bool is_executable(const char *path);
/* Searches PATH for an executable; returns a malloc'd path or NULL. */
char *find_in_path(const char *name);
/* Directory holding the running executable (malloc'd). */
char *self_dir(void);
/* The project's source tree (python/, include/, prompts/): $CUTEGEN_SOURCE_DIR, else
 * the installed share dir next to the executable, else the compiled-in source dir. */
const char *cg_source_dir(void);
/* The cache directory: $CUTEGEN_CACHE_DIR, else $XDG_CACHE_HOME/cutegen, else ~/.cache/cutegen. */
const char *cg_cache_dir(void);

/* Lowercase hex SHA-256 of data, into out[65]. */
void sha256_hex(const void *data, size_t len, char out[65]);

/* Monotonic seconds. */
double now_seconds(void);

bool str_starts_with(const char *s, const char *prefix);
bool str_ends_with(const char *s, const char *suffix);

#endif
