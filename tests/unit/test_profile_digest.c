/* Unit tests for profile_digest on the project's own fixtures: units_raw.csv (two
 * kernels, several launches, n/a cells) and probe_h200_raw.csv / _details.txt, an H200
 * capture of tests/data/profile/capture/probe.cu (copy, float4 copy, cp.async, mma.sync,
 * shuffle+atomic reduction) made by capture.sh. Numbers checked against the CSV. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile_digest.h"
#include "util.h"

static char *load(const char *rel)
{
    const char *dir = getenv("CUTEGEN_SOURCE_DIR");
    char *path = xasprintf("%s/tests/data/profile/%s", dir ? dir : CUTEGEN_SOURCE_DIR, rel);
    strbuf sb = STRBUF_INIT;
    strbuf_init(&sb);
    if (read_file(path, &sb, 16 << 20) != 0)
        fail_msg("cannot read %s", path);
    free(path);
    return strbuf_detach(&sb);
}

static void digest_of(const char *raw, const char *details, const digest_task *task,
                      profile_digest *d)
{
    char *text = load(raw), *det_text = details ? load(details) : NULL;
    ncu_table t;
    ncu_details det;
    strbuf err = STRBUF_INIT;
    strbuf_init(&err);
    assert_int_equal(ncu_table_parse(text, strlen(text), &t, &err), 0);
    if (det_text)
        assert_int_equal(ncu_details_parse(det_text, &det, &err), 0);
    const gpu_facts *h200 = gpu_lookup("NVIDIA H200", 9, 0);
    if (profile_digest_build(&t, det_text ? &det : NULL, task, h200, d, &err) != 0)
        fail_msg("%s", err.buf);
    ncu_table_release(&t);
    if (det_text)
        ncu_details_release(&det);
    strbuf_release(&err);
    free(text);
    free(det_text);
}

static const digest_kernel *by_name(const profile_digest *d, const char *shortname)
{
    for (size_t i = 0; i < d->nkernels; i++)
        if (!strcmp(d->kernels[i].short_name, shortname))
            return &d->kernels[i];
    fail_msg("no kernel %s", shortname);
    return NULL;
}

static void test_units_fixture(void **state)
{
    (void)state;
    profile_digest d;
    digest_of("units_raw.csv", NULL, NULL, &d);
    assert_int_equal(d.nkernels, 2);
    assert_int_equal(d.launches, 3);
    /* scale: 1500.5 us + 500 us; reduce 2.5 us; sorted by time */
    const digest_kernel *s = &d.kernels[0], *r = &d.kernels[1];
    assert_string_equal(s->short_name, "scale");
    assert_int_equal(s->launches, 2);
    assert_true(fabs(s->time_s - 2000.5e-6) < 1e-12);
    assert_true(fabs(d.total_s - 2003e-6) < 1e-12);
    assert_true(fabs(s->share - 2000.5 / 2003) < 1e-9);
    /* time-weighted memory %: (85.25*1500.5 + 80*500) / 2000.5 -> memory-bound */
    assert_true(fabs(s->mem_pct - (85.25 * 1500.5 + 80 * 500) / 2000.5) < 1e-9);
    assert_string_equal(s->bound, "memory");
    /* DRAM bytes summed: 268.435456 MB + 512 KB + 100 MB */
    assert_true(fabs(s->dram_bytes - (268435456.0 + 512000 + 100e6)) < 1);
    assert_string_equal(r->bound, "compute"); /* SM 70% > 60%, memory 20% */
    assert_true(fabs(r->dram_bytes - 1.5e6) < 1e-6);  /* write is "no data" */
    /* stalls: reduce has long_scoreboard 1, selected 1, wait 2 cycles per issue: wait
     * leads with 2 of 4, selected is left out */
    assert_string_equal(r->stalls[0].name, "wait");
    assert_true(fabs(r->stalls[0].share - 0.5) < 1e-9);
    assert_int_equal(r->nstalls, 2);
    assert_true(isnan(s->flops)); /* no FP counters, no FMA-pipe data: nothing claimed */
    strbuf text = STRBUF_INIT;
    strbuf_init(&text);
    profile_digest_text(&d, 1, &text);
    assert_non_null(strstr(text.buf, "- 1 more kernels"));
    assert_null(strstr(text.buf, "FLOP"));
    assert_null(strstr(text.buf, "nan"));
    strbuf_release(&text);
    profile_digest_release(&d);
}

