/*
 * profile_digest: per-kernel digest of an ncu raw page (see profile_digest.h).
 *
 * Metrics used (ncu names; all optional, a missing one leaves its line out):
 *  time         gpu__time_duration.sum
 *  SOL %        sm__throughput / gpu__compute_memory_throughput / gpu__dram_throughput
 *               .avg.pct_of_peak_sustained_elapsed
 *  bound        max(SM%, memory%) >= 60: the larger one ("compute" / "memory"); below
 *               60 neither unit is busy: "latency" (ncu's SOL rule uses the same 60%)
 *  DRAM bytes   dram__bytes_read.sum + dram__bytes_write.sum, else
 *               dram__bytes.sum.per_second x duration
 *  FLOPs        smsp__sass_thread_inst_executed_op_{f,d,h}{add,mul,fma}_pred_on.sum
 *               (FMA = 2) plus sm__ops_path_tensor_src_*.sum, which counts FLOPs (FMA =
 *               2): on the H200 probe's mma_kernel, 1,056 warps x 4,096 m16n8k16 MMAs x
 *               4,096 FLOP = 17,716,740,096 = sm__ops_path_tensor_src_fp16.sum exactly.
 *               Without them an upper
 *               bound from the FMA pipe: sm__inst_executed_pipe_fma.sum
 *               .pct_of_peak_sustained_active x (FP32 lanes/32) warp instructions per
 *               active SM cycle x sm__cycles_active.sum x 64 FLOP per warp FFMA (the pipe
 *               also runs IMAD and FADD/FMUL, hence "<="). On the fixture sgemm (1024^3,
 *               2.147 GFLOP) this bound reads 2.158 GFLOP.
 *  occupancy    sm__warps_active.avg.pct_of_peak_sustained_active (achieved),
 *               sm__maximum_warps_per_active_cycle_pct (theoretical),
 *               launch__occupancy_limit_* (the smallest is the limiter)
 *  stalls       smsp__average_warps_issue_stalled_*_per_issue_active.ratio, share of
 *               their sum (which is the cycles per issued instruction); "selected" is
 *               issuing, not a stall, and is left out of the top three
 *  memory       l1tex__t_sector_hit_rate.pct, lts__t_sector_hit_rate.pct,
 *               l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{ld,st}.sum,
 *               l1tex__t_{sectors,requests}_pipe_lsu_mem_global_op_{ld,st}.sum,
 *               derived__memory_l2_theoretical_sectors_global_excessive,
 *               derived__local_spilling_requests, l1tex__t_bytes_pipe_lsu_mem_local_op_*
 *  units        sm__pipe_tensor_op_{hmma,gmma}_cycles_active / sm__pipe_tma_cycles_active
 *               .avg.pct_of_peak_sustained_active,
 *               l1tex__t_requests_pipe_lsu_mem_global_op_ldgsts_cache_access.sum
 */
#include "profile_digest.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define BOUND_PCT 60.0

/* ================================================================ per-kernel sums */

/* The launches of one kernel (indices into the table). */
typedef struct kgroup {
    const char *name;
    size_t *idx;
    size_t n;
} kgroup;

static double launch_time(const ncu_table *t, const ncu_launch *l)
{
    double d = ncu_value(t, l, "gpu__time_duration.sum");
    if (isnan(d))
        d = ncu_value(t, l, "gpu__time_duration.avg");
    return d;
}

/* Sum of a metric over the group; NAN when no launch has it. */
static double gsum(const ncu_table *t, const kgroup *g, const char *m)
{
    double s = 0;
    bool any = false;
    for (size_t i = 0; i < g->n; i++) {
        double v = ncu_value(t, &t->launches[g->idx[i]], m);
        if (!isnan(v)) {
            s += v;
            any = true;
        }
    }
    return any ? s : NAN;
}

/* Time-weighted mean of a metric over the group; NAN when no launch has it. */
static double gavg(const ncu_table *t, const kgroup *g, const char *m)
{
    double s = 0, w = 0;
    for (size_t i = 0; i < g->n; i++) {
        const ncu_launch *l = &t->launches[g->idx[i]];
        double v = ncu_value(t, l, m), d = launch_time(t, l);
        double wt = isnan(d) || d <= 0 ? 1 : d;
        if (!isnan(v)) {
            s += v * wt;
            w += wt;
        }
    }
    return w > 0 ? s / w : NAN;
}

/* Sum of several metrics, NAN only when none is present. */
static double gsum_any(const ncu_table *t, const kgroup *g, const char *const *names,
                       const double *weights)
{
    double s = 0;
    bool any = false;
    for (size_t i = 0; names[i]; i++) {
        double v = gsum(t, g, names[i]);
        if (!isnan(v)) {
            s += v * (weights ? weights[i] : 1);
            any = true;
        }
    }
    return any ? s : NAN;
}

