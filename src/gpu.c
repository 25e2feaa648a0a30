/*
 * gpu: the GPU facts table, the generic estimate for devices not in it, and the
 * speed-of-light and lower-bound times built on them (see gpu.h).
 *
 * Sources (dense rates, i.e. the datasheets' "with sparsity" figures halved):
 *  - H200 SXM: NVIDIA H200 Tensor Core GPU datasheet (nvidia.com/en-us/data-center/h200):
 *    4.8 TB/s HBM3e, FP64 34 / FP64 TC 67 / FP32 67 TFLOPS, TF32 989 / BF16 1,979 /
 *    FP16 1,979 TFLOPS with sparsity. L2 from the device attribute (62,914,560 bytes,
 *    shared/fixtures/ncu). Copy bandwidth 4.3 TB/s measured on the project's H200
 *    (DESIGN.md, "Where the speed is").
 *  - H100 SXM / PCIe: NVIDIA H100 Tensor Core GPU datasheet and the Hopper architecture
 *    whitepaper: SXM 132 SMs, 3.35 TB/s, FP32 67, TF32 989*, FP16 1,979*; PCIe 114 SMs,
 *    2.0 TB/s, FP32 51, FP64 26, FP64 TC 51, TF32 756*, FP16 1,513*; L2 50 MB; 228 KB
 *    shared memory per SM.
 *  - A100 40GB / 80GB: NVIDIA A100 datasheet and the Ampere (GA100) whitepaper: 108 SMs,
 *    1,555 GB/s (40GB), 2,039 GB/s (80GB SXM), 1,935 GB/s (80GB PCIe), FP64 9.7,
 *    FP64 TC 19.5, FP32 19.5, TF32 156, BF16/FP16 312 TFLOPS dense; L2 40 MB; 164 KB
 *    shared memory per SM.
 *  - L40S: NVIDIA L40S datasheet: 142 SMs, 864 GB/s, FP32 91.6, TF32 183, BF16/FP16
 *    362.05 TFLOPS dense; FP64 1:64 of FP32; Ada whitepaper: L2 96 MB, 100 KB shared
 *    memory and 1,536 threads per SM.
 *  - RTX 4090: Ada (AD102) whitepaper, appendix: 128 SMs, 1,008 GB/s, FP32 82.6, FP16
 *    tensor with FP32 accumulate 165.2 dense, TF32 82.6 dense, L2 72 MB.
 * Per-SM limits (shared memory, registers, threads) from the CUDA C++ Programming Guide,
 * "Technical Specifications per Compute Capability".
 */
#include "gpu.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

#define T 1e12
#define G 1e9

/* A table row: the device matches when every word of `all` appears in its name
 * (case-insensitive) and `none` does not. */
typedef struct gpu_row {
    const char *all;
    const char *none;
    gpu_facts f;
} gpu_row;

