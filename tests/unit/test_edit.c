/* Unit tests for edit: model replies (the .txt files of tests/data/edit, written the way models
 * answer) applied to tests/data/edit/kernel.cu must give exactly the expected kernel, or
 * an error for the model that names the failed block, the nearest kernel text with the
 * kernel's own line numbers, and what differs; nothing is applied when any block fails. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "edit.h"
#include "util.h"

static char *kernel; /* tests/data/edit/kernel.cu */

static char *fixture(const char *name)
{
    strbuf sb = STRBUF_INIT;
    char *path = xasprintf("%s/tests/data/edit/%s", cg_source_dir(), name);
    assert_int_equal(read_file(path, &sb, 1 << 20), 0);
    free(path);
    return strbuf_detach(&sb);
}

/* s with its only occurrence of from replaced by to (fails if from is not there once). */
static char *replaced(const char *s, const char *from, const char *to)
{
    const char *at = strstr(s, from);
    assert_non_null(at);
    assert_null(strstr(at + 1, from));
    strbuf sb = STRBUF_INIT;
    strbuf_add(&sb, s, (size_t)(at - s));
    strbuf_adds(&sb, to);
    strbuf_adds(&sb, at + strlen(from));
    return strbuf_detach(&sb);
}

/* Applies fixture name to current into r. */
static void apply_fixture(const char *current, const char *name, edit_result *r)
{
    char *reply = fixture(name);
    assert_int_equal(edit_apply(current, reply, r), 0);
    free(reply);
}

#define assert_contains(hay, needle)                                                       \
    do {                                                                                   \
        if (!strstr((hay), (needle)))                                                      \
            fail_msg("expected to find \"%s\" in:\n%s", (needle), (hay));                  \
    } while (0)

#define assert_lacks(hay, needle)                                                          \
    do {                                                                                   \
        if (strstr((hay), (needle)))                                                       \
            fail_msg("did not expect \"%s\" in:\n%s", (needle), (hay));                    \
    } while (0)

/* A failed edit: kind, nothing applied, no source. */
static void assert_failed(const edit_result *r, edit_kind kind)
{
    assert_int_equal(r->kind, kind);
    assert_false(r->ok);
    assert_int_equal(r->source.len, 0);
    assert_int_equal(r->blocks_applied, 0);
    assert_true(r->error.len > 0);
    assert_true(r->error.len <= 1500);
}

/* ------------------------------------------------------------ whole files */

static void test_whole_file_cuda(void **state)
{
    (void)state;
    edit_result r;
    edit_result_init(&r);
    apply_fixture(kernel, "whole_cuda.txt", &r);
    char *want = replaced(kernel, "constexpr int kThreads = 256;",
                          "constexpr int kThreads = 512;  // fewer blocks, same occupancy");
    assert_int_equal(r.kind, EDIT_WHOLE_FILE);
    assert_true(r.ok);
    assert_string_equal(r.source.buf, want);
    assert_int_equal(r.error.len, 0);
    assert_int_equal(r.notes.len, 0);
    assert_true(str_starts_with(r.explanation.buf, "I switched the block size"));
    assert_true(str_ends_with(r.explanation.buf, "multiple of 4."));
    assert_lacks(r.explanation.buf, "#include");
    assert_lacks(r.explanation.buf, "```");
    free(want);
    edit_result_release(&r);
}

static void test_whole_file_first_version(void **state)
{
    (void)state;
    edit_result r;
    edit_result_init(&r);
    apply_fixture("", "whole_cuda.txt", &r);
    assert_true(r.ok);
    assert_contains(r.source.buf, "constexpr int kThreads = 512;");
    edit_result_release(&r);
}

static void test_several_fences_takes_cg_forward(void **state)
{
    (void)state;
    edit_result r;
    edit_result_init(&r);
    apply_fixture(kernel, "several_fences.txt", &r);
    char *want = replaced(kernel, "float4 v = x[i], s = w[f], t = b[f];",
                          "float4 v = __ldcs(&x[i]), s = __ldg(&w[f]), t = __ldg(&b[f]);");
    assert_int_equal(r.kind, EDIT_WHOLE_FILE);
    assert_true(r.ok);
    assert_string_equal(r.source.buf, want);
    assert_contains(r.notes.buf, "the reply held 2 code blocks; took block 2");
    assert_contains(r.notes.buf, "the one that defines cg_forward");
    assert_contains(r.explanation.buf, "Here is the complete file:");
    assert_lacks(r.explanation.buf, "nvcc");
    assert_lacks(r.explanation.buf, "float4 v0");
    free(want);
    edit_result_release(&r);
}

