/* Unit tests for kb: loading knowledge/, BM25 retrieval on realistic queries (a real
 * CuTe compile log, a kernel idea, an arch feature), the size and count caps, empty and
 * broken directories; and every ```cuda snippet of every note compiled by nvcc for
 * sm_90a (skipped, saying why, without nvcc or CUTLASS), two compilers at a time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "build.h"
#include "kb.h"
#include "proc.h"
#include "util.h"

static kb *load_default(void)
{
    kb *k = NULL;
    strbuf err = STRBUF_INIT;
    if (kb_load(NULL, &k, &err) != 0)
        fail_msg("kb_load: %s", strbuf_str(&err));
    strbuf_release(&err);
    return k;
}

/* The title of the first note kb_search returns for query, malloc'd ("" if none). */
static char *top_title(const kb *k, const char *query)
{
    strbuf out = STRBUF_INIT;
    int n = kb_search(k, query, 3, 100000, &out);
    char *title;
    if (n == 0) {
        title = xstrdup("");
    } else {
        const char *e = strchr(out.buf, '\n');
        title = xstrndup(out.buf + 2, (size_t)(e - out.buf - 2));
    }
    strbuf_release(&out);
    return title;
}

static void expect_top(const kb *k, const char *query, const char *title_prefix)
{
    char *t = top_title(k, query);
    if (!str_starts_with(t, title_prefix))
        fail_msg("query '%.60s...': top note is '%s', expected '%s'", query, t, title_prefix);
    free(t);
}

static void test_load_default(void **state)
{
    (void)state;
    kb *k = load_default();
    assert_true(kb_size(k) >= 20);
    assert_true(kb_size(k) <= 40);
    kb_free(k);
}

static void test_retrieval(void **state)
{
    (void)state;
    kb *k = load_default();
    /* the raw nvcc log of a CuTe misuse: 23 kB of template backtrace */
    char *path = xasprintf("%s/tests/data/compile/cute_template.log", cg_source_dir());
    strbuf log = STRBUF_INIT;
    assert_int_equal(read_file(path, &log, 1 << 22), 0);
    free(path);
    expect_top(k, log.buf, "Compile error: CuTe static assertions");
    strbuf_release(&log);
    /* ... and the digest of it that the model would see */
    expect_top(k,
               "error: kernel.cu:12: static assertion failed with \"Mismatched Ranks\" "
               "(inside cute/stride.hpp:108)\n   12 | gy(0, 0) = gx(threadIdx.x, 0, 1) + part(0);",
               "Compile error: CuTe static assertions");
    expect_top(k, "softmax reduction warp shuffle", "Reductions: warp shuffles");
    expect_top(k, "wgmma sm90 warpgroup", "WGMMA on Hopper");
    expect_top(k, "ptxas error   : Entry function '_Z1kPf' uses too much shared data "
                  "(0x40000 bytes, 0x38c00 max)", "ptxas errors");
    expect_top(k, "error: calling a constexpr __host__ function(\"max\") from a __global__ "
                  "function(\"k\") is not allowed", "Compile error: __host__/__device__");
    expect_top(k, "error: expression must have a constant value Int<n>", "Compile error: static vs dynamic");
    expect_top(k, "fp32 matmul on tensor cores with fp32 accuracy 3xTF32", "3xTF32");
    expect_top(k, "shared memory bank conflicts swizzle", "Swizzled shared memory");
    expect_top(k, "TMA mbarrier grid_constant", "TMA on Hopper");
    expect_top(k, "wrong_result: max error 3.2e-01, first bad index 17 NaN", "Debugging wrong results");
    expect_top(k, "nn.LayerNorm over the last dimension, eps 1e-5", "Row-wise normalisations");
    expect_top(k, "ConvTranspose2d depthwise convolution", "Convolutions as implicit GEMM");
    /* nothing relevant: nothing returned */
    strbuf out = STRBUF_INIT;
    assert_int_equal(kb_search(k, "zzqx quuxfrob", 5, 100000, &out), 0);
    assert_int_equal(out.len, 0);
    assert_int_equal(kb_search(k, "", 5, 100000, &out), 0);
    strbuf_release(&out);
    kb_free(k);
}