static double first_value(const ncu_table *t, const kgroup *g, const char *m)
{
    return ncu_value(t, &t->launches[g->idx[0]], m);
}

static int as_int(double v)
{
    return isnan(v) ? -1 : (int)llround(v);
}

/* ================================================================ derived facts */

static void fill_sol(const ncu_table *t, const kgroup *g, digest_kernel *k)
{
    k->sm_pct = gavg(t, g, "sm__throughput.avg.pct_of_peak_sustained_elapsed");
    k->mem_pct = gavg(t, g, "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed");
    k->dram_pct = gavg(t, g, "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed");
    if (isnan(k->sm_pct) && isnan(k->mem_pct))
        k->bound = NULL;
    else if (fmax(k->sm_pct, k->mem_pct) < BOUND_PCT)
        k->bound = "latency";
    else if (isnan(k->mem_pct) || k->sm_pct >= k->mem_pct)
        k->bound = "compute";
    else
        k->bound = "memory";
}

static void fill_work(const ncu_table *t, const kgroup *g, const gpu_facts *gpu,
                      digest_kernel *k)
{
    double rd = gsum(t, g, "dram__bytes_read.sum"), wr = gsum(t, g, "dram__bytes_write.sum");
    if (!isnan(rd) || !isnan(wr)) {
        k->dram_bytes = (isnan(rd) ? 0 : rd) + (isnan(wr) ? 0 : wr);
    } else {
        double rate = gavg(t, g, "dram__bytes.sum.per_second");
        k->dram_bytes = isnan(rate) ? NAN : rate * k->time_s;
    }
    static const char *const fp[] = {
        "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
        "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum",
        "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
        "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum",
        "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum",
        "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum",
        "smsp__sass_thread_inst_executed_op_hadd_pred_on.sum",
        "smsp__sass_thread_inst_executed_op_hmul_pred_on.sum",
        "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum", NULL
    };
    static const double fpw[] = { 1, 1, 2, 1, 1, 2, 1, 1, 2 };
    static const char *const tensor[] = {
        "sm__ops_path_tensor_src_fp16.sum", "sm__ops_path_tensor_src_fp16_dst_fp32.sum",
        "sm__ops_path_tensor_src_fp16_dst_fp16.sum", "sm__ops_path_tensor_src_bf16_dst_fp32.sum",
        "sm__ops_path_tensor_src_tf32_dst_fp32.sum", "sm__ops_path_tensor_src_fp64.sum",
        "sm__ops_path_tensor_src_fp8.sum", NULL
    };
    double simt = gsum_any(t, g, fp, fpw);
    k->tensor_ops = gsum_any(t, g, tensor, NULL);
    if (!isnan(simt)) {
        k->flops = simt + (isnan(k->tensor_ops) ? 0 : k->tensor_ops);
        k->flops_source = "sass";
        return;
    }
    double pct = gavg(t, g, "sm__inst_executed_pipe_fma.sum.pct_of_peak_sustained_active");
    double cyc = gsum(t, g, "sm__cycles_active.sum");
    if (!isnan(pct) && !isnan(cyc) && gpu->fp32_lanes_per_sm > 0) {
        k->flops = pct / 100.0 * (gpu->fp32_lanes_per_sm / 32.0) * cyc * 64.0;
        k->flops_source = "fma-pipe bound";
    } else {
        k->flops = NAN;
        k->flops_source = NULL;
    }
}

static void fill_occupancy(const ncu_table *t, const kgroup *g, digest_kernel *k)
{
    static const struct { const char *metric, *what; } limits[] = {
        { "launch__occupancy_limit_registers", "registers" },
        { "launch__occupancy_limit_shared_mem", "shared memory" },
        { "launch__occupancy_limit_warps", "block size" },
        { "launch__occupancy_limit_blocks", "blocks per SM" },
        { "launch__occupancy_limit_barriers", "barriers" },
    };
    k->occ_achieved = gavg(t, g, "sm__warps_active.avg.pct_of_peak_sustained_active");
    k->occ_theoretical = first_value(t, g, "sm__maximum_warps_per_active_cycle_pct");
    k->limiter[0] = '\0';
    k->limit_blocks = -1;
    if (!isnan(k->occ_theoretical) && k->occ_theoretical >= 99.95)
        return;
    double best = INFINITY;
    for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
        double v = first_value(t, g, limits[i].metric);
        if (isnan(v))
            continue;
        if (v < best) {
            best = v;
            snprintf(k->limiter, sizeof(k->limiter), "%s", limits[i].what);
        } else if (v == best) {
            size_t n = strlen(k->limiter);
            snprintf(k->limiter + n, sizeof(k->limiter) - n, "+%s", limits[i].what);
        }
    }
    k->limit_blocks = isinf(best) ? -1 : (int)best;
}