static void test_probe_capture(void **state)
{
    (void)state;
    profile_digest d;
    digest_of("probe_h200_raw.csv", "probe_h200_details.txt", NULL, &d);
    assert_int_equal(d.nkernels, 5);
    const digest_kernel *copy = by_name(&d, "copy_kernel");
    const digest_kernel *copy4 = by_name(&d, "copy4_kernel");
    const digest_kernel *cpa = by_name(&d, "cpasync_kernel");
    const digest_kernel *mma = by_name(&d, "mma_kernel");
    const digest_kernel *red = by_name(&d, "reduce_kernel");
    /* durations from the CSV (us): 169.312, 131.52, 126.144, 57.92, 114.112 */
    assert_true(fabs(copy->time_s - 169.312e-6) < 1e-12);
    assert_true(fabs(mma->time_s - 57.92e-6) < 1e-12);
    /* copy4: 268.446720 MB read + 246.654208 MB written in 131.52 us = 3.92 TB/s */
    assert_true(fabs(copy4->dram_bytes - (268.446720e6 + 246.654208e6)) < 1);
    assert_true(fabs(copy4->dram_bytes / copy4->time_s - 3.9165e12) < 0.01e12);
    assert_string_equal(copy4->bound, "memory");
    /* counted FP work: copy does 64 Mi FADDs (x*2 compiled to x+x) */
    assert_string_equal(copy->flops_source, "sass");
    assert_true(copy->flops == 67108864.0);
    /* cp.async kernel: 78,205 shared load bank conflicts, 4 KB static smem, LDGSTS */
    assert_true(cpa->bank_conflicts == 78205);
    assert_true(isnan(cpa->ldgsts_requests)); /* not collected in this capture */
    /* mma: tensor pipe busy, 12.4% achieved occupancy of 100% theoretical; excess sectors */
    assert_true(mma->tensor_pipe_pct > 40);
    assert_true(mma->excess_sectors_bytes > 100e3);
    assert_true(copy->tensor_pipe_pct == 0);
    /* copy: 4 sectors per 4-byte warp load, copy4: 16 per 16-byte warp load */
    assert_true(copy->ld_sectors_per_req == 4);
    assert_true(copy4->ld_sectors_per_req == 16);
    assert_true(red->local_bytes == 0);
    strbuf text = STRBUF_INIT;
    strbuf_init(&text);
    profile_digest_text(&d, 0, &text);
    if (getenv("CUTEGEN_SHOW_DIGEST"))
        fprintf(stderr, "%s(%zu chars)\n", text.buf, text.len);
    assert_non_null(strstr(text.buf, "smem bank conflicts 78205"));
    assert_null(strstr(text.buf, "cp.async"));
    assert_null(strstr(text.buf, "nan"));
    json_t *j = profile_digest_json(&d);
    char *dump = json_dumps(j, JSON_COMPACT);
    assert_non_null(strstr(dump, "\"bank_conflicts\":78205"));
    free(dump);
    json_decref(j);
    strbuf_release(&text);
    profile_digest_release(&d);
}

static void test_empty(void **state)
{
    (void)state;
    const char *hdr = "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"\",\"\",\"ns\"\n";
    ncu_table t;
    strbuf err = STRBUF_INIT;
    strbuf_init(&err);
    assert_int_equal(ncu_table_parse(hdr, strlen(hdr), &t, &err), 0);
    profile_digest d;
    assert_int_equal(profile_digest_build(&t, NULL, NULL, NULL, &d, &err), -1);
    assert_non_null(strstr(err.buf, "no kernel launch"));
    ncu_table_release(&t);
    strbuf_release(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_units_fixture),
        cmocka_unit_test(test_probe_capture),
        cmocka_unit_test(test_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