static void test_several_fences_prefers_cg_forward_over_longest(void **state)
{
    (void)state;
    static const char reply[] =
        "Before, the scalar loop (longer than the new file):\n```cuda\n"
        "// the old loop, one element per iteration, with the feature index recomputed\n"
        "for (int64_t i = blockIdx.x * kThreads + threadIdx.x; i < n; i += stride) {\n"
        "    int64_t f = i % features;\n    y[i] = x[i] * w[f] + b[f];\n}\n```\nAfter:\n```cu\n"
        "CG_EXPORT int cg_forward(const cg_tensor *in, int n_in, cg_tensor *out, int n_out,\n"
        "                         void *ws, size_t wsb, cudaStream_t s) { return 0; }\n```\n";
    static const char neither[] =
        "```c++\nint a;\n```\n```\nint a;\nint b;\n```\n```cpp\nint c;\n```\n";
    edit_result r;
    edit_result_init(&r);
    assert_int_equal(edit_apply(kernel, reply, &r), 0);
    assert_true(r.ok);
    assert_true(str_starts_with(r.source.buf, "CG_EXPORT int cg_forward("));
    assert_contains(r.notes.buf, "took block 2 (reply lines 11-12), the one that defines cg_forward");
    assert_int_equal(edit_apply(kernel, neither, &r), 0);
    assert_true(r.ok);
    assert_string_equal(r.source.buf, "int a;\nint b;\n");
    assert_contains(r.notes.buf, "took block 2 (reply lines 5-6), the longest (none defines cg_forward)");
    edit_result_release(&r);
}

static void test_prose_only(void **state)
{
    (void)state;
    edit_result r;
    edit_result_init(&r);
    apply_fixture(kernel, "prose_only.txt", &r);
    assert_failed(&r, EDIT_NONE);
    assert_true(str_starts_with(r.error.buf, "the reply held no code: answer with the whole "
                                             "kernel file in one ```cuda code block, or with "
                                             "SEARCH/REPLACE blocks"));
    assert_true(str_starts_with(r.explanation.buf, "The kernel is already memory bound"));
    assert_true(str_ends_with(r.explanation.buf, "noise."));
    /* with no kernel yet, only a whole file is asked for */
    apply_fixture("", "prose_only.txt", &r);
    assert_failed(&r, EDIT_NONE);
    assert_lacks(r.error.buf, "SEARCH");
    assert_contains(r.error.buf, "it must define cg_forward");
    edit_result_release(&r);
}

static void test_code_in_another_language_only(void **state)
{
    (void)state;
    edit_result r;
    edit_result_init(&r);
    assert_int_equal(edit_apply(kernel, "Run this:\n```python\nprint(1)\n```\n", &r), 0);
    assert_failed(&r, EDIT_NONE);
    assert_true(str_starts_with(r.error.buf, "the reply held code only in a ```python block"));
    edit_result_release(&r);
}

static void test_empty_fence(void **state)
{
    (void)state;
    edit_result r;
    edit_result_init(&r);
    apply_fixture(kernel, "empty_fence.txt", &r);
    assert_failed(&r, EDIT_WHOLE_FILE);
    assert_true(str_starts_with(r.error.buf, "the reply's code block is empty: answer with"));
    assert_string_equal(r.explanation.buf,
                        "Here is the optimised kernel:\n\nIt uses 16-byte loads throughout.");
    edit_result_release(&r);
}

/* ------------------------------------------------------------ blocks that apply */