static void test_caps(void **state)
{
    (void)state;
    kb *k = load_default();
    const char *q = "CuTe tiled copy MMA layout shared memory pipeline reduction";
    strbuf out = STRBUF_INIT;
    for (size_t cap = 0; cap <= 20000; cap += 1500) {
        strbuf_reset(&out);
        int n = kb_search(k, q, 10, cap, &out);
        assert_true(out.len <= cap);
        assert_true(n >= 0 && n <= 10);
        if (n > 0)
            assert_true(str_starts_with(out.buf, "# ")); /* whole notes only */
    }
    strbuf_reset(&out);
    int n = kb_search(k, q, 2, 1000000, &out);
    assert_int_equal(n, 2);
    /* two whole notes: the second starts after a blank line */
    const char *second = strstr(out.buf, "\n\n# ");
    assert_non_null(second);
    assert_null(strstr(second + 3, "\n\n# "));
    strbuf_reset(&out);
    assert_int_equal(kb_search(k, q, 0, 1000000, &out), 0);
    assert_int_equal(kb_search(k, q, 5, 10, &out), 0);
    assert_int_equal(out.len, 0);
    strbuf_release(&out);
    kb_free(k);
}

static void test_empty_and_bad_dirs(void **state)
{
    (void)state;
    char tmpl[] = "/tmp/cutegen-kb.XXXXXX";
    char *dir = mkdtemp(tmpl);
    assert_non_null(dir);
    kb *k = NULL;
    strbuf err = STRBUF_INIT, out = STRBUF_INIT;
    assert_int_equal(kb_load(dir, &k, &err), 0);
    assert_int_equal(kb_size(k), 0);
    assert_int_equal(kb_search(k, "layout", 5, 1000, &out), 0);
    kb_free(k);

    char *note = xasprintf("%s/bad.md", dir);
    const char *text = "# A title\nno tags line here\n";
    assert_int_equal(write_file_atomic(note, text, strlen(text)), 0);
    k = NULL;
    assert_int_equal(kb_load(dir, &k, &err), -1);
    assert_null(k);
    assert_non_null(strstr(err.buf, "bad.md"));
    assert_non_null(strstr(err.buf, "tags:"));
    unlink(note);
    free(note);

    note = xasprintf("%s/good.md", dir);
    text = "# Good\ntags: alpha, beta_gamma\n\nBody about TiledCopy.\n";
    assert_int_equal(write_file_atomic(note, text, strlen(text)), 0);
    assert_int_equal(kb_load(dir, &k, &err), 0);
    assert_int_equal(kb_size(k), 1);
    assert_int_equal(kb_search(k, "tiled_copy gamma", 5, 1000, &out), 1); /* split identifiers */
    assert_string_equal(out.buf, text);
    kb_free(k);
    unlink(note);
    free(note);
    rmdir(dir);

    strbuf_reset(&err);
    assert_int_equal(kb_load("/nonexistent/knowledge", &k, &err), -1);
    assert_non_null(strstr(err.buf, "unable to open knowledge directory"));
    strbuf_release(&err);
    strbuf_release(&out);
}

/* ------------------------------------------------------------------------------------
 * Every snippet compiles
 * ------------------------------------------------------------------------------------ */

typedef struct snippet {
    char *note;     /* file name of the note */
    char *path;     /* the extracted .cu */
    bool ok;
    strbuf log;
} snippet;

typedef struct compile_job {
    snippet *s;
    int n;
    int next;
    pthread_mutex_t lock;
    const char *nvcc, *cutlass, *abi_include;
} compile_job;

static void *compile_worker(void *arg)
{
    compile_job *job = arg;
    char *inc_cutlass = xasprintf("-I%s", job->cutlass);
    char *inc_abi = xasprintf("-I%s", job->abi_include);
    for (;;) {
        pthread_mutex_lock(&job->lock);
        int i = job->next++;
        pthread_mutex_unlock(&job->lock);
        if (i >= job->n)
            break;
        snippet *s = &job->s[i];
        const char *argv[] = { job->nvcc, "-std=c++17", "--expt-relaxed-constexpr",
                               "-gencode=arch=compute_90a,code=sm_90a", inc_cutlass, inc_abi,
                               "-cubin", "-o", "/dev/null", s->path, NULL };
        proc_opts o = { .argv = argv, .timeout_s = 240, .max_output = 1 << 20 };
        proc_result r;
        proc_result_init(&r);
        if (proc_run(&o, &r) == 0 && r.exit_code == 0 && !r.timed_out) {
            s->ok = true;
        } else {
            strbuf_addf(&s->log, "%s%s%s", r.timed_out ? "(timed out) " : "", strbuf_str(&r.out),
                        strbuf_str(&r.err));
        }
        proc_result_release(&r);
    }
    free(inc_cutlass);
    free(inc_abi);
    return NULL;
}