static const gpu_row gpu_table[] = {
    { "h200", NULL,
      { "NVIDIA H200", 9, 0, 132, 1.98, 4.8 * T, 4.3 * T, 67 * T, 34 * T, 67 * T,
        494.5 * T, 989.5 * T, 989.5 * T, 62914560, 233472, 232448, 65536, 2048, 128,
        false, "NVIDIA H200 datasheet; copy bandwidth measured (DESIGN.md)" } },
    { "h100 pcie", NULL,
      { "NVIDIA H100 PCIe", 9, 0, 114, 1.755, 2.0 * T, 0, 51 * T, 26 * T, 51 * T,
        378 * T, 756.5 * T, 756.5 * T, 52428800, 233472, 232448, 65536, 2048, 128,
        false, "NVIDIA H100 datasheet (PCIe)" } },
    { "h100", "pcie",
      { "NVIDIA H100 SXM", 9, 0, 132, 1.98, 3.35 * T, 0, 67 * T, 34 * T, 67 * T,
        494.5 * T, 989.5 * T, 989.5 * T, 52428800, 233472, 232448, 65536, 2048, 128,
        false, "NVIDIA H100 datasheet (SXM)" } },
    { "a100 80gb pcie", NULL,
      { "NVIDIA A100 80GB PCIe", 8, 0, 108, 1.41, 1.935 * T, 0, 19.5 * T, 9.7 * T,
        19.5 * T, 156 * T, 312 * T, 312 * T, 41943040, 167936, 166912, 65536, 2048, 64,
        false, "NVIDIA A100 datasheet (80GB PCIe)" } },
    { "a100 80gb", NULL,
      { "NVIDIA A100 80GB", 8, 0, 108, 1.41, 2.039 * T, 0, 19.5 * T, 9.7 * T, 19.5 * T,
        156 * T, 312 * T, 312 * T, 41943040, 167936, 166912, 65536, 2048, 64,
        false, "NVIDIA A100 datasheet (80GB SXM)" } },
    { "a100", NULL,
      { "NVIDIA A100 40GB", 8, 0, 108, 1.41, 1.555 * T, 0, 19.5 * T, 9.7 * T, 19.5 * T,
        156 * T, 312 * T, 312 * T, 41943040, 167936, 166912, 65536, 2048, 64,
        false, "NVIDIA A100 datasheet (40GB)" } },
    { "l40s", NULL,
      { "NVIDIA L40S", 8, 9, 142, 2.52, 0.864 * T, 0, 91.6 * T, 1.431 * T, 0,
        183 * T, 362.05 * T, 362.05 * T, 100663296, 102400, 101376, 65536, 1536, 128,
        false, "NVIDIA L40S datasheet" } },
    { "4090", NULL,
      { "NVIDIA GeForce RTX 4090", 8, 9, 128, 2.52, 1.008 * T, 0, 82.6 * T, 1.29 * T, 0,
        82.6 * T, 165.2 * T, 165.2 * T, 75497472, 102400, 101376, 65536, 1536, 128,
        false, "NVIDIA Ada GPU architecture whitepaper (RTX 4090)" } },
};

/* ---------------------------------------------------------------- name matching */

static bool contains_word_ci(const char *hay, const char *word, size_t wlen)
{
    size_t hlen = strlen(hay);
    for (size_t i = 0; i + wlen <= hlen; i++) {
        size_t k = 0;
        while (k < wlen && tolower((unsigned char)hay[i + k]) == word[k])
            k++;
        if (k == wlen)
            return true;
    }
    return false;
}

/* Every space-separated word of `words` appears in name. */
static bool contains_all_ci(const char *name, const char *words)
{
    const char *p = words;
    while (*p) {
        while (*p == ' ')
            p++;
        size_t n = strcspn(p, " ");
        if (n && !contains_word_ci(name, p, n))
            return false;
        p += n;
    }
    return true;
}

const gpu_facts *gpu_lookup(const char *name, int cc_major, int cc_minor)
{
    if (!name)
        return NULL;
    for (size_t i = 0; i < sizeof(gpu_table) / sizeof(gpu_table[0]); i++) {
        const gpu_row *r = &gpu_table[i];
        if (!contains_all_ci(name, r->all))
            continue;
        if (r->none && contains_all_ci(name, r->none))
            continue;
        if (cc_major > 0 && (r->f.cc_major != cc_major || r->f.cc_minor != cc_minor))
            continue;
        return &r->f;
    }
    return NULL;
}

/* ---------------------------------------------------------------- generic estimate */

/* Per-SM, per-clock rates of an architecture: FP32 lanes, FP64 lanes, dense FP16
 * tensor FLOPs (fp32 accumulate), FP64 tensor FLOPs, and the per-SM limits. */
typedef struct arch_rates {
    int fp32_lanes, fp64_lanes, fp16_tc_flops, fp64_tc_flops;
    int smem, smem_optin, max_threads;
} arch_rates;