static int cmp_stall(const void *a, const void *b)
{
    double x = ((const digest_stall *)a)->cycles, y = ((const digest_stall *)b)->cycles;
    return x < y ? 1 : x > y ? -1 : 0;
}

static void fill_stalls(const ncu_table *t, const kgroup *g, digest_kernel *k)
{
    static const char prefix[] = "smsp__average_warps_issue_stalled_";
    static const char suffix[] = "_per_issue_active.ratio";
    digest_stall all[64];
    size_t n = 0;
    double total = 0;
    for (size_t c = 0; c < t->ncols && n < 64; c++) {
        const char *name = t->names[c];
        size_t len = strlen(name);
        if (!str_starts_with(name, prefix) || !str_ends_with(name, suffix))
            continue;
        double v = gavg(t, g, name);
        if (isnan(v))
            continue;
        total += v;
        const char *reason = name + strlen(prefix);
        size_t rlen = len - strlen(prefix) - strlen(suffix);
        if (rlen == 8 && !strncmp(reason, "selected", 8))
            continue;
        /* reason names are borrowed from the table; copied when kept */
        all[n].name = reason;
        all[n].cycles = v;
        all[n].share = rlen; /* length kept here until copied */
        n++;
    }
    qsort(all, n, sizeof(all[0]), cmp_stall);
    k->nstalls = 0;
    k->cycles_per_issue = total > 0 ? total : NAN;
    for (size_t i = 0; i < n && k->nstalls < 3; i++) {
        if (all[i].cycles <= 0)
            break;
        digest_stall *s = &k->stalls[k->nstalls++];
        s->name = xstrndup(all[i].name, (size_t)all[i].share);
        s->cycles = all[i].cycles;
        s->share = all[i].cycles / total;
    }
}

static double ratio_or_nan(double a, double b)
{
    return isnan(a) || isnan(b) || b <= 0 ? NAN : a / b;
}