/* Extracts the ```cuda blocks of every note into dir; returns them. */
static snippet *extract_snippets(const char *kdir, const char *dir, int *n_out)
{
    DIR *d = opendir(kdir);
    assert_non_null(d);
    snippet *s = NULL;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!str_ends_with(e->d_name, ".md"))
            continue;
        char *path = xasprintf("%s/%s", kdir, e->d_name);
        strbuf text = STRBUF_INIT;
        assert_int_equal(read_file(path, &text, 1 << 20), 0);
        free(path);
        int block = 0;
        const char *p = text.buf;
        while ((p = strstr(p, "```cuda\n")) != NULL) {
            p += 8;
            const char *end = strstr(p, "\n```");
            if (!end)
                fail_msg("%s: unterminated ```cuda block", e->d_name);
            s = xrealloc(s, (size_t)(n + 1) * sizeof(snippet));
            snippet *sn = &s[n++];
            sn->note = xstrdup(e->d_name);
            sn->path = xasprintf("%s/%.*s-%d.cu", dir, (int)(strlen(e->d_name) - 3), e->d_name, block++);
            sn->ok = false;
            strbuf_init(&sn->log);
            strbuf code = STRBUF_INIT;
            strbuf_add(&code, p, (size_t)(end - p + 1));
            assert_int_equal(write_file_atomic(sn->path, code.buf, code.len), 0);
            strbuf_release(&code);
            p = end + 4;
        }
        strbuf_release(&text);
    }
    closedir(d);
    *n_out = n;
    return s;
}

static void test_snippets_compile(void **state)
{
    (void)state;
    strbuf nvcc = STRBUF_INIT, nv_version = STRBUF_INIT, how = STRBUF_INIT;
    strbuf cutlass = STRBUF_INIT, cl_version = STRBUF_INIT;
    if (nvcc_locate(&nvcc, &nv_version, &how) < 0) {
        print_message("SKIP: knowledge snippets not compiled: nvcc not found (%s)\n", strbuf_str(&how));
        strbuf_release(&nvcc);
        strbuf_release(&nv_version);
        strbuf_release(&how);
        skip();
    }
    strbuf_reset(&how);
    if (cutlass_locate(NULL, &cutlass, &cl_version, &how) < 0) {
        print_message("SKIP: knowledge snippets not compiled: CUTLASS not found (%s)\n", strbuf_str(&how));
        strbuf_release(&nvcc);
        strbuf_release(&nv_version);
        strbuf_release(&cutlass);
        strbuf_release(&cl_version);
        strbuf_release(&how);
        skip();
    }
    char tmpl[] = "/tmp/cutegen-kb-snippets.XXXXXX";
    char *dir = mkdtemp(tmpl);
    assert_non_null(dir);
    char *kdir = xasprintf("%s/knowledge", cg_source_dir());
    char *abi = xasprintf("%s/include", cg_source_dir());
    compile_job job = { .nvcc = nvcc.buf, .cutlass = cutlass.buf, .abi_include = abi };
    job.s = extract_snippets(kdir, dir, &job.n);
    assert_true(job.n >= 20);
    pthread_mutex_init(&job.lock, NULL);
    double t0 = now_seconds();
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&th[i], NULL, compile_worker, &job), 0);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    pthread_mutex_destroy(&job.lock);
    int failed = 0;
    for (int i = 0; i < job.n; i++) {
        snippet *s = &job.s[i];
        if (!s->ok) {
            failed++;
            print_message("FAIL: snippet of knowledge/%s does not compile:\n%.3000s\n", s->note,
                          strbuf_str(&s->log));
        }
        unlink(s->path);
        free(s->note);
        free(s->path);
        strbuf_release(&s->log);
    }
    print_message("%d snippets compiled for sm_90a with nvcc %s, CUTLASS %s in %.1f s, %d failed\n",
                  job.n, nv_version.buf, cl_version.buf, now_seconds() - t0, failed);
    free(job.s);
    rmdir(dir);
    free(kdir);
    free(abi);
    strbuf_release(&nvcc);
    strbuf_release(&nv_version);
    strbuf_release(&cutlass);
    strbuf_release(&cl_version);
    strbuf_release(&how);
    assert_int_equal(failed, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_load_default),
        cmocka_unit_test(test_retrieval),
        cmocka_unit_test(test_caps),
        cmocka_unit_test(test_empty_and_bad_dirs),
        cmocka_unit_test(test_snippets_compile),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
