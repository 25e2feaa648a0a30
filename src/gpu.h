/*
 * gpu: the facts about a GPU that digests, prompts and speed-of-light bounds need (SMs,
 * bandwidth, peak rates per data type, caches, per-SM limits, the nvcc arch string),
 * from a table of known devices with a generic fallback computed from what the device
 * reports. Pure data and arithmetic: nothing here touches a GPU.
 *
 * Two bounds, for two uses (DESIGN.md, "Where the speed is"):
 *   gpu_sol_seconds()        the speed of light a kernel is measured against: the copy
 *                            bandwidth a real kernel reaches, and fp32 compute at the
 *                            split-precision (3xTF32) tensor rate;
 *   gpu_lower_bound_seconds() a bound nothing can beat (datasheet bandwidth, the
 *                            fastest rate for the data type): a time below it is suspect.
 */
#ifndef CUTEGEN_GPU_H
#define CUTEGEN_GPU_H

#include <stdbool.h>
#include <stddef.h>

#include "strbuf.h"

/* The data type class a problem computes in. */
typedef enum gpu_dtype {
    GPU_DT_FP32 = 0,  /* fp32 results with fp32 accuracy (SIMT or 3xTF32) */
    GPU_DT_TF32,      /* fp32 storage, TF32 accuracy accepted */
    GPU_DT_FP16,
    GPU_DT_BF16,
    GPU_DT_FP64,
    GPU_DT_COUNT
} gpu_dtype;

typedef struct gpu_facts {
    const char *name;          /* "NVIDIA H200"; for a generic entry, the name given */
    int cc_major, cc_minor;
    int sms;
    double boost_ghz;          /* the clock the peak rates assume */
    double dram_bw;            /* datasheet memory bandwidth, bytes/s */
    double copy_bw;            /* measured device-to-device copy bandwidth, bytes/s; 0: unknown */
    double fp32;               /* SIMT fp32 FLOP/s (FMA = 2) */
    double fp64;               /* SIMT fp64 FLOP/s */
    double fp64_tc;            /* fp64 tensor FLOP/s; 0: none */
    double tf32_tc;            /* dense tensor FLOP/s, no sparsity */
    double fp16_tc;            /* fp16 inputs, fp32 accumulate */
    double bf16_tc;
    size_t l2_bytes;
    int smem_per_sm;           /* bytes of shared memory per SM (max carve-out) */
    int smem_per_block_optin;  /* bytes a block may opt in to */
    int regs_per_sm;
    int max_threads_per_sm;
    int fp32_lanes_per_sm;     /* FP32 units per SM (a warp FFMA per cycle = 32) */
    bool generic;              /* true: estimated from SM count and clocks, not a datasheet */
    const char *source;        /* where the numbers come from */
} gpu_facts;

/* The table entry for a device name (as CUDA or ncu reports it, e.g. "NVIDIA H200",
 * "NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-40GB") and compute capability; NULL when
 * the device is not in the table. */
const gpu_facts *gpu_lookup(const char *name, int cc_major, int cc_minor);

/* Facts estimated from what any device reports: SM count, SM clock and memory clock in
 * kHz, memory bus width in bits, L2 bytes. Memory bandwidth counts two transfers a clock
 * (what CUDA's memory clock means for HBM and GDDR alike); peak rates come from the
 * per-SM rates of the architecture. name is borrowed, not copied. */
void gpu_generic(gpu_facts *out, const char *name, int cc_major, int cc_minor, int sms,
                 double sm_clock_khz, double mem_clock_khz, int bus_width_bits,
                 size_t l2_bytes);

/* The table entry when there is one, else gpu_generic() with what is given; the result
 * is copied to out. Returns true for a table entry. */
bool gpu_facts_for(gpu_facts *out, const char *name, int cc_major, int cc_minor, int sms,
                   double sm_clock_khz, double mem_clock_khz, int bus_width_bits,
                   size_t l2_bytes);

/* nvcc's arch: "sm_90a" for 9.0, "sm_100a" for 10.0, "sm_XY" otherwise. */
void gpu_arch_string(int cc_major, int cc_minor, char out[16]);

/* Bandwidth a real kernel can reach: the measured copy bandwidth, else the datasheet. */
double gpu_sol_bandwidth(const gpu_facts *g);

/* Peak FLOP/s for a data type. For the speed of light (sol = true) fp32 counts at the
 * 3xTF32 rate (TF32 dense / 3) when that beats SIMT fp32; for the lower bound (sol =
 * false) the fastest rate any kernel could use for that type. */
double gpu_peak_flops(const gpu_facts *g, gpu_dtype dt, bool sol);

/* Speed of light: max(bytes / sol bandwidth, flops / sol peak), seconds. */
double gpu_sol_seconds(const gpu_facts *g, double flops, double bytes, gpu_dtype dt);
/* Lower bound for suspect-speedup flagging: datasheet bandwidth, highest rate. */
double gpu_lower_bound_seconds(const gpu_facts *g, double flops, double bytes, gpu_dtype dt);

const char *gpu_dtype_name(gpu_dtype dt);
/* "fp32", "float32", "tf32", "fp16", "half", "float16", "bf16", "bfloat16", "fp64",
 * "double": the class, or -1. */
int gpu_dtype_parse(const char *s);

/* A few lines for prompts and reports: name, arch, SMs, bandwidth, peak rates, L2,
 * per-SM limits. */
void gpu_facts_describe(const gpu_facts *g, strbuf *out);

#endif