static arch_rates rates_for(int major, int minor)
{
    if (major >= 10)
        return (arch_rates){ 128, 64, 8192, 128, 233472, 232448, 2048 };
    if (major == 9)
        return (arch_rates){ 128, 64, 4096, 128, 233472, 232448, 2048 };
    if (major == 8 && minor == 0)
        return (arch_rates){ 64, 32, 2048, 64, 167936, 166912, 2048 };
    if (major == 8 && minor == 7)
        return (arch_rates){ 128, 2, 1024, 0, 167936, 166912, 1536 };
    if (major == 8)
        return (arch_rates){ 128, 2, 1024, 0, 102400, 101376, 1536 };
    if (major == 7 && minor == 5)
        return (arch_rates){ 64, 2, 512, 0, 65536, 65536, 1024 };
    if (major == 7)
        return (arch_rates){ 64, 32, 1024, 0, 98304, 98304, 2048 };
    return (arch_rates){ 128, 2, 0, 0, 49152, 49152, 2048 };
}

void gpu_generic(gpu_facts *out, const char *name, int cc_major, int cc_minor, int sms,
                 double sm_clock_khz, double mem_clock_khz, int bus_width_bits,
                 size_t l2_bytes)
{
    arch_rates r = rates_for(cc_major, cc_minor);
    double hz = sm_clock_khz * 1e3;
    double per_sm_clock = (double)sms * hz;

    memset(out, 0, sizeof(*out));
    out->name = name ? name : "unknown GPU";
    out->cc_major = cc_major;
    out->cc_minor = cc_minor;
    out->sms = sms;
    out->boost_ghz = hz / 1e9;
    out->dram_bw = mem_clock_khz * 1e3 * 2.0 * (bus_width_bits / 8.0);
    out->fp32 = per_sm_clock * r.fp32_lanes * 2.0;
    out->fp64 = per_sm_clock * r.fp64_lanes * 2.0;
    out->fp64_tc = per_sm_clock * r.fp64_tc_flops;
    out->fp16_tc = per_sm_clock * r.fp16_tc_flops;
    out->bf16_tc = cc_major >= 8 ? out->fp16_tc : 0;
    out->tf32_tc = cc_major >= 8 ? out->fp16_tc / 2 : 0;
    out->l2_bytes = l2_bytes;
    out->smem_per_sm = r.smem;
    out->smem_per_block_optin = r.smem_optin;
    out->regs_per_sm = 65536;
    out->max_threads_per_sm = r.max_threads;
    out->fp32_lanes_per_sm = r.fp32_lanes;
    out->generic = true;
    out->source = "estimated from SM count, clocks and bus width (not a datasheet)";
}

bool gpu_facts_for(gpu_facts *out, const char *name, int cc_major, int cc_minor, int sms,
                   double sm_clock_khz, double mem_clock_khz, int bus_width_bits,
                   size_t l2_bytes)
{
    const gpu_facts *f = gpu_lookup(name, cc_major, cc_minor);
    if (f) {
        *out = *f;
        return true;
    }
    gpu_generic(out, name, cc_major, cc_minor, sms, sm_clock_khz, mem_clock_khz,
                bus_width_bits, l2_bytes);
    return false;
}

/* ---------------------------------------------------------------- bounds */

void gpu_arch_string(int cc_major, int cc_minor, char out[16])
{
    const char *suffix = (cc_major == 9 || cc_major == 10) && cc_minor == 0 ? "a" : "";
    snprintf(out, 16, "sm_%d%d%s", cc_major, cc_minor, suffix);
}

double gpu_sol_bandwidth(const gpu_facts *g)
{
    return g->copy_bw > 0 ? g->copy_bw : g->dram_bw;
}

static double max2(double a, double b)
{
    return a > b ? a : b;
}

double gpu_peak_flops(const gpu_facts *g, gpu_dtype dt, bool sol)
{
    switch (dt) {
    case GPU_DT_FP32:
        /* fp32 accuracy on tensor cores: 3xTF32 at a third of the TF32 rate, or 3xFP16
         * (each operand split into two halves under a power-of-two scale, fp32
         * accumulation; recipes/gemm_wgmma.cu, gemm_tc.cu) at a third of the FP16 rate,
         * which the WGMMA kernels reach on Hopper (before session 26 the bound was
         * 3xTF32's, and they ran at up to 121% of it). Anything faster (TF32 alone) may
         * pass on friendly inputs, so it bounds from below. */
        return sol ? max2(g->fp32, max2(g->tf32_tc, g->fp16_tc) / 3) : max2(g->fp32, g->tf32_tc);
    case GPU_DT_TF32:
        return max2(g->fp32, g->tf32_tc);
    case GPU_DT_FP16:
        return max2(g->fp32, g->fp16_tc);
    case GPU_DT_BF16:
        return max2(g->fp32, g->bf16_tc);
    case GPU_DT_FP64:
        return max2(g->fp64, g->fp64_tc);
    default:
        return g->fp32;
    }
}