static void fill_memory(const ncu_table *t, const kgroup *g, digest_kernel *k)
{
    static const char *const conflicts[] = {
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", NULL
    };
    static const char *const local[] = { "l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum",
                                         "l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum", NULL };
    k->l1_hit = gavg(t, g, "l1tex__t_sector_hit_rate.pct");
    k->l2_hit = gavg(t, g, "lts__t_sector_hit_rate.pct");
    k->bank_conflicts = gsum_any(t, g, conflicts, NULL);
    k->ld_sectors_per_req = ratio_or_nan(gsum(t, g, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"),
                                         gsum(t, g, "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"));
    k->st_sectors_per_req = ratio_or_nan(gsum(t, g, "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"),
                                         gsum(t, g, "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"));
    k->excess_sectors_bytes = gsum(t, g, "derived__memory_l2_theoretical_sectors_global_excessive");
    k->spill_requests = gsum(t, g, "derived__local_spilling_requests");
    k->local_bytes = gsum_any(t, g, local, NULL);
    double hmma = gavg(t, g, "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active");
    double gmma = gavg(t, g, "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active");
    k->tensor_pipe_pct = isnan(hmma) && isnan(gmma) ? NAN
                         : fmax(isnan(hmma) ? 0 : hmma, isnan(gmma) ? 0 : gmma);
    k->tma_pipe_pct = gavg(t, g, "sm__pipe_tma_cycles_active.avg.pct_of_peak_sustained_active");
    k->ldgsts_requests = gsum(t, g, "l1tex__t_requests_pipe_lsu_mem_global_op_ldgsts_cache_access.sum");
}

/* ================================================================ advice */

/* First sentence of text, at most max characters, into a new string. */
static char *first_sentence(const char *text, size_t max)
{
    size_t n = 0, len = strlen(text);
    while (n < len) {
        if (text[n] == '.' && (n + 1 == len || text[n + 1] == ' ') &&
            !(n >= 3 && !strncmp(text + n - 3, "Est", 3)) &&
            !(n >= 1 && text[n - 1] >= '0' && text[n - 1] <= '9' && n + 1 < len &&
              text[n + 1] != ' '))
            break;
        n++;
    }
    if (n < len)
        n++; /* keep the full stop */
    if (n > max) {
        n = max - 3;
        while (n > 0 && text[n] != ' ')
            n--;
        return xasprintf("%.*s...", (int)n, text);
    }
    return xstrndup(text, n);
}

static bool advice_useful(const ncu_advice *a)
{
    if (strcmp(a->kind, "OPT") && strcmp(a->kind, "WRN"))
        return false;
    /* ncu's notes about its own collection are no advice about the kernel */
    return !strstr(a->text, "could not be found") && !strstr(a->text, "optional metric");
}

static int cmp_advice(const void *a, const void *b)
{
    const ncu_advice *x = *(ncu_advice *const *)a, *y = *(ncu_advice *const *)b;
    double ex = isnan(x->est_speedup) ? -1 : x->est_speedup;
    double ey = isnan(y->est_speedup) ? -1 : y->est_speedup;
    return ex < ey ? 1 : ex > ey ? -1 : 0;
}

static void fill_advice(const ncu_details *d, digest_kernel *k)
{
    if (!d)
        return;
    const ncu_details_kernel *dk = NULL;
    for (size_t i = 0; i < d->nkernels && !dk; i++)
        if (!strcmp(d->kernels[i].name, k->name))
            dk = &d->kernels[i];
    if (!dk || !dk->nadvice)
        return;
    const ncu_advice **sorted = xcalloc(dk->nadvice, sizeof(*sorted));
    size_t n = 0;
    for (size_t i = 0; i < dk->nadvice; i++)
        if (advice_useful(&dk->advice[i]))
            sorted[n++] = &dk->advice[i];
    qsort(sorted, n, sizeof(*sorted), cmp_advice);
    for (size_t i = 0; i < n && k->nadvice < DIGEST_MAX_ADVICE; i++) {
        char *s = first_sentence(sorted[i]->text, 180);
        if (!isnan(sorted[i]->est_speedup))
            k->advice[k->nadvice++] = xasprintf("[%s %s%.0f%%] %s", sorted[i]->kind,
                                                sorted[i]->local ? "local " : "",
                                                sorted[i]->est_speedup, s);
        else
            k->advice[k->nadvice++] = xasprintf("[%s] %s", sorted[i]->kind, s);
        free(s);
    }
    free(sorted);
}

/* ================================================================ building */

static void group_launches(const ncu_table *t, kgroup **groups, size_t *ngroups)
{
    kgroup *g = NULL;
    size_t n = 0;
    for (size_t i = 0; i < t->nlaunches; i++) {
        const char *name = t->launches[i].kernel;
        size_t j = 0;
        while (j < n && strcmp(g[j].name, name))
            j++;
        if (j == n) {
            g = xrealloc(g, (n + 1) * sizeof(*g));
            g[n].name = name;
            g[n].idx = NULL;
            g[n].n = 0;
            n++;
        }
        g[j].idx = xrealloc(g[j].idx, (g[j].n + 1) * sizeof(*g[j].idx));
        g[j].idx[g[j].n++] = i;
    }
    *groups = g;
    *ngroups = n;
}

static void build_kernel(const ncu_table *t, const kgroup *g, const ncu_details *d,
                         const gpu_facts *gpu, digest_kernel *k)
{
    memset(k, 0, sizeof(*k));
    k->name = xstrdup(g->name);
    strbuf sn = STRBUF_INIT;
    strbuf_init(&sn);
    ncu_short_name(g->name, &sn);
    k->short_name = strbuf_detach(&sn);
    k->launches = (int)g->n;
    k->time_s = gsum(t, g, "gpu__time_duration.sum");
    if (isnan(k->time_s))
        k->time_s = gsum(t, g, "gpu__time_duration.avg");
    k->block_threads = as_int(first_value(t, g, "launch__block_size"));
    k->grid_blocks = as_int(first_value(t, g, "launch__grid_size"));
    k->regs = as_int(first_value(t, g, "launch__registers_per_thread"));
    /* static + dynamic: launch__shared_mem_per_block adds the driver's reserved 1 KB */
    double st = first_value(t, g, "launch__shared_mem_per_block_static");
    double dy = first_value(t, g, "launch__shared_mem_per_block_dynamic");
    k->smem_block = !isnan(st) ? as_int(st + (isnan(dy) ? 0 : dy))
                               : as_int(first_value(t, g, "launch__shared_mem_per_block"));
    k->waves = first_value(t, g, "launch__waves_per_multiprocessor");
    fill_sol(t, g, k);
    fill_work(t, g, gpu, k);
    fill_occupancy(t, g, k);
    fill_stalls(t, g, k);
    fill_memory(t, g, k);
    fill_advice(d, k);
}

void profile_digest_gpu_from_table(const ncu_table *t, gpu_facts *out, bool *from_table)
{
    const ncu_launch *l = t->nlaunches ? &t->launches[0] : NULL;
    double v[6] = { NAN, NAN, NAN, NAN, NAN, NAN };
    static const char *const m[6] = {
        "device__attribute_compute_capability_major", "device__attribute_compute_capability_minor",
        "device__attribute_multiprocessor_count", "device__attribute_clock_rate",
        "device__attribute_memory_clock_rate", "device__attribute_global_memory_bus_width"
    };
    const char *name = l ? ncu_text(t, l, "device__attribute_display_name") : NULL;
    for (int i = 0; l && i < 6; i++)
        v[i] = ncu_value(t, l, m[i]);
    double l2 = l ? ncu_value(t, l, "device__attribute_l2_cache_size") : NAN;
    /* clock_rate and memory_clock_rate are kHz (CUDA's attributes) */
    *from_table = gpu_facts_for(out, name ? name : "unknown GPU", as_int(v[0]), as_int(v[1]),
                                as_int(v[2]), isnan(v[3]) ? 0 : v[3], isnan(v[4]) ? 0 : v[4],
                                as_int(v[5]), isnan(l2) ? 0 : (size_t)l2);
}

static int cmp_kernel_time(const void *a, const void *b)
{
    double x = ((const digest_kernel *)a)->time_s, y = ((const digest_kernel *)b)->time_s;
    return x < y ? 1 : x > y ? -1 : 0;
}

int profile_digest_build(const ncu_table *t, const ncu_details *details,
                         const digest_task *task, const gpu_facts *gpu,
                         profile_digest *out, strbuf *err)
{
    memset(out, 0, sizeof(*out));
    if (t->nlaunches == 0) {
        strbuf_adds(err, "the profile holds no kernel launch");
        return -1;
    }
    if (ncu_table_col(t, "gpu__time_duration.sum") < 0 &&
        ncu_table_col(t, "gpu__time_duration.avg") < 0) {
        strbuf_adds(err, "the profile has no gpu__time_duration: collect the SpeedOfLight "
                         "section");
        return -1;
    }
    if (gpu) {
        out->gpu = *gpu;
        out->gpu_from_table = !gpu->generic;
    } else {
        profile_digest_gpu_from_table(t, &out->gpu, &out->gpu_from_table);
    }
    out->gpu_name = xstrdup(out->gpu.name ? out->gpu.name : "unknown GPU");
    out->gpu.name = out->gpu_name;

    kgroup *groups;
    size_t ng;
    group_launches(t, &groups, &ng);
    out->kernels = xcalloc(ng, sizeof(*out->kernels));
    out->nkernels = ng;
    out->launches = (int)t->nlaunches;
    for (size_t i = 0; i < ng; i++) {
        build_kernel(t, &groups[i], details, &out->gpu, &out->kernels[i]);
        if (!isnan(out->kernels[i].time_s))
            out->total_s += out->kernels[i].time_s;
        free(groups[i].idx);
    }
    free(groups);
    for (size_t i = 0; i < ng; i++)
        out->kernels[i].share = out->total_s > 0 ? out->kernels[i].time_s / out->total_s : NAN;
    qsort(out->kernels, ng, sizeof(*out->kernels), cmp_kernel_time);

    if (task && (task->flops > 0 || task->bytes > 0)) {
        out->has_task = true;
        out->task = *task;
        out->task_sol_s = gpu_sol_seconds(&out->gpu, task->flops, task->bytes, task->dtype);
        double tm = task->bytes / gpu_sol_bandwidth(&out->gpu);
        out->task_sol_by = tm >= out->task_sol_s ? "memory" : "compute";
    }
    return 0;
}

void profile_digest_release(profile_digest *d)
{
    for (size_t i = 0; i < d->nkernels; i++) {
        digest_kernel *k = &d->kernels[i];
        free(k->name);
        free(k->short_name);
        for (int s = 0; s < k->nstalls; s++)
            free((char *)k->stalls[s].name);
        for (int a = 0; a < k->nadvice; a++)
            free(k->advice[a]);
    }
    free(d->kernels);
    free(d->gpu_name);
    memset(d, 0, sizeof(*d));
}

/* ================================================================ text */

/* 1234 -> "1.23 us" style, seconds in. */
static void add_time(strbuf *sb, double s)
{
    if (s < 1e-3)
        strbuf_addf(sb, "%.1f us", s * 1e6);
    else if (s < 1)
        strbuf_addf(sb, "%.3f ms", s * 1e3);
    else
        strbuf_addf(sb, "%.2f s", s);
}

static void add_si(strbuf *sb, double v, const char *unit)
{
    static const char *const pre[] = { "", "K", "M", "G", "T", "P" };
    int i = 0;
    while (fabs(v) >= 1000 && i < 5) {
        v /= 1000;
        i++;
    }
    strbuf_addf(sb, "%.3g %s%s", v, pre[i], unit);
}

static void text_header(const profile_digest *d, strbuf *out)
{
    strbuf_addf(out, "ncu on %s (%d SMs; DRAM %.2f TB/s", d->gpu.name, d->gpu.sms,
                d->gpu.dram_bw / 1e12);
    if (d->gpu.copy_bw > 0)
        strbuf_addf(out, ", copy %.2f TB/s", d->gpu.copy_bw / 1e12);
    strbuf_addf(out, "%s): %zu kernel%s, %d launch%s, ", d->gpu.generic ? ", estimated" : "",
                d->nkernels, d->nkernels == 1 ? "" : "s", d->launches,
                d->launches == 1 ? "" : "es");
    add_time(out, d->total_s);
    strbuf_addc(out, '\n');
    if (d->has_task && d->task_sol_s > 0) {
        strbuf_adds(out, "task speed of light ");
        add_time(out, d->task_sol_s);
        strbuf_addf(out, " (%s-bound, %s); profiled kernels take %.1fx that\n",
                    d->task_sol_by, gpu_dtype_name(d->task.dtype), d->total_s / d->task_sol_s);
    }
}

static void text_shape(const digest_kernel *k, strbuf *out)
{
    strbuf_addf(out, "- %s: %.0f%% of time, ", k->short_name, 100 * k->share);
    add_time(out, k->time_s / (k->launches > 0 ? k->launches : 1));
    if (k->launches > 1)
        strbuf_addf(out, " x%d", k->launches);
    if (k->grid_blocks > 0 && k->block_threads > 0)
        strbuf_addf(out, "; grid %d x %d thr", k->grid_blocks, k->block_threads);
    if (k->regs >= 0)
        strbuf_addf(out, ", %d regs", k->regs);
    if (k->smem_block > 0)
        strbuf_addf(out, ", smem %.1f KB/block", k->smem_block / 1000.0);
    strbuf_addc(out, '\n');
}

static void text_bound(const digest_kernel *k, strbuf *out)
{
    if (!k->bound)
        return;
    strbuf_addf(out, "  bound: %s (SM %.1f%%, memory %.1f%%", k->bound, k->sm_pct, k->mem_pct);
    if (!isnan(k->dram_pct))
        strbuf_addf(out, ", DRAM %.1f%%", k->dram_pct);
    strbuf_adds(out, " of peak)\n");
}

static void text_work(const profile_digest *d, const digest_kernel *k, strbuf *out)
{
    bool any = false;
    if (!isnan(k->dram_bytes) && k->time_s > 0) {
        double bw = k->dram_bytes / k->time_s;
        strbuf_adds(out, "  DRAM ");
        add_si(out, k->dram_bytes, "B");
        strbuf_adds(out, " = ");
        add_si(out, bw, "B/s");
        strbuf_addf(out, " (%.0f%% of datasheet", 100 * bw / d->gpu.dram_bw);
        if (d->gpu.copy_bw > 0)
            strbuf_addf(out, ", %.0f%% of copy", 100 * bw / d->gpu.copy_bw);
        strbuf_adds(out, ")");
        any = true;
    }
    bool tensor_uncounted = isnan(k->tensor_ops) && k->tensor_pipe_pct > 1;
    if (!isnan(k->flops) && k->time_s > 0 && (k->flops > 0 || tensor_uncounted)) {
        bool bound_only = k->flops_source && strcmp(k->flops_source, "sass");
        strbuf_adds(out, any ? "; " : "  ");
        strbuf_adds(out, bound_only ? "<= " : "");
        add_si(out, k->flops, "FLOP");
        strbuf_adds(out, " = ");
        add_si(out, k->flops / k->time_s, "FLOP/s");
        strbuf_addf(out, " (%.0f%% of fp32 SIMT", 100 * k->flops / k->time_s / d->gpu.fp32);
        if (!isnan(k->tensor_ops) && k->tensor_ops > 0)
            strbuf_addf(out, "; tensor %.0f%% of fp16 TC",
                        100 * k->tensor_ops / k->time_s / d->gpu.fp16_tc);
        strbuf_addf(out, ")%s%s", bound_only ? " [FMA-pipe bound]" : "",
                    tensor_uncounted ? " [tensor-core work not counted]" : "");
        any = true;
    }
    if (any)
        strbuf_addc(out, '\n');
}

static void text_occupancy(const digest_kernel *k, strbuf *out)
{
    if (isnan(k->occ_achieved) && isnan(k->occ_theoretical))
        return;
    strbuf_addf(out, "  occupancy %.1f%% achieved / %.1f%% theoretical", k->occ_achieved,
                k->occ_theoretical);
    if (k->limiter[0])
        strbuf_addf(out, ", limited by %s (%d blocks/SM)", k->limiter, k->limit_blocks);
    if (!isnan(k->waves))
        strbuf_addf(out, "; %.2f waves", k->waves);
    strbuf_addc(out, '\n');
}

static void text_stalls(const digest_kernel *k, strbuf *out)
{
    if (!k->nstalls)
        return;
    strbuf_adds(out, "  stalls:");
    for (int i = 0; i < k->nstalls; i++)
        strbuf_addf(out, "%s %s %.0f%%", i ? "," : "", k->stalls[i].name,
                    100 * k->stalls[i].share);
    strbuf_addf(out, " (of %.2f cycles/issue)\n", k->cycles_per_issue);
}

static void text_memory(const digest_kernel *k, strbuf *out)
{
    size_t start = out->len;
    strbuf_adds(out, "  mem:");
    if (!isnan(k->l1_hit))
        strbuf_addf(out, " L1 hit %.0f%%,", k->l1_hit);
    if (!isnan(k->l2_hit))
        strbuf_addf(out, " L2 hit %.0f%%,", k->l2_hit);
    if (!isnan(k->ld_sectors_per_req))
        strbuf_addf(out, " sectors/req ld %.1f", k->ld_sectors_per_req);
    if (!isnan(k->st_sectors_per_req))
        strbuf_addf(out, " st %.1f", k->st_sectors_per_req);
    if (!isnan(k->ld_sectors_per_req) || !isnan(k->st_sectors_per_req))
        strbuf_addc(out, ',');
    if (!isnan(k->excess_sectors_bytes) && k->excess_sectors_bytes > 0) {
        strbuf_adds(out, " excess global sectors ");
        add_si(out, k->excess_sectors_bytes, "B,");
    }
    if (!isnan(k->bank_conflicts))
        strbuf_addf(out, " smem bank conflicts %.0f,", k->bank_conflicts);
    if (!isnan(k->local_bytes)) {
        double sr = isnan(k->spill_requests) ? 0 : k->spill_requests;
        if (k->local_bytes == 0)
            strbuf_adds(out, " no local memory,");
        else
            strbuf_addf(out, " local memory %.0f B (%.0f spill requests),", k->local_bytes, sr);
    } else if (!isnan(k->spill_requests)) {
        if (k->spill_requests == 0)
            strbuf_adds(out, " no spills,");
        else
            strbuf_addf(out, " %.0f spill requests,", k->spill_requests);
    }
    if (out->len == start + 6) {
        strbuf_truncate(out, start);
        return;
    }
    strbuf_truncate(out, out->len - 1);
    strbuf_addc(out, '\n');
}

static void text_units(const digest_kernel *k, strbuf *out)
{
    if (isnan(k->tensor_pipe_pct) && isnan(k->tma_pipe_pct) && isnan(k->ldgsts_requests))
        return;
    strbuf_adds(out, "  units:");
    if (!isnan(k->tensor_pipe_pct))
        strbuf_addf(out, " tensor pipe %.1f%%", k->tensor_pipe_pct);
    if (!isnan(k->tma_pipe_pct))
        strbuf_addf(out, ", TMA %.1f%%", k->tma_pipe_pct);
    /* the counter sees only cp.async.ca (cache-allocating) requests: a zero says nothing
     * about cp.async.cg, measured on the H200 probe */
    if (!isnan(k->ldgsts_requests) && k->ldgsts_requests > 0)
        strbuf_adds(out, ", cp.async (.ca) used");
    strbuf_addc(out, '\n');
}

void profile_digest_text(const profile_digest *d, size_t max_kernels, strbuf *out)
{
    text_header(d, out);
    size_t shown = max_kernels && max_kernels < d->nkernels ? max_kernels : d->nkernels;
    for (size_t i = 0; i < shown; i++) {
        const digest_kernel *k = &d->kernels[i];
        text_shape(k, out);
        text_bound(k, out);
        text_work(d, k, out);
        text_occupancy(k, out);
        text_stalls(k, out);
        text_memory(k, out);
        text_units(k, out);
        for (int a = 0; a < k->nadvice; a++)
            strbuf_addf(out, "  ncu: %s\n", k->advice[a]);
    }
    if (shown < d->nkernels) {
        double rest = 0;
        for (size_t i = shown; i < d->nkernels; i++)
            rest += d->kernels[i].time_s;
        strbuf_addf(out, "- %zu more kernels: %.0f%% of time\n", d->nkernels - shown,
                    d->total_s > 0 ? 100 * rest / d->total_s : 0);
    }
}

/* ================================================================ JSON */

static void set_num(json_t *o, const char *key, double v)
{
    if (!isnan(v) && !isinf(v))
        json_object_set_new(o, key, json_real(v));
}

static json_t *kernel_json(const digest_kernel *k)
{
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(k->name));
    json_object_set_new(o, "short_name", json_string(k->short_name));
    json_object_set_new(o, "launches", json_integer(k->launches));
    set_num(o, "time_s", k->time_s);
    set_num(o, "share", k->share);
    json_object_set_new(o, "grid_blocks", json_integer(k->grid_blocks));
    json_object_set_new(o, "block_threads", json_integer(k->block_threads));
    json_object_set_new(o, "registers", json_integer(k->regs));
    json_object_set_new(o, "smem_per_block", json_integer(k->smem_block));
    set_num(o, "waves", k->waves);
    set_num(o, "sm_pct", k->sm_pct);
    set_num(o, "memory_pct", k->mem_pct);
    set_num(o, "dram_pct", k->dram_pct);
    if (k->bound)
        json_object_set_new(o, "bound", json_string(k->bound));
    set_num(o, "dram_bytes", k->dram_bytes);
    set_num(o, "flops", k->flops);
    if (k->flops_source)
        json_object_set_new(o, "flops_source", json_string(k->flops_source));
    set_num(o, "tensor_ops", k->tensor_ops);
    set_num(o, "occupancy_achieved_pct", k->occ_achieved);
    set_num(o, "occupancy_theoretical_pct", k->occ_theoretical);
    if (k->limiter[0]) {
        json_object_set_new(o, "occupancy_limiter", json_string(k->limiter));
        json_object_set_new(o, "occupancy_limit_blocks", json_integer(k->limit_blocks));
    }
    json_t *st = json_array();
    for (int i = 0; i < k->nstalls; i++)
        json_array_append_new(st, json_pack("{s:s, s:f, s:f}", "reason", k->stalls[i].name,
                                            "cycles_per_issue", k->stalls[i].cycles,
                                            "share", k->stalls[i].share));
    json_object_set_new(o, "stalls", st);
    set_num(o, "cycles_per_issue", k->cycles_per_issue);
    set_num(o, "l1_hit_pct", k->l1_hit);
    set_num(o, "l2_hit_pct", k->l2_hit);
    set_num(o, "bank_conflicts", k->bank_conflicts);
    set_num(o, "ld_sectors_per_request", k->ld_sectors_per_req);
    set_num(o, "st_sectors_per_request", k->st_sectors_per_req);
    set_num(o, "excess_global_sector_bytes", k->excess_sectors_bytes);
    set_num(o, "spill_requests", k->spill_requests);
    set_num(o, "local_bytes", k->local_bytes);
    set_num(o, "tensor_pipe_pct", k->tensor_pipe_pct);
    set_num(o, "tma_pipe_pct", k->tma_pipe_pct);
    set_num(o, "ldgsts_requests", k->ldgsts_requests);
    json_t *adv = json_array();
    for (int i = 0; i < k->nadvice; i++)
        json_array_append_new(adv, json_string(k->advice[i]));
    json_object_set_new(o, "advice", adv);
    return o;
}

json_t *profile_digest_json(const profile_digest *d)
{
    json_t *o = json_object();
    char arch[16];
    gpu_arch_string(d->gpu.cc_major, d->gpu.cc_minor, arch);
    json_object_set_new(o, "gpu", json_pack("{s:s, s:s, s:i, s:b}", "name", d->gpu.name,
                                            "arch", arch, "sms", d->gpu.sms, "estimated",
                                            d->gpu.generic));
    set_num(o, "total_s", d->total_s);
    json_object_set_new(o, "launches", json_integer(d->launches));
    if (d->has_task) {
        json_t *t = json_object();
        set_num(t, "flops", d->task.flops);
        set_num(t, "bytes", d->task.bytes);
        json_object_set_new(t, "dtype", json_string(gpu_dtype_name(d->task.dtype)));
        set_num(t, "sol_s", d->task_sol_s);
        if (d->task_sol_by)
            json_object_set_new(t, "sol_by", json_string(d->task_sol_by));
        json_object_set_new(o, "task", t);
    }
    json_t *ks = json_array();
    for (size_t i = 0; i < d->nkernels; i++)
        json_array_append_new(ks, kernel_json(&d->kernels[i]));
    json_object_set_new(o, "kernels", ks);
    return o;
}