static void test_one_block(void **state)
{
    (void)state;
    edit_result r;
    edit_result_init(&r);
    apply_fixture(kernel, "one_block.txt", &r);
    char *want = replaced(kernel, "float4 v = x[i], s = w[f], t = b[f];",
                          "float4 v = __ldcs(&x[i]), s = __ldg(&w[f]), t = __ldg(&b[f]);");
    assert_int_equal(r.kind, EDIT_BLOCKS);
    assert_true(r.ok);
    assert_int_equal(r.blocks_total, 1);
    assert_int_equal(r.blocks_applied, 1);
    assert_string_equal(r.source.buf, want);
    assert_int_equal(r.notes.len, 0); /* an exact match needs no note */
    assert_string_equal(r.explanation.buf,
                        "Use streaming loads for x (read once) and read-only cached loads for "
                        "the parameters:\n\nThis keeps x from evicting weight and bias from L2.");
    free(want);
    edit_result_release(&r);
}

static void test_three_blocks_in_order(void **state)
{
    (void)state;
    edit_result r;
    edit_result_init(&r);
    apply_fixture(kernel, "three_blocks.txt", &r);
    char *a = replaced(kernel, "constexpr int kThreads = 256;\n",
                       "constexpr int kThreads = 256;\n"
                       "constexpr int kMaxBlocks = 132 * 16;  // 16 blocks per SM: 2048 threads per SM\n");
    char *want = replaced(a, "        scale_bias_vec4<<<unsigned((n4 + kThreads - 1) / kThreads), kThreads, 0, stream>>>(\n",
                          "        const int64_t blocks = (n4 + kThreads - 1) / kThreads;\n"
                          "        scale_bias_vec4<<<unsigned(blocks < kMaxBlocks ? blocks : kMaxBlocks), kThreads, 0, stream>>>(\n");
    assert_true(r.ok);
    assert_int_equal(r.blocks_total, 3);
    assert_int_equal(r.blocks_applied, 3);
    assert_string_equal(r.source.buf, want);
    free(a);
    free(want);
    edit_result_release(&r);
}

static void test_trailing_whitespace(void **state)
{
    (void)state;
    edit_result r;
    edit_result_init(&r);
    char *reply = fixture("trailing_ws.txt");
    assert_non_null(strstr(reply, "features;  \n")); /* the fixture really has them */
    assert_non_null(strstr(reply, "b[f];\t\n"));
    free(reply);
    apply_fixture(kernel, "trailing_ws.txt", &r);
    char *want = replaced(kernel, "    y[i] = x[i] * w[f] + b[f];\n", "    y[i] = fmaf(x[i], w[f], b[f]);\n");
    assert_true(r.ok);
    assert_string_equal(r.source.buf, want);
    assert_string_equal(r.notes.buf, "block 1: matched ignoring trailing whitespace at lines 19-21\n");
    free(want);
    edit_result_release(&r);
}

static void test_indentation_only(void **state)
{
    (void)state;
    edit_result r;
    edit_result_init(&r);
    apply_fixture(kernel, "indent.txt", &r);
    char *want = replaced(kernel,
                          "    v.x = v.x * s.x + t.x;\n    v.y = v.y * s.y + t.y;\n"
                          "    v.z = v.z * s.z + t.z;\n    v.w = v.w * s.w + t.w;\n",
                          "    v.x = fmaf(v.x, s.x, t.x);\n    v.y = fmaf(v.y, s.y, t.y);\n"
                          "    v.z = fmaf(v.z, s.z, t.z);\n    v.w = fmaf(v.w, s.w, t.w);\n");
    assert_true(r.ok);
    assert_string_equal(r.source.buf, want); /* the REPLACE lines got the kernel's indent */
    assert_string_equal(r.notes.buf, "block 1: matched ignoring indentation at lines 32-35; "
                                     "REPLACE lines re-indented to match\n");
    free(want);
    edit_result_release(&r);
}

