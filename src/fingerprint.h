/*
 * fingerprint: the structure of a built candidate, read from compiled code with no GPU:
 * which kernels it has, their launch bounds, shared memory, whether they spill, and
 * which instruction families appear (tensor-core MMA, WGMMA, cp.async, TMA, 128-bit
 * global loads, shuffles, atomics, local memory, ldmatrix). Delayed profiling watches it:
 * once the fingerprint holds for a few accepted steps, the kernel's structure has
 * settled and profiler feedback is worth its cost (DESIGN.md, "Delayed profiling").
 *
 * Inputs are texts the build already has or can make: `-Xptxas -v` output, PTX, and
 * when cuobjdump exists, its --dump-sass and --dump-resource-usage output for the .so.
 * The canonical text has one block per kernel, sorted by mangled name; its structural
 * lines are hashed (SHA-256). Registers, stack and exact spill bytes are reported but
 * not hashed: they move with small code changes that leave the structure alone.
 */
#ifndef CUTEGEN_FINGERPRINT_H
#define CUTEGEN_FINGERPRINT_H

#include <stdbool.h>

#include "strbuf.h"

typedef enum fp_family {
    FP_MMA,       /* mma.sync / HMMA, IMMA, DMMA */
    FP_WGMMA,     /* wgmma / HGMMA, IGMMA, QGMMA */
    FP_CP_ASYNC,  /* cp.async / LDGSTS */
    FP_TMA,       /* cp.async.bulk(.tensor) / UTMALDG, UTMASTG, UBLKCP */
    FP_LDG128,    /* 128-bit global loads: ld.global.v4.b32 / LDG.E.128 */
    FP_LDMATRIX,  /* ldmatrix / LDSM */
    FP_SHFL,      /* shfl.sync / SHFL */
    FP_ATOMIC,    /* atom, red / ATOM, ATOMG, ATOMS, RED */
    FP_LOCAL,     /* local memory: ld/st.local / LDL, STL */
    FP_COUNT
} fp_family;

typedef struct fp_kernel {
    char *name;            /* mangled */
    char *demangled;       /* NULL when not demangled */
    int regs, smem, stack, spill_stores, spill_loads, barriers;  /* -1: unknown */
    int maxntid[3], reqntid[3];   /* 0: not given */
    int minnctapersm;
    unsigned families;     /* bit (1u << fp_family) */
} fp_kernel;

typedef struct fingerprint {
    fp_kernel *kernels;
    size_t nkernels;
    unsigned sources;      /* bit 0 ptxas -v, 1 PTX, 2 SASS, 3 resource usage */
    char *text;            /* canonical text (after fingerprint_finish) */
    char hash[65];         /* SHA-256 of the structural lines */
} fingerprint;

void fingerprint_init(fingerprint *f);
void fingerprint_release(fingerprint *f);

/* Each adds what its text holds to the kernels it names (a kernel is created on first
 * sight). Returns the number of kernels the text named, or -1 with err when it holds
 * none (the wrong file?). */
int fingerprint_add_ptxas(fingerprint *f, const char *ptxas_log, strbuf *err);
int fingerprint_add_ptx(fingerprint *f, const char *ptx, strbuf *err);
int fingerprint_add_sass(fingerprint *f, const char *sass, strbuf *err);
int fingerprint_add_resource_usage(fingerprint *f, const char *res, strbuf *err);

/* Sorts the kernels, demangles names when c++filt is found (optional), builds the
 * canonical text and the hash. */
void fingerprint_finish(fingerprint *f);

bool fingerprint_equal(const fingerprint *a, const fingerprint *b);
/* What changed from a to b, one line per change ("+kernel X", "k: +wgmma -mma",
 * "k: smem 4096 -> 8192"); empty when equal. */
void fingerprint_diff(const fingerprint *a, const fingerprint *b, strbuf *out);

const char *fp_family_name(fp_family fam);

/* Compiles source with nvcc twice (-ptx, then -cubin -Xptxas -v) in a temporary
 * directory, each run time-limited, and fingerprints the result. flags: NULL-terminated
 * nvcc flags (-arch, -std, -I...). Returns 0, or -1 with err holding nvcc's message. */
int fingerprint_compile(const char *nvcc, const char *const *flags, const char *source,
                        double timeout_s, fingerprint *f, strbuf *err);

/* Fingerprints a built shared object with cuobjdump (--dump-sass and
 * --dump-resource-usage), plus the build's ptxas -v log when given. cuobjdump NULL: from
 * PATH or /usr/local/cuda/bin. Returns -1 with err when cuobjdump is missing or fails. */
int fingerprint_from_so(const char *cuobjdump, const char *so_path, const char *ptxas_log,
                        double timeout_s, fingerprint *f, strbuf *err);

#endif
