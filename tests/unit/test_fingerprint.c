/* Unit tests for fingerprint: parsing ptxas -v, SASS and resource usage captured on the
 * H200 host (tests/data/profile/probe_h200.*), and fingerprints of small CUDA kernels
 * compiled here with nvcc: a plain copy, a float4 copy, cp.async staging and mma.sync
 * must all differ; a whitespace/comment-only change must not. The nvcc part skips (77)
 * when nvcc is missing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fingerprint.h"
#include "util.h"

static const char *src_dir(void)
{
    const char *s = getenv("CUTEGEN_SOURCE_DIR");
    return s ? s : CUTEGEN_SOURCE_DIR;
}

static char *load(const char *rel)
{
    char *path = xasprintf("%s/tests/data/profile/%s", src_dir(), rel);
    strbuf sb = STRBUF_INIT;
    strbuf_init(&sb);
    if (read_file(path, &sb, 16 << 20) != 0)
        fail_msg("cannot read %s", path);
    free(path);
    return strbuf_detach(&sb);
}

static const fp_kernel *kernel_named(const fingerprint *f, const char *mangled)
{
    for (size_t i = 0; i < f->nkernels; i++)
        if (!strcmp(f->kernels[i].name, mangled))
            return &f->kernels[i];
    fail_msg("no kernel %s", mangled);
    return NULL;
}

#define FAM(x) (1u << (x))

/* ---------------------------------------------------------------- captured texts */

static void test_sass_and_resources(void **state)
{
    (void)state;
    char *sass = load("probe_h200.sass"), *res = load("probe_h200.res");
    char *ptxas = load("probe_h200_ptxas.txt");
    fingerprint f;
    fingerprint_init(&f);
    strbuf err = STRBUF_INIT;
    strbuf_init(&err);
    assert_int_equal(fingerprint_add_sass(&f, sass, &err), 5);
    assert_int_equal(fingerprint_add_resource_usage(&f, res, &err), 5);
    assert_int_equal(fingerprint_add_ptxas(&f, ptxas, &err), 5);
    fingerprint_finish(&f);
    assert_int_equal(f.nkernels, 5);
    const fp_kernel *copy = kernel_named(&f, "_Z11copy_kernelPKfPfm");
    const fp_kernel *copy4 = kernel_named(&f, "_Z12copy4_kernelPK6float4PS_m");
    const fp_kernel *cpa = kernel_named(&f, "_Z14cpasync_kernelPK6float4PS_m");
    const fp_kernel *mma = kernel_named(&f, "_Z10mma_kernelPK6__halfPfi");
    const fp_kernel *red = kernel_named(&f, "_Z13reduce_kernelPKfPfm");
    assert_int_equal(copy->families, 0);
    assert_int_equal(copy4->families, FAM(FP_LDG128));
    assert_int_equal(cpa->families, FAM(FP_CP_ASYNC)); /* LDGSTS.E.BYPASS.128 is not LDG128 */
    assert_int_equal(mma->families, FAM(FP_MMA));
    assert_int_equal(red->families, FAM(FP_SHFL) | FAM(FP_ATOMIC)); /* REDG */
    /* ptxas -v wins over resource usage: 4096 bytes smem, not SHARED:5120 */
    assert_int_equal(cpa->smem, 4096);
    assert_int_equal(cpa->regs, 14);
    assert_int_equal(cpa->barriers, 1);
    assert_int_equal(mma->regs, 18);
    assert_int_equal(copy->spill_stores, 0);
    assert_non_null(strstr(f.text, "families cp.async"));
    assert_non_null(strstr(f.text, "sources ptxas sass resource-usage"));
    assert_int_equal(strlen(f.hash), 64);
    fingerprint_release(&f);

    /* wrong inputs say so */
    fingerprint_init(&f);
    assert_int_equal(fingerprint_add_sass(&f, ptxas, &err), -1);
    assert_non_null(strstr(err.buf, "cuobjdump --dump-sass"));
    strbuf_reset(&err);
    assert_int_equal(fingerprint_add_ptx(&f, sass, &err), -1);
    assert_non_null(strstr(err.buf, ".entry"));
    strbuf_reset(&err);
    assert_int_equal(fingerprint_add_ptxas(&f, sass, &err), -1);
    assert_non_null(strstr(err.buf, "-Xptxas -v"));
    fingerprint_release(&f);
    strbuf_release(&err);
    free(sass);
    free(res);
    free(ptxas);
}

