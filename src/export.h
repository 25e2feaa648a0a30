/*
 * export: a run's best kernels as KernelBench ModelNew files, so that KernelBench's own
 * harness can judge them.
 *
 * DESIGN. Each file is one Python module: the reference problem verbatim (ModelNew
 * subclasses its Model, so parameters are made and initialised exactly as KernelBench
 * makes the reference's), the kernel verbatim, cutegen/abi.h, and a thin C++ binding that
 * turns torch tensors into cg_tensor arrays and calls cg_forward on the current stream.
 * The module builds them with torch.utils.cpp_extension.load_inline when ModelNew is
 * made (so the build is not timed). Nothing here needs torch: the file is text.
 *
 * Errors: functions append to err and return -1; nothing here prints or exits.
 */
#ifndef CUTEGEN_EXPORT_H
#define CUTEGEN_EXPORT_H

#include <jansson.h>

#include "strbuf.h"

typedef struct export_opts {
    const char *run_dir;
    const char *out_dir;
    const char *format;          /* "kernelbench" (the only one) */
    const char *cutlass_include; /* recorded as the fallback include dir; NULL: located now */
    const char *problems_dir;    /* where to look for a problem whose recorded path is gone */
    const char *arch;            /* NULL: sm_90a */
} export_opts;

/* The file for one kernel. name: the task's name; spec: its task spec (inputs with
 * kind input/param/buffer, outputs); header: a comment block (may be NULL). */
int export_modelnew(strbuf *out, const char *name, const char *problem_source, const char *kernel_source,
                    json_t *spec, const char *abi_header, const char *cutlass_include, const char *arch,
                    const char *header, strbuf *err);

/* Exports every task of the run that has a correct kernel into o->out_dir, with an
 * index.json. One line a task goes to log (exported, or why not). Returns the number
 * exported, or -1. */
int export_run(const export_opts *o, strbuf *log, strbuf *err);

#endif
