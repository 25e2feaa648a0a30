/* Tests on the real H200 capture in ../shared/fixtures/ncu (read in place, never
 * copied): the raw page's numbers and units, the details page's advice, and the digest
 * built from them, checked against values read off the CSV by hand. Skips (77) when
 * the fixtures are absent. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "ncu.h"
#include "profile_digest.h"
#include "util.h"

static const char *src_dir(void)
{
    const char *s = getenv("CUTEGEN_SOURCE_DIR");
    return s ? s : CUTEGEN_SOURCE_DIR;
}

static char *load(const char *name)
{
    char *path = xasprintf("%s/../shared/fixtures/ncu/%s", src_dir(), name);
    strbuf sb = STRBUF_INIT;
    strbuf_init(&sb);
    int rc = read_file(path, &sb, 64 << 20);
    free(path);
    if (rc != 0) {
        strbuf_release(&sb);
        return NULL;
    }
    return strbuf_detach(&sb);
}


static char *h200_raw, *h200_details;


static void test_h200_raw(void **state)
{
    (void)state;
    ncu_table t;
    strbuf err = STRBUF_INIT;
    strbuf_init(&err);
    assert_int_equal(ncu_table_parse(h200_raw, strlen(h200_raw), &t, &err), 0);
    assert_int_equal(t.ncols, 749);
    assert_int_equal(t.nlaunches, 3);
    const ncu_launch *l = &t.launches[0];
    assert_true(str_starts_with(l->kernel, "void gemm_device<tuple<int, int, int>"));
    /* by hand from the CSV: 194,112 ns; 43,323,442,136.50 byte/s; 120 registers */
    assert_true(fabs(ncu_value(&t, l, "gpu__time_duration.sum") - 194112e-9) < 1e-12);
    assert_true(fabs(ncu_value(&t, &t.launches[1], "gpu__time_duration.sum") - 193472e-9) < 1e-12);
    assert_true(fabs(ncu_value(&t, l, "dram__bytes.sum.per_second") - 43323442136.50) < 1);
    assert_true(ncu_value(&t, l, "launch__registers_per_thread") == 120);
    assert_true(ncu_value(&t, l, "sm__warps_active.avg.pct_of_peak_sustained_active") == 12.55);
    assert_true(ncu_value(&t, l, "device__attribute_l2_cache_size") == 62914560);
    assert_true(isnan(ncu_value(&t, l, "derived__local_spilling_requests_pct")));
    assert_string_equal(ncu_text(&t, l, "device__attribute_display_name"), "NVIDIA H200");
    assert_string_equal(ncu_text(&t, l, "Block Size"), "(256, 1, 1)");
    ncu_table_release(&t);
    strbuf_release(&err);
}

static void test_h200_details(void **state)
{
    (void)state;
    ncu_details d;
    strbuf err = STRBUF_INIT;
    strbuf_init(&err);
    assert_int_equal(ncu_details_parse(h200_details, &d, &err), 0);
    assert_int_equal(d.nkernels, 2);
    assert_true(str_starts_with(d.kernels[0].name, "void gemm_device<tuple<int, int, int>"));
    assert_true(str_ends_with(d.kernels[0].name, "T15, T16)"));
    /* OPT (SOL), WRN (pcsamp), OPT (launch 51.52), OPT (local 50.07), OPT (local 75) */
    assert_int_equal(d.kernels[0].nadvice, 5);
    const ncu_advice *a = d.kernels[0].advice;
    assert_string_equal(a[0].kind, "OPT");
    assert_true(isnan(a[0].est_speedup));
    assert_true(str_starts_with(a[0].text, "This kernel grid is too small"));
    assert_string_equal(a[1].kind, "WRN");
    assert_true(a[2].est_speedup == 51.52 && !a[2].local);
    assert_string_equal(a[2].section, "Launch Statistics");
    assert_true(str_starts_with(a[2].text, "The grid for this launch is configured to execute only 64 blocks"));
    assert_true(a[3].est_speedup == 50.07 && a[3].local);
    assert_true(a[4].est_speedup == 75 && a[4].local);
    assert_non_null(strstr(a[4].text, "limited by the number of required registers."));
    assert_null(strstr(a[4].text, "  "));
    ncu_details_release(&d);
    strbuf_release(&err);
}


static void build_digest(profile_digest *d, const digest_task *task)
{
    ncu_table t;
    ncu_details det;
    strbuf err = STRBUF_INIT;
    strbuf_init(&err);
    assert_int_equal(ncu_table_parse(h200_raw, strlen(h200_raw), &t, &err), 0);
    assert_int_equal(ncu_details_parse(h200_details, &det, &err), 0);
    if (profile_digest_build(&t, &det, task, NULL, d, &err) != 0)
        fail_msg("%s", err.buf);
    ncu_table_release(&t);
    ncu_details_release(&det);
    strbuf_release(&err);
}

