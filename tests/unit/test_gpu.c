/* Unit tests for gpu: table lookups, the generic estimate, arch strings and the
 * speed-of-light / lower-bound arithmetic. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "gpu.h"

static void test_lookup(void **state)
{
    (void)state;
    const gpu_facts *h200 = gpu_lookup("NVIDIA H200", 9, 0);
    assert_non_null(h200);
    assert_int_equal(h200->sms, 132);
    assert_true(fabs(h200->copy_bw - 4.3e12) < 1e3 && fabs(h200->dram_bw - 4.8e12) < 1e3);
    const gpu_facts *sxm = gpu_lookup("NVIDIA H100 80GB HBM3", 9, 0);
    const gpu_facts *pcie = gpu_lookup("NVIDIA H100 PCIe", 9, 0);
    assert_non_null(sxm);
    assert_non_null(pcie);
    assert_int_equal(sxm->sms, 132);
    assert_int_equal(pcie->sms, 114);
    assert_true(fabs(gpu_lookup("NVIDIA A100-SXM4-40GB", 8, 0)->dram_bw - 1.555e12) < 1e3);
    assert_true(fabs(gpu_lookup("NVIDIA A100-SXM4-80GB", 8, 0)->dram_bw - 2.039e12) < 1e3);
    assert_true(fabs(gpu_lookup("NVIDIA A100 80GB PCIe", 8, 0)->dram_bw - 1.935e12) < 1e3);
    assert_int_equal(gpu_lookup("NVIDIA L40S", 8, 9)->max_threads_per_sm, 1536);
    assert_int_equal(gpu_lookup("NVIDIA GeForce RTX 4090", 8, 9)->sms, 128);
    assert_null(gpu_lookup("NVIDIA H200", 8, 0)); /* capability must match */
    assert_null(gpu_lookup("NVIDIA B200", 10, 0));
    assert_null(gpu_lookup(NULL, 0, 0));
}

static void test_generic(void **state)
{
    (void)state;
    /* the H200's own attributes: 132 SMs, 1.98 GHz, 3.201 GHz memory clock, 6016 bits */
    gpu_facts g;
    gpu_generic(&g, "H200-like", 9, 0, 132, 1980000, 3201000, 6016, 62914560);
    assert_true(g.generic);
    assert_true(fabs(g.fp32 - 66.9e12) / 66.9e12 < 0.01); /* datasheet 67 */
    assert_true(fabs(g.dram_bw - 4.8e12) / 4.8e12 < 0.01); /* datasheet 4.8 TB/s */
    assert_true(g.fp16_tc > 900e12 && g.fp16_tc < 1100e12);
    assert_true(g.tf32_tc == g.fp16_tc / 2);
    gpu_facts f;
    assert_false(gpu_facts_for(&f, "Mystery GPU", 8, 6, 84, 1700000, 9751000, 384, 6 << 20));
    assert_true(f.generic && f.sms == 84);
    assert_true(gpu_facts_for(&f, "NVIDIA H200", 9, 0, 0, 0, 0, 0, 0));
    assert_false(f.generic);
}

static void test_arch(void **state)
{
    (void)state;
    char a[16];
    gpu_arch_string(9, 0, a);
    assert_string_equal(a, "sm_90a");
    gpu_arch_string(10, 0, a);
    assert_string_equal(a, "sm_100a");
    gpu_arch_string(8, 9, a);
    assert_string_equal(a, "sm_89");
    gpu_arch_string(8, 0, a);
    assert_string_equal(a, "sm_80");
    gpu_arch_string(12, 0, a);
    assert_string_equal(a, "sm_120");
}

static void test_bounds(void **state)
{
    (void)state;
    const gpu_facts *h = gpu_lookup("NVIDIA H200", 9, 0);
    /* memory-bound: 12 GB at 4.3 TB/s copy bandwidth (sol), 4.8 TB/s datasheet (bound) */
    assert_true(fabs(gpu_sol_seconds(h, 1e6, 12e9, GPU_DT_FP32) - 12e9 / 4.3e12) < 1e-9);
    assert_true(fabs(gpu_lower_bound_seconds(h, 1e6, 12e9, GPU_DT_FP32) - 12e9 / 4.8e12) < 1e-9);
    /* fp32 compute at 3xFP16: 989.5/3 TFLOP/s (3xTF32's 494.5/3 is slower); the lower
     * bound uses TF32 itself */
    double fl = 2.0 * 4096 * 4096 * 4096;
    assert_true(fabs(gpu_sol_seconds(h, fl, 0, GPU_DT_FP32) - fl / (989.5e12 / 3)) < 1e-9);
    assert_true(fabs(gpu_lower_bound_seconds(h, fl, 0, GPU_DT_FP32) - fl / 494.5e12) < 1e-9);
    assert_true(fabs(gpu_sol_seconds(h, fl, 0, GPU_DT_BF16) - fl / 989.5e12) < 1e-9);
    assert_true(gpu_lower_bound_seconds(h, fl, 12e9, GPU_DT_FP32) <=
                gpu_sol_seconds(h, fl, 12e9, GPU_DT_FP32));
    /* L40S: no tensor fp64, so fp64 is the SIMT rate; 3xTF32 (61) loses to SIMT (91.6),
     * 3xFP16 (a third of 366) does not */
    const gpu_facts *l = gpu_lookup("NVIDIA L40S", 8, 9);
    assert_true(gpu_peak_flops(l, GPU_DT_FP64, true) == l->fp64);
    assert_true(l->tf32_tc / 3 < l->fp32 && l->fp16_tc / 3 > l->fp32);
    assert_true(gpu_peak_flops(l, GPU_DT_FP32, true) == l->fp16_tc / 3);
}

static void test_dtype_names(void **state)
{
    (void)state;
    assert_int_equal(gpu_dtype_parse("torch.float32"), GPU_DT_FP32);
    assert_int_equal(gpu_dtype_parse("bfloat16"), GPU_DT_BF16);
    assert_int_equal(gpu_dtype_parse("half"), GPU_DT_FP16);
    assert_int_equal(gpu_dtype_parse("int8"), -1);
    assert_string_equal(gpu_dtype_name(GPU_DT_TF32), "tf32");
    strbuf sb = STRBUF_INIT;
    strbuf_init(&sb);
    gpu_facts_describe(gpu_lookup("NVIDIA H200", 9, 0), &sb);
    assert_non_null(strstr(sb.buf, "sm_90a"));
    assert_non_null(strstr(sb.buf, "4.30 TB/s measured copy"));
    strbuf_release(&sb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lookup),
        cmocka_unit_test(test_generic),
        cmocka_unit_test(test_arch),
        cmocka_unit_test(test_bounds),
        cmocka_unit_test(test_dtype_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