static void test_exact_match_beats_indentation_blind_ones(void **state)
{
    (void)state;
    /* the 4-space pair is at lines 65-66; lines 58-59 hold it with 8 spaces */
    static const char reply[] =
        "<<<<<<< SEARCH\n"
        "    if (cudaGetLastError() != cudaSuccess)\n"
        "        return CG_LAUNCH_FAILED;\n"
        "=======\n"
        "    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess)\n"
        "        return CG_LAUNCH_FAILED;\n"
        ">>>>>>> REPLACE\n";
    edit_result r;
    edit_result_init(&r);
    assert_int_equal(edit_apply(kernel, reply, &r), 0);
    assert_true(r.ok);
    assert_int_equal(r.notes.len, 0);
    assert_contains(r.source.buf, "        if (cudaGetLastError() != cudaSuccess)\n"); /* line 58 kept */
    assert_contains(r.source.buf, "\n    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess)\n");
    edit_result_release(&r);
}

static void test_crlf_reply(void **state)
{
    (void)state;
    char *reply = fixture("crlf.txt");
    assert_non_null(strstr(reply, "<<<<<<< SEARCH\r\n")); /* the fixture really is CRLF */
    free(reply);
    edit_result r, lf;
    edit_result_init(&r);
    edit_result_init(&lf);
    apply_fixture(kernel, "crlf.txt", &r);
    apply_fixture(kernel, "one_block.txt", &lf);
    assert_true(r.ok);
    assert_string_equal(r.source.buf, lf.source.buf);
    assert_null(strchr(r.source.buf, '\r'));
    assert_null(strchr(r.explanation.buf, '\r'));
    edit_result_release(&r);
    edit_result_release(&lf);
}

static void test_markers_of_5_and_9(void **state)
{
    (void)state;
    char *reply = fixture("markers_5_9.txt");
    assert_non_null(strstr(reply, "\n<<<<< SEARCH \n"));
    assert_non_null(strstr(reply, "\n<<<<<<<<< SEARCH\n"));
    free(reply);
    edit_result r;
    edit_result_init(&r);
    apply_fixture(kernel, "markers_5_9.txt", &r);
    char *a = replaced(kernel, "kThreads = 256;", "kThreads = 1024;");
    char *want = replaced(a, "    if (n == 0)\n", "    if (n == 0 || features == 0)\n");
    assert_true(r.ok);
    assert_int_equal(r.blocks_total, 2);
    assert_string_equal(r.source.buf, want);
    assert_string_equal(r.explanation.buf, "Two small edits.");
    free(a);
    free(want);
    /* 4 and 10 marker characters are not markers: the reply is prose */
    static const char bad[] = "<<<< SEARCH\nx\n====\ny\n>>>>>>>>>> REPLACE\n";
    assert_int_equal(edit_apply(kernel, bad, &r), 0);
    assert_failed(&r, EDIT_NONE);
    edit_result_release(&r);
}

static void test_empty_search_on_empty_kernel(void **state)
{
    (void)state;
    edit_result r;
    edit_result_init(&r);
    apply_fixture("", "first_version_blocks.txt", &r);
    assert_int_equal(r.kind, EDIT_BLOCKS);
    assert_true(r.ok);
    assert_string_equal(r.source.buf, kernel);
    edit_result_release(&r);
}

/* ------------------------------------------------------------ blocks that fail */

static void test_block_matching_nowhere(void **state)
{
    (void)state;
    edit_result r;
    edit_result_init(&r);
    apply_fixture(kernel, "nowhere.txt", &r);
    assert_failed(&r, EDIT_BLOCKS);
    assert_int_equal(r.blocks_total, 1);
    const char *e = r.error.buf;
    assert_contains(e, "Block 1 of 1 (SEARCH starting \"int64_t i = int64_t(blockIdx.x) * "
                       "kThreads + threadIdx.x;\"): its SEARCH text matches nothing");
    assert_contains(e, "Nearest text in the kernel: lines 16-20 (97% similar). What differs:\n");
    assert_contains(e, "The kernel there:\n"
                       "    16 |     int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x;\n");
    assert_contains(e, "    19 |     int64_t f = i % features;\n"
                       "    20 |     y[i] = x[i] * w[f] + b[f];\n");
    assert_lacks(e, "    21 |");
    assert_contains(e, "SEARCH line 4 differs from kernel line 19 at column 8: you have "
                       "\"int f = i % features;\", the kernel has \"int64_t f = i % features;\"");
    assert_contains(e, "Nothing was applied");
    edit_result_release(&r);
}

