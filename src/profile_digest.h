/*
 * profile_digest: what a profile says about why a kernel is slow, compact enough for an
 * LLM prompt (under ~1,500 characters for one kernel) and as JSON for the store. Built
 * from a parsed raw page (ncu_table), optionally the details page's advice, the GPU's
 * facts and the task's speed of light. Every number in it comes from a counter or from
 * arithmetic on counters; where a metric was not collected the digest says nothing.
 */
#ifndef CUTEGEN_PROFILE_DIGEST_H
#define CUTEGEN_PROFILE_DIGEST_H

#include <jansson.h>
#include <stdbool.h>

#include "gpu.h"
#include "ncu.h"
#include "strbuf.h"

/* The task's speed-of-light inputs (from the task spec); flops/bytes 0 when unknown. */
typedef struct digest_task {
    double flops;
    double bytes;
    gpu_dtype dtype;
} digest_task;

typedef struct digest_stall {
    const char *name;    /* ncu's stall reason, e.g. "long_scoreboard" */
    double cycles;       /* warp cycles per issued instruction in this state */
    double share;        /* of all cycles per issued instruction (0..1) */
} digest_stall;

#define DIGEST_MAX_ADVICE 3

typedef struct digest_kernel {
    char *name;              /* full name as ncu gives it */
    char *short_name;
    int launches;
    double time_s;           /* summed over its launches */
    double share;            /* of all profiled time (0..1) */
    int block_threads, grid_blocks, regs, smem_block;  /* of the first launch */
    double waves;
    /* speed of light, % of peak (time-weighted over launches) */
    double sm_pct, mem_pct, dram_pct;
    const char *bound;       /* "memory", "compute", "latency" */
    /* work */
    double dram_bytes;
    double flops;            /* fp32+fp64+fp16 SIMT and tensor FLOPs; NAN: unknown */
    const char *flops_source;/* "sass" (counted), "fma-pipe bound" (upper bound), NULL */
    double tensor_ops;       /* ncu's tensor-path op count; NAN when not collected */
    /* occupancy */
    double occ_achieved, occ_theoretical;   /* % */
    char limiter[64];        /* "registers", "shared memory", "block size", ... or "" */
    int limit_blocks;        /* blocks per SM the limiter allows */
    /* stalls */
    digest_stall stalls[3];
    int nstalls;
    double cycles_per_issue;
    /* memory behaviour */
    double l1_hit, l2_hit;   /* % */
    double bank_conflicts;   /* shared-memory bank conflicts (ld+st); NAN unknown */
    double ld_sectors_per_req, st_sectors_per_req;
    double excess_sectors_bytes; /* SourceCounters' excessive global sectors; NAN unknown */
    double spill_requests;   /* local-memory spilling requests; NAN unknown */
    double local_bytes;      /* local-memory bytes (ld+st); NAN unknown */
    /* units in use */
    double tensor_pipe_pct;  /* hmma/gmma pipe cycles active, % of peak */
    double tma_pipe_pct;
    double ldgsts_requests;  /* cp.async (LDGSTS) requests; NAN unknown */
    /* ncu's advice, shortened, highest estimated speed-up first */
    char *advice[DIGEST_MAX_ADVICE];
    int nadvice;
} digest_kernel;

typedef struct profile_digest {
    gpu_facts gpu;            /* gpu.name points at gpu_name */
    char *gpu_name;
    bool gpu_from_table;
    double total_s;
    int launches;
    digest_kernel *kernels;   /* by time, largest first */
    size_t nkernels;
    bool has_task;
    digest_task task;
    double task_sol_s;        /* speed of light of the whole task, 0: unknown */
    const char *task_sol_by;  /* "memory" or "compute" */
} profile_digest;

/* Builds the digest. details may be NULL (no advice); task may be NULL; gpu may be NULL
 * (facts from the table's device__attribute_* columns: the table entry for that name,
 * else the generic estimate). Returns 0, or -1 with err when the table holds no launch
 * or no durations. */
int profile_digest_build(const ncu_table *t, const ncu_details *details,
                         const digest_task *task, const gpu_facts *gpu,
                         profile_digest *out, strbuf *err);
void profile_digest_release(profile_digest *d);

/* The prompt text. max_kernels limits the kernels listed (the rest summed in a line);
 * 0 means all. */
void profile_digest_text(const profile_digest *d, size_t max_kernels, strbuf *out);
/* The JSON for the store (a new reference). */
json_t *profile_digest_json(const profile_digest *d);

/* Facts for the device a table was captured on (used when no gpu is given). */
void profile_digest_gpu_from_table(const ncu_table *t, gpu_facts *out, bool *from_table);

#endif