static void test_h200_digest(void **state)
{
    (void)state;
    profile_digest d;
    build_digest(&d, NULL);
    assert_true(d.gpu_from_table);
    assert_string_equal(d.gpu.name, "NVIDIA H200");
    assert_int_equal(d.nkernels, 1);
    assert_int_equal(d.launches, 3);
    const digest_kernel *k = &d.kernels[0];
    assert_string_equal(k->short_name, "gemm_device");
    assert_int_equal(k->launches, 3);
    /* durations 194,112 + 193,472 + the third launch's, from the CSV */
    assert_true(k->time_s > 3 * 193e-6 && k->time_s < 3 * 195e-6);
    assert_true(fabs(d.total_s - k->time_s) < 1e-15);
    assert_true(fabs(k->share - 1.0) < 1e-12);
    assert_int_equal(k->grid_blocks, 64);
    assert_int_equal(k->block_threads, 256);
    assert_int_equal(k->regs, 120);
    assert_int_equal(k->smem_block, 8192); /* static 8,192 + dynamic 0 (not the driver 1 KB) */
    /* SOL: SM 21.85-21.92%, memory ~19.2%: neither unit busy -> latency */
    assert_string_equal(k->bound, "latency");
    assert_true(k->sm_pct > 21.8 && k->sm_pct < 22.0);
    assert_true(k->dram_pct > 0.89 && k->dram_pct < 0.91);
    /* DRAM bytes = 43.3 GB/s x 194 us = ~8.4 MB per launch */
    assert_true(k->dram_bytes / 3 > 8.3e6 && k->dram_bytes / 3 < 8.5e6);
    /* 1024^3 sgemm = 2.147 GFLOP per launch; the FMA-pipe bound is within 1% above */
    assert_string_equal(k->flops_source, "fma-pipe bound");
    double per_launch = k->flops / 3;
    assert_true(per_launch >= 2.147e9 && per_launch < 2.147e9 * 1.01);
    /* occupancy: 12.55/12.42/12.54% achieved, 25% theoretical, registers allow 2 blocks */
    assert_true(k->occ_achieved > 12.4 && k->occ_achieved < 12.6);
    assert_true(k->occ_theoretical == 25);
    assert_string_equal(k->limiter, "registers");
    assert_int_equal(k->limit_blocks, 2);
    /* stalls: long_scoreboard 1.18 of 4.38 cycles/issue, then not_selected 0.71, wait 0.43 */
    assert_int_equal(k->nstalls, 3);
    assert_string_equal(k->stalls[0].name, "long_scoreboard");
    assert_true(fabs(k->stalls[0].share - 1.18 / 4.38) < 0.01);
    assert_string_equal(k->stalls[1].name, "not_selected");
    assert_string_equal(k->stalls[2].name, "wait");
    assert_true(fabs(k->cycles_per_issue - 4.38) < 0.02);
    assert_true(k->spill_requests == 0);
    assert_true(k->tma_pipe_pct == 0);
    /* advice: the 75% local estimate first, ncu's note about its own metric dropped */
    assert_int_equal(k->nadvice, 3);
    assert_true(str_starts_with(k->advice[0], "[OPT local 75%] The 4.00 theoretical warps"));
    if (!str_starts_with(k->advice[1], "[OPT 52%] The grid for this launch"))
        fail_msg("advice[1] = %s", k->advice[1]);

    strbuf text = STRBUF_INIT;
    strbuf_init(&text);
    profile_digest_text(&d, 0, &text);
    if (getenv("CUTEGEN_SHOW_DIGEST"))
        fprintf(stderr, "%s(%zu chars)\n", text.buf, text.len);
    assert_true(text.len < 1500);
    assert_non_null(strstr(text.buf, "bound: latency"));
    assert_non_null(strstr(text.buf, "limited by registers (2 blocks/SM)"));
    assert_non_null(strstr(text.buf, "long_scoreboard 27%"));
    assert_null(strstr(text.buf, "nan"));
    json_t *j = profile_digest_json(&d);
    json_t *k0 = json_array_get(json_object_get(j, "kernels"), 0);
    assert_string_equal(json_string_value(json_object_get(k0, "bound")), "latency");
    assert_int_equal(json_integer_value(json_object_get(k0, "registers")), 120);
    assert_null(json_object_get(k0, "bank_conflicts")); /* not collected: absent */
    json_decref(j);
    strbuf_release(&text);
    profile_digest_release(&d);
}

static void test_h200_digest_task(void **state)
{
    (void)state;
    /* three launches of a 1024^3 fp32 GEMM: 3 x 2.147 GFLOP, 3 x 12 MiB */
    digest_task task = { 3 * 2.0 * 1024 * 1024 * 1024, 3 * 3 * 4.0 * 1024 * 1024, GPU_DT_FP32 };
    profile_digest d;
    build_digest(&d, &task);
    assert_true(d.has_task);
    const gpu_facts *h200 = gpu_lookup("NVIDIA H200", 9, 0);
    assert_true(fabs(d.task_sol_s - gpu_sol_seconds(h200, task.flops, task.bytes, GPU_DT_FP32)) < 1e-15);
    assert_string_equal(d.task_sol_by, "compute");
    strbuf text = STRBUF_INIT;
    strbuf_init(&text);
    profile_digest_text(&d, 0, &text);
    assert_non_null(strstr(text.buf, "task speed of light"));
    strbuf_release(&text);
    profile_digest_release(&d);
}

int main(void)
{
    h200_raw = load("cute_sgemm1_h200_raw.csv");
    h200_details = load("cute_sgemm1_h200_details.txt");
    if (!h200_raw || !h200_details) {
        fprintf(stderr, "skip: the H200 capture is not at %s/../shared/fixtures/ncu "
                        "(it is read in place, never copied into the project)\n", src_dir());
        free(h200_raw);
        free(h200_details);
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_h200_raw),
        cmocka_unit_test(test_h200_details),
        cmocka_unit_test(test_h200_digest),
        cmocka_unit_test(test_h200_digest_task),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    free(h200_raw);
    free(h200_details);
    return failed;
}