static void test_nearest_text_survives_a_missing_line(void **state)
{
    (void)state;
    /* the model forgot "return;" and wrote n4 as n: a window as long as the SEARCH
     * (4 lines) cannot hold the place it meant, lines 27-31; a little slack can */
    static const char reply[] =
        "<<<<<<< SEARCH\n"
        "    int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x;\n"
        "    if (i >= n)\n"
        "    int64_t f = i % features4;\n"
        "    float4 v = x[i], s = w[f], t = b[f];\n"
        "=======\n"
        ">>>>>>> REPLACE\n";
    edit_result r;
    edit_result_init(&r);
    assert_int_equal(edit_apply(kernel, reply, &r), 0);
    assert_failed(&r, EDIT_BLOCKS);
    assert_contains(r.error.buf, "Nearest text in the kernel: lines 27-31 (87% similar).");
    assert_contains(r.error.buf, "The kernel there:\n    27 |");
    assert_contains(r.error.buf, "    31 |     float4 v = x[i], s = w[f], t = b[f];\n");
    assert_contains(r.error.buf, "SEARCH line 2 differs from kernel line 28 at column 15: you "
                                 "have \"if (i >= n)\", the kernel has \"if (i >= n4)\"");
    assert_contains(r.error.buf, "kernel line 29 is missing from your SEARCH: \"return;\"");
    edit_result_release(&r);
}

static void test_block_matching_twice(void **state)
{
    (void)state;
    edit_result r;
    edit_result_init(&r);
    apply_fixture(kernel, "twice.txt", &r);
    assert_failed(&r, EDIT_BLOCKS);
    assert_contains(r.error.buf, "Block 1 of 1 (SEARCH starting \"int64_t i = int64_t(blockIdx.x)");
    assert_contains(r.error.buf, "its SEARCH text matches 2 places in the current kernel: "
                                 "line 16 and line 27. Add lines of context");
    edit_result_release(&r);
}

static void test_good_and_bad_blocks_apply_nothing(void **state)
{
    (void)state;
    edit_result r;
    edit_result_init(&r);
    apply_fixture(kernel, "mixed.txt", &r);
    assert_failed(&r, EDIT_BLOCKS);
    assert_int_equal(r.blocks_total, 3);
    const char *e = r.error.buf;
    assert_true(str_starts_with(e, "1 of 3 SEARCH/REPLACE blocks failed.\n"));
    assert_contains(e, "Block 2 of 3 (SEARCH starting \"if (x.dtype != CG_FLOAT32");
    assert_lacks(e, "Block 1 of 3");
    assert_lacks(e, "Block 3 of 3");
    assert_contains(e, "Nearest text in the kernel: lines 46-47 (");
    assert_contains(e, "SEARCH line 1 differs from kernel line 46 at column 70");
    assert_contains(e, "the kernel has \"...cg_is_contiguous(&x) || !cg_is_contiguous(&y))\"");
    assert_contains(r.notes.buf, "block 1 matched\nblock 3 matched\n");
    edit_result_release(&r);
}

static void test_block_broken_by_an_earlier_block(void **state)
{
    (void)state;
    static const char reply[] =
        "<<<<<<< SEARCH\nconstexpr int kThreads = 256;\n=======\nconstexpr int kThreads = 128;\n"
        ">>>>>>> REPLACE\n"
        "<<<<<<< SEARCH\nconstexpr int kThreads = 256;\n\n=======\nconstexpr int kThreads = 64;\n\n"
        ">>>>>>> REPLACE\n";
    edit_result r;
    edit_result_init(&r);
    assert_int_equal(edit_apply(kernel, reply, &r), 0);
    assert_failed(&r, EDIT_BLOCKS);
    assert_contains(r.error.buf, "Block 2 of 2");
    assert_contains(r.error.buf, "It is at line 10 of the kernel you were shown, but an earlier "
                                 "block of this reply changed those lines");
    assert_contains(r.error.buf, "     + | constexpr int kThreads = 128;\n");
    edit_result_release(&r);
}

static void test_empty_search_with_a_kernel(void **state)
{
    (void)state;
    edit_result r;
    edit_result_init(&r);
    apply_fixture(kernel, "first_version_blocks.txt", &r);
    assert_failed(&r, EDIT_BLOCKS);
    assert_contains(r.error.buf, "its SEARCH section is empty");
    edit_result_release(&r);
}