static void test_ptx_text(void **state)
{
    (void)state;
    const char *ptx =
        ".version 8.0\n.target sm_90a\n"
        ".visible .entry _Z1kPf(\n\t.param .u64 _Z1kPf_param_0\n)\n"
        ".maxntid 128, 1, 1\n.minnctapersm 2\n{\n"
        "\t@%p1 ld.global.nc.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1];\n"
        "\tcp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd2, {%r2, %r3}], [%r4];\n"
        "\twgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%f1}, %rd3, %rd4, 1, 1, 1, 0, 0;\n"
        "\tret;\n}\n"
        ".visible .entry _Z1jPf(\n)\n.reqntid 256, 1, 1\n{\n"
        "\tld.global.f32 %f1, [%rd1];\n\tst.local.f32 [%rd2], %f1;\n\tret;\n}\n";
    fingerprint f;
    fingerprint_init(&f);
    strbuf err = STRBUF_INIT;
    strbuf_init(&err);
    assert_int_equal(fingerprint_add_ptx(&f, ptx, &err), 2);
    fingerprint_finish(&f);
    const fp_kernel *k = kernel_named(&f, "_Z1kPf"), *j = kernel_named(&f, "_Z1jPf");
    assert_int_equal(k->families, FAM(FP_LDG128) | FAM(FP_TMA) | FAM(FP_WGMMA));
    assert_int_equal(k->maxntid[0], 128);
    assert_int_equal(k->minnctapersm, 2);
    assert_int_equal(j->reqntid[0], 256);
    assert_int_equal(j->families, FAM(FP_LOCAL));
    assert_non_null(strstr(f.text, "maxntid 128x1x1 minblocks 2"));
    /* sorted by name: j before k */
    assert_true(strstr(f.text, "_Z1jPf") < strstr(f.text, "_Z1kPf"));
    fingerprint_release(&f);
    strbuf_release(&err);
}

/* ---------------------------------------------------------------- compiled here */

static const char copy_src[] =
    "__global__ void k(const float *__restrict__ in, float *__restrict__ out, int n)\n"
    "{\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) out[i] = in[i] * 2.0f;\n}\n";
static const char copy_src_reformatted[] =
    "// the same kernel, reformatted, with comments\n"
    "__global__ void k(const float *__restrict__ in,\n"
    "                  float *__restrict__ out, int n) {\n"
    "  /* one element per thread */\n"
    "  int i = blockIdx.x * blockDim.x\n          + threadIdx.x;\n"
    "  if (i < n)   out[i] = in[i] * 2.0f;   // scale\n}\n";
static const char copy4_src[] =
    "__global__ void k(const float *__restrict__ in, float *__restrict__ out, int n)\n"
    "{\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (4 * i < n) {\n"
    "        float4 v = reinterpret_cast<const float4 *>(in)[i];\n"
    "        v.x *= 2.0f; v.y *= 2.0f; v.z *= 2.0f; v.w *= 2.0f;\n"
    "        reinterpret_cast<float4 *>(out)[i] = v;\n    }\n}\n";
static const char cpasync_src[] =
    "__global__ void k(const float *__restrict__ in, float *__restrict__ out, int n)\n"
    "{\n    __shared__ float4 buf[256];\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    unsigned s = (unsigned)__cvta_generic_to_shared(&buf[threadIdx.x]);\n"
    "    asm volatile(\"cp.async.cg.shared.global [%0], [%1], 16;\\n\" :: \"r\"(s), \"l\"(in + 4 * i));\n"
    "    asm volatile(\"cp.async.wait_all;\\n\" ::);\n"
    "    __syncthreads();\n"
    "    if (4 * i < n) out[i] = buf[(threadIdx.x + 1) % 256].x;\n}\n";
static const char mma_src[] =
    "__global__ void __launch_bounds__(128) k(const unsigned *a, float *c)\n"
    "{\n    unsigned a0 = a[threadIdx.x], a1 = a[threadIdx.x + 128];\n"
    "    float d0 = 0, d1 = 0, d2 = 0, d3 = 0;\n"
    "    asm volatile(\"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
    "{%0,%1,%2,%3}, {%4,%5,%4,%5}, {%4,%5}, {%0,%1,%2,%3};\\n\"\n"
    "        : \"+f\"(d0), \"+f\"(d1), \"+f\"(d2), \"+f\"(d3) : \"r\"(a0), \"r\"(a1));\n"
    "    c[threadIdx.x] = d0 + d1 + d2 + d3;\n}\n";

static char *nvcc_path;
static char tmpdir[] = "/tmp/cg-fp-test-XXXXXX";

static void compile(const char *name, const char *src, fingerprint *f)
{
    char *path = xasprintf("%s/%s.cu", tmpdir, name);
    assert_int_equal(write_file_atomic(path, src, strlen(src)), 0);
    const char *flags[] = { "-arch=sm_90a", "-std=c++17", "-O2", NULL };
    strbuf err = STRBUF_INIT;
    strbuf_init(&err);
    fingerprint_init(f);
    if (fingerprint_compile(nvcc_path, flags, path, 120, f, &err) != 0)
        fail_msg("%s: %s", name, err.buf);
    unlink(path);
    free(path);
    strbuf_release(&err);
}

