/*
 * build: the build pool. Turns a candidate .cu file into a shared object linked only
 * with the CUDA runtime, through a content-hash cache, several builds in parallel, each
 * with a time limit; compiler output is digested (first distinct errors mapped to the
 * candidate's lines, template noise dropped, capped) for people and models, and the
 * full log is kept on disk.
 */
#ifndef CUTEGEN_BUILD_H
#define CUTEGEN_BUILD_H

#include <stdbool.h>

#include "strbuf.h"

typedef struct build_config {
    const char *nvcc;            /* path to nvcc; NULL: found in CUDA_HOME, PATH, /usr/local/cuda */
    const char *cutlass_include; /* directory holding cute/ and cutlass/ */
    const char *arch;            /* "sm_90a", "sm_80", ...: the GPU's own */
    const char *cache_dir;       /* where built objects and logs live */
    const char *abi_include;     /* directory holding cutegen/abi.h */
    double timeout_s;            /* per build; <= 0: 300 s */
    int jobs;                    /* parallel builds; <= 0: the CPU count */
    const char *const *extra_flags; /* NULL-terminated, or NULL */
    const char *mode;            /* "split" (device and host compiled at once, then linked;
                                    the default) or "plain" (one nvcc call); NULL: "split" */
    bool force;                  /* rebuild even when the cache holds a result */
} build_config;

enum build_status {
    BUILD_OK = 0,
    BUILD_COMPILE_ERROR, /* the compiler rejected the source */
    BUILD_TIMEOUT,       /* the compiler ran past the time limit */
    BUILD_TOOL_ERROR     /* nvcc missing or broken, cache unwritable: not the kernel's fault */
};

typedef struct build_result {
    enum build_status status;
    char hash[65];   /* content hash: source, flags, nvcc and CUTLASS versions, arch */
    char *so_path;   /* the shared object (when BUILD_OK) */
    char *log_path;  /* the full compiler log */
    strbuf digest;   /* the digested compiler output, for a person or a model */
    bool cached;     /* served from the cache */
    double seconds;  /* wall time of this build (0 when cached) */
    const char *mode; /* how it was built: "split", "plain" (split fell back), or "cache" */
} build_result;

void build_result_init(build_result *r);
void build_result_release(build_result *r);
const char *build_status_name(enum build_status s);

/* Builds one source file. Returns 0 when a result (of any status) was produced. */
int build_kernel(const build_config *cfg, const char *source_path, build_result *r);
/* Builds n files with up to cfg->jobs compilers at once; results[i] for sources[i]. */
int build_many(const build_config *cfg, const char *const *sources, int n, build_result *results);

/* Finds the CUTLASS include directory: the flag value if given, then $CUTLASS_DIR
 * (its include/), then python3's nvidia-cutlass package (cutlass_library/source/include),
 * then /opt/cutlass/include, /usr/local/cutlass/include, /usr/local/include, /usr/include.
 * Sets *where to the directory holding cute/ and *version to CUTLASS's version, and
 * *how to how it was found. Returns 0, or -1 with a message in *how saying how to get it. */
int cutlass_locate(const char *flag_dir, strbuf *where, strbuf *version, strbuf *how);
/* Finds nvcc and its version ("13.0.88"); -1 with a message saying how to get it. */
int nvcc_locate(strbuf *path, strbuf *version, strbuf *how);

/* "sm_90a" -> "-gencode=arch=compute_90a,code=sm_90a"; -1 for a malformed arch. */
int build_gencode(const char *arch, strbuf *out);

#endif