static void test_search_without_a_kernel(void **state)
{
    (void)state;
    edit_result r;
    edit_result_init(&r);
    apply_fixture("", "one_block.txt", &r);
    assert_failed(&r, EDIT_BLOCKS);
    assert_contains(r.error.buf, "there is no kernel yet");
    edit_result_release(&r);
}

static void test_malformed_blocks(void **state)
{
    (void)state;
    edit_result r;
    edit_result_init(&r);
    /* cut short after the divider */
    assert_int_equal(edit_apply(kernel, "Fix:\n<<<<<<< SEARCH\nconstexpr int kThreads = 256;\n"
                                        "=======\nconstexpr int kThreads = 1", &r), 0);
    assert_failed(&r, EDIT_BLOCKS);
    assert_contains(r.error.buf, "malformed SEARCH/REPLACE block 1 (line 2 of your reply): it has "
                                 "no '>>>>>>> REPLACE' line (was the reply cut short?)");
    /* no divider */
    assert_int_equal(edit_apply(kernel, "<<<<<<< SEARCH\na\n>>>>>>> REPLACE\n", &r), 0);
    assert_failed(&r, EDIT_BLOCKS);
    assert_contains(r.error.buf, "has no '=======' line before the '>>>>>>> REPLACE' at line 3");
    /* a stray end marker */
    assert_int_equal(edit_apply(kernel, "x\n=======\ny\n>>>>>>> REPLACE\n", &r), 0);
    assert_failed(&r, EDIT_BLOCKS);
    assert_contains(r.error.buf, "the '>>>>>>> REPLACE' line at line 4 of your reply has no "
                                 "'<<<<<<< SEARCH' line before it");
    edit_result_release(&r);
}

static void test_elided_search_hint(void **state)
{
    (void)state;
    static const char reply[] =
        "<<<<<<< SEARCH\n    int64_t f = i % features4;\n    // ...\n    y[i] = v;\n=======\n"
        ">>>>>>> REPLACE\n";
    edit_result r;
    edit_result_init(&r);
    assert_int_equal(edit_apply(kernel, reply, &r), 0);
    assert_failed(&r, EDIT_BLOCKS);
    assert_contains(r.error.buf, "SEARCH line 2 elides text (\"// ...\")");
    edit_result_release(&r);
}

/* ------------------------------------------------------------ caps and reuse */

static void test_error_is_capped_and_keeps_its_footer(void **state)
{
    (void)state;
    strbuf reply = STRBUF_INIT;
    for (int i = 0; i < 12; i++)
        strbuf_addf(&reply, "<<<<<<< SEARCH\n    int64_t f = i %% features%d;\n    y[i] = x[i] * "
                    "w[f] + b[f] + %d;\n=======\n    y[i] = 0;\n>>>>>>> REPLACE\n", i, i);
    edit_result r;
    edit_result_init(&r);
    assert_int_equal(edit_apply(kernel, reply.buf, &r), 0);
    assert_failed(&r, EDIT_BLOCKS);
    assert_int_equal(r.blocks_total, 12);
    assert_true(str_starts_with(r.error.buf, "12 of 12 SEARCH/REPLACE blocks failed.\n"));
    assert_contains(r.error.buf, "Block 1 of 12");
    assert_contains(r.error.buf, "more failed blocks not shown)\n");
    assert_true(str_ends_with(r.error.buf, "in one ```cuda block."));
    strbuf_release(&reply);
    edit_result_release(&r);
}