static double bound(double flops, double bytes, double bw, double peak)
{
    double tm = bw > 0 ? bytes / bw : 0;
    double tc = peak > 0 ? flops / peak : 0;
    return max2(tm, tc);
}

double gpu_sol_seconds(const gpu_facts *g, double flops, double bytes, gpu_dtype dt)
{
    return bound(flops, bytes, gpu_sol_bandwidth(g), gpu_peak_flops(g, dt, true));
}

double gpu_lower_bound_seconds(const gpu_facts *g, double flops, double bytes, gpu_dtype dt)
{
    return bound(flops, bytes, g->dram_bw, gpu_peak_flops(g, dt, false));
}

/* ---------------------------------------------------------------- names and text */

static const char *const dtype_names[GPU_DT_COUNT] = { "fp32", "tf32", "fp16", "bf16", "fp64" };

const char *gpu_dtype_name(gpu_dtype dt)
{
    return (int)dt >= 0 && (int)dt < GPU_DT_COUNT ? dtype_names[dt] : "?";
}

int gpu_dtype_parse(const char *s)
{
    static const struct { const char *name; gpu_dtype dt; } aliases[] = {
        { "fp32", GPU_DT_FP32 }, { "float32", GPU_DT_FP32 }, { "float", GPU_DT_FP32 },
        { "tf32", GPU_DT_TF32 },
        { "fp16", GPU_DT_FP16 }, { "float16", GPU_DT_FP16 }, { "half", GPU_DT_FP16 },
        { "bf16", GPU_DT_BF16 }, { "bfloat16", GPU_DT_BF16 },
        { "fp64", GPU_DT_FP64 }, { "float64", GPU_DT_FP64 }, { "double", GPU_DT_FP64 },
    };
    if (!s)
        return -1;
    if (str_starts_with(s, "torch."))
        s += strlen("torch.");
    for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
        if (!strcmp(s, aliases[i].name))
            return aliases[i].dt;
    return -1;
}

void gpu_facts_describe(const gpu_facts *g, strbuf *out)
{
    char arch[16];
    gpu_arch_string(g->cc_major, g->cc_minor, arch);
    strbuf_addf(out, "GPU: %s (cc %d.%d, %s), %d SMs at %.2f GHz%s\n", g->name,
                g->cc_major, g->cc_minor, arch, g->sms, g->boost_ghz,
                g->generic ? " [estimated]" : "");
    strbuf_addf(out, "memory: %.2f TB/s datasheet", g->dram_bw / T);
    if (g->copy_bw > 0)
        strbuf_addf(out, ", %.2f TB/s measured copy", g->copy_bw / T);
    strbuf_addf(out, "; L2 %.0f MB\n", (double)g->l2_bytes / (1024.0 * 1024.0));
    strbuf_addf(out, "peak TFLOP/s: fp32 %.1f (SIMT), fp32 via 3xTF32 %.1f or 3xFP16 %.1f, tf32 %.1f, "
                "fp16 %.1f, bf16 %.1f, fp64 %.1f (dense tensor rates)\n",
                g->fp32 / T, g->tf32_tc / 3 / T, g->fp16_tc / 3 / T, g->tf32_tc / T, g->fp16_tc / T,
                g->bf16_tc / T, max2(g->fp64, g->fp64_tc) / T);
    strbuf_addf(out, "per SM: %d KB shared memory (%d KB per block opt-in), %d registers, "
                "%d threads\n",
                g->smem_per_sm / 1024, g->smem_per_block_optin / 1024, g->regs_per_sm,
                g->max_threads_per_sm);
}