static void test_compiled_kernels(void **state)
{
    (void)state;
    fingerprint copy, copy_b, copy4, cpa, mma;
    compile("copy", copy_src, &copy);
    compile("copy_b", copy_src_reformatted, &copy_b);
    compile("copy4", copy4_src, &copy4);
    compile("cpasync", cpasync_src, &cpa);
    compile("mma", mma_src, &mma);
    if (getenv("CUTEGEN_SHOW_FINGERPRINT"))
        fprintf(stderr, "%s\n%s\n%s\n%s\n", copy.text, copy4.text, cpa.text, mma.text);

    assert_true(fingerprint_equal(&copy, &copy_b));
    assert_string_equal(copy.text, copy_b.text);
    const fingerprint *all[] = { &copy, &copy4, &cpa, &mma };
    for (int i = 0; i < 4; i++)
        for (int j = i + 1; j < 4; j++)
            if (fingerprint_equal(all[i], all[j]))
                fail_msg("fingerprints %d and %d are equal:\n%s", i, j, all[i]->text);
    assert_int_equal(copy.kernels[0].families, 0);
    assert_true(copy4.kernels[0].families & FAM(FP_LDG128));
    assert_true(cpa.kernels[0].families & FAM(FP_CP_ASYNC));
    assert_true(cpa.kernels[0].smem == 4096);
    assert_true(mma.kernels[0].families & FAM(FP_MMA));
    assert_int_equal(mma.kernels[0].maxntid[0], 128);
    assert_true(copy.kernels[0].regs > 0);
    assert_non_null(copy.kernels[0].demangled);

    strbuf diff = STRBUF_INIT;
    strbuf_init(&diff);
    fingerprint_diff(&copy, &copy_b, &diff);
    assert_int_equal(diff.len, 0);
    fingerprint_diff(&copy, &copy4, &diff);
    assert_non_null(strstr(diff.buf, "+ldg128"));
    strbuf_reset(&diff);
    fingerprint_diff(&copy, &cpa, &diff);
    assert_non_null(strstr(diff.buf, "+cp.async"));
    assert_non_null(strstr(diff.buf, "smem 0 -> 4096"));
    strbuf_reset(&diff);
    fingerprint_diff(&copy, &mma, &diff);
    assert_non_null(strstr(diff.buf, "-kernel k(float const*, float*, int)"));
    assert_non_null(strstr(diff.buf, "+kernel k(unsigned int const*, float*)"));
    strbuf_release(&diff);
    for (int i = 0; i < 4; i++)
        fingerprint_release((fingerprint *)all[i]);
    fingerprint_release(&copy_b);
}

static void test_compile_error(void **state)
{
    (void)state;
    char *path = xasprintf("%s/bad.cu", tmpdir);
    const char *src = "__global__ void k() { undefined_thing(); }\n";
    assert_int_equal(write_file_atomic(path, src, strlen(src)), 0);
    fingerprint f;
    fingerprint_init(&f);
    strbuf err = STRBUF_INIT;
    strbuf_init(&err);
    assert_int_equal(fingerprint_compile(nvcc_path, NULL, path, 60, &f, &err), -1);
    assert_non_null(strstr(err.buf, "undefined_thing"));
    fingerprint_release(&f);
    strbuf_release(&err);
    unlink(path);
    free(path);
}

int main(void)
{
    const struct CMUnitTest offline[] = {
        cmocka_unit_test(test_sass_and_resources),
        cmocka_unit_test(test_ptx_text),
    };
    int failed = cmocka_run_group_tests(offline, NULL, NULL);
    nvcc_path = find_in_path("nvcc");
    if (!nvcc_path && is_executable("/usr/local/cuda/bin/nvcc"))
        nvcc_path = xstrdup("/usr/local/cuda/bin/nvcc");
    if (!nvcc_path) {
        fprintf(stderr, "skip: nvcc is not in PATH or /usr/local/cuda/bin, so the "
                        "compiled-kernel fingerprints cannot be tested\n");
        return failed ? failed : 77;
    }
    if (!mkdtemp(tmpdir))
        return 1;
    const struct CMUnitTest compiled[] = {
        cmocka_unit_test(test_compiled_kernels),
        cmocka_unit_test(test_compile_error),
    };
    failed += cmocka_run_group_tests(compiled, NULL, NULL);
    rmdir(tmpdir);
    free(nvcc_path);
    return failed;
}