static void test_large_kernel_report_is_fast_and_short(void **state)
{
    (void)state;
    /* 3000 near-identical lines and a 60-line SEARCH whose comments all differ */
    strbuf big = STRBUF_INIT, reply = STRBUF_INIT;
    for (int i = 0; i < 3000; i++)
        strbuf_addf(&big, "    float acc%d = fmaf(x[%d], w[%d], acc%d);  // step %d, unrolled\n",
                    i, i, i % 7, i - 1, i);
    strbuf_adds(&reply, "<<<<<<< SEARCH\n");
    for (int i = 1000; i < 1060; i++)
        strbuf_addf(&reply, "    float acc%d = fmaf(x[%d], w[%d], acc%d);  // step %d\n", i, i,
                    i % 7, i - 1, i);
    strbuf_adds(&reply, "=======\n>>>>>>> REPLACE\n");
    edit_result r;
    edit_result_init(&r);
    double t0 = now_seconds();
    assert_int_equal(edit_apply(big.buf, reply.buf, &r), 0);
    assert_true(now_seconds() - t0 < 2.0);
    assert_failed(&r, EDIT_BLOCKS);
    assert_contains(r.error.buf, "Nearest text in the kernel: lines 1001-1060 (");
    assert_contains(r.error.buf, "SEARCH line 1 differs from kernel line 1001 at column");
    assert_contains(r.error.buf, "  - and 57 more differences\n");
    assert_true(str_ends_with(r.error.buf, "in one ```cuda block."));
    strbuf_release(&big);
    strbuf_release(&reply);
    edit_result_release(&r);
}

static void test_explanation_is_capped(void **state)
{
    (void)state;
    strbuf reply = STRBUF_INIT;
    for (int i = 0; i < 100; i++)
        strbuf_adds(&reply, "This sentence explains the change at length. ");
    strbuf_adds(&reply, "\n```cuda\nint x;\n```\n");
    edit_result r;
    edit_result_init(&r);
    assert_int_equal(edit_apply(kernel, reply.buf, &r), 0);
    assert_true(r.ok);
    assert_true(r.explanation.len <= 1000);
    assert_true(str_ends_with(r.explanation.buf, "..."));
    strbuf_release(&reply);
    edit_result_release(&r);
}

static void test_result_is_reset_between_calls(void **state)
{
    (void)state;
    edit_result r;
    edit_result_init(&r);
    apply_fixture(kernel, "mixed.txt", &r);
    assert_false(r.ok);
    apply_fixture(kernel, "one_block.txt", &r);
    assert_true(r.ok);
    assert_int_equal(r.error.len, 0);
    assert_int_equal(r.notes.len, 0);
    assert_int_equal(r.blocks_total, 1);
    edit_result_release(&r);
    edit_result_release(&r); /* twice is harmless */
}

static int setup(void **state)
{
    (void)state;
    kernel = fixture("kernel.cu");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    free(kernel);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_whole_file_cuda),
        cmocka_unit_test(test_whole_file_first_version),
        cmocka_unit_test(test_several_fences_takes_cg_forward),
        cmocka_unit_test(test_several_fences_prefers_cg_forward_over_longest),
        cmocka_unit_test(test_prose_only),
        cmocka_unit_test(test_code_in_another_language_only),
        cmocka_unit_test(test_empty_fence),
        cmocka_unit_test(test_one_block),
        cmocka_unit_test(test_three_blocks_in_order),
        cmocka_unit_test(test_trailing_whitespace),
        cmocka_unit_test(test_indentation_only),
        cmocka_unit_test(test_exact_match_beats_indentation_blind_ones),
        cmocka_unit_test(test_crlf_reply),
        cmocka_unit_test(test_markers_of_5_and_9),
        cmocka_unit_test(test_empty_search_on_empty_kernel),
        cmocka_unit_test(test_block_matching_nowhere),
        cmocka_unit_test(test_nearest_text_survives_a_missing_line),
        cmocka_unit_test(test_block_matching_twice),
        cmocka_unit_test(test_good_and_bad_blocks_apply_nothing),
        cmocka_unit_test(test_block_broken_by_an_earlier_block),
        cmocka_unit_test(test_empty_search_with_a_kernel),
        cmocka_unit_test(test_search_without_a_kernel),
        cmocka_unit_test(test_malformed_blocks),
        cmocka_unit_test(test_elided_search_hint),
        cmocka_unit_test(test_error_is_capped_and_keeps_its_footer),
        cmocka_unit_test(test_large_kernel_report_is_fast_and_short),
        cmocka_unit_test(test_explanation_is_capped),
        cmocka_unit_test(test_result_is_reset_between_calls),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
